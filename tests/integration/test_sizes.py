"""The size histogram of the text report ("Allocated by size class:"): what
each program allocates, by power-of-two class of the size asked for, from
the sizes its source asks for (programs.ALLOC_SIZES), class by class,
objects and bytes exact:

  sizes.hist.PROG     -- PROG: every class of its allocations, nothing else;
                      sizes.c sits on the classes' edges (0, 1, 2, 3, 4,
                      2^10 - 1, 2^10, 2^10 + 1, 2^30 - 1, 2^30)
  sizes.pprof         --pprof, read back by memtrace report: the same
                      classes; --base of itself: none
  sizes.sampled       -s: the classes add up to the (estimated) totals,
                      and the two 1 GiB blocks, sampled for sure, are one
                      object each in their class
  sizes.mmap          --mmap: the program's own mappings in a histogram of
                      their own, glibc's mappings inside malloc as heap
  sizes.not_recorded  a Go profile, or a profile narrowed to one process:
                      "not recorded", never zeros
"""

import os

import mtlib
from mtlib import check, check_eq, test
from programs import ALLOC_SIZES, BY_NAME, MMAPPER_HEAP_SIZES, MMAPPER_MMAP_SIZES, SIZES, totals

GOHEAP = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "heap.pb.gz")


def make_hist_test(prog):
    @test("sizes.hist." + prog)
    def _t():
        p = SIZES if prog == SIZES.name else BY_NAME[prog]
        res, rep = mtlib.trace(prog)
        d = mtlib.tail(rep.text, 30)
        check_eq(res.rc, p.exit_status, "exit status", d)
        t = totals(p)  # valgrind's too (test_ground_truth)
        check_eq(rep.allocated, (t["alloc_space"], t["alloc_objects"]), "allocated", d)
        check_eq(rep.sizes, mtlib.size_histogram(ALLOC_SIZES[prog]), "%s: size classes" % prog, d)
        check_eq(rep.mmap_sizes, None, "a --mmap histogram without --mmap", d)


for _prog in ALLOC_SIZES:
    make_hist_test(_prog)


def report_file(args, what):
    res = mtlib.run_memtrace(["report"] + args)
    d = "command: %s\nstderr:\n%s\nstdout:\n%s" % (" ".join(res.argv), mtlib.tail(res.stderr),
                                                    mtlib.tail(res.stdout, 30))
    check_eq(res.rc, 0, "%s: exit status" % what, d)
    return mtlib.parse_report(res.stdout), d


@test("sizes.pprof")
def _pprof():
    pb = os.path.join(mtlib.TMPDIR, "sizes.pb.gz")
    res, rep = mtlib.trace("sizes", extra=("--pprof", pb))
    want = mtlib.size_histogram(ALLOC_SIZES["sizes"])
    check_eq(rep.sizes, want, "size classes of the trace", mtlib.tail(rep.text, 30))
    back, d = report_file([pb, "--unit", "B"], "report of the pprof file")
    check_eq(back.sizes, want, "size classes read back from --pprof", d)
    # The section itself, line for line.
    sect = lambda text: text[text.index("Allocated by size class"):]
    check_eq(sect(back.text), sect(rep.text), "the size section of the report read back", d)
    diff, d = report_file([pb, "--base", pb, "--unit", "B"], "report --base of itself")
    check_eq(diff.sizes, {}, "size classes of a profile less itself", d)


@test("sizes.sampled")
def _sampled():
    res, rep = mtlib.trace("sizes", extra=("-s", "64K"))
    d = mtlib.tail(rep.text, 40)
    check(rep.sampling is not None, "no sampling line with -s", d)
    check(rep.sizes, "no size classes", d)
    objects = sum(o for o, _ in rep.sizes.values())
    nbytes = sum(b for _, b in rep.sizes.values())
    check_eq((nbytes, objects), rep.allocated, "size classes' sum against allocated (estimates)", d)
    # 1 GiB at one sample per 64 KiB: sampled with probability 1 - e^-16384,
    # and standing for 1/p = 1 object.
    for size in (2 ** 30 - 1, 2 ** 30):
        cls = mtlib.size_class(size)
        check(cls in rep.sizes, "no class %s" % cls, d)
        o, b = rep.sizes[cls]
        check_eq(o, 1, "objects of class %s" % cls, d)
        check(abs(b - size) <= size // 100000, "bytes of class %s: %d for %d" % (cls, b, size), d)


@test("sizes.mmap")
def _mmap():
    res, rep = mtlib.trace("mmapper", extra=("--mmap",))
    d = mtlib.tail(rep.text, 30)
    check_eq(res.rc, 0, "exit status", d)
    check_eq(rep.sizes, mtlib.size_histogram(MMAPPER_HEAP_SIZES), "heap size classes", d)
    check_eq(rep.mmap_sizes, mtlib.size_histogram(MMAPPER_MMAP_SIZES), "mmap size classes", d)


@test("sizes.not_recorded")
def _not_recorded():
    rep, d = report_file([GOHEAP], "report of Go's heap profile")
    check_eq(rep.sizes, mtlib.NOT_RECORDED, "size classes of Go's profile", d)
    # One process of a trace: the histogram counts every process.
    pb = os.path.join(mtlib.TMPDIR, "sizes.one.pb.gz")
    _, live = mtlib.trace("leaks", extra=("--pprof", pb))
    check(live.sizes, "no size classes in the trace", live.text)
    rep, d = report_file([pb, "--unit", "B", "-p", str(live.target_pid)], "report -p PID")
    check_eq(rep.sizes, mtlib.NOT_RECORDED, "size classes of one process", d)
    rep, d = report_file([pb, "--unit", "B"], "report of the whole profile")
    check_eq(rep.sizes, live.sizes, "size classes read back", d)
