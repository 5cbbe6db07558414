"""memtrace report on the heap profiles other allocators write, made here
by the real allocators running tests/progs/leaks.c:

  formats.tcmalloc   Debian's libtcmalloc, HEAPPROFILE (every allocation
                     recorded): flat per function, for the four metrics,
                     = programs.py, and = a live memtrace trace of the
                     program under the same allocator
  formats.jemalloc   Debian's libjemalloc (built with profiling), MALLOC_CONF
                     prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0
                     (every allocation sampled): objects per function =
                     programs.py and the live trace; bytes = the sizes asked
                     for rounded up to jemalloc's size classes (jemalloc
                     records what it allocated)
  formats.bad.*      damaged text profiles: one line of error, exit 1

The allocator's profile and the live trace come from two runs: in one run
memtrace's return probes would replace the return address the allocator's
own unwinder sees (it would read the uprobe trampoline, 0x7fffffffe000).
"""

import glob
import os

import mtlib
from mtlib import check, check_eq, test
from programs import PROGRAMS

LEAKS = next(p for p in PROGRAMS if p.name == "leaks")
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
METRICS = ("inuse_space", "inuse_objects", "alloc_space", "alloc_objects")

# The blocks each function of leaks.c asks for (leaks.c; programs.py's
# comments): (in use, allocated), each a list of request sizes.
LEAKS_SIZES = {
    "leak_one": ([100] * 3, [100] * 3),
    "leak_three": ([1000] * 2, [1000] * 2),
    "leak_five": ([77] * 5, [77] * 5),
    "calloc_leak": ([240] * 2, [240] * 2),
    "zero_leak": ([0], [0]),
    "churn": ([], [64] * 10),
    "half_freed": ([256] * 2, [256] * 4),
}


def je_class(n):
    """jemalloc 5's size class of a request of N bytes (16-byte quantum,
    four classes per doubling), up to a page."""
    if n <= 8:
        return 8
    if n <= 128:
        return (n + 15) // 16 * 16
    lg = (n - 1).bit_length() - 1
    delta = 1 << (lg - 2)
    return (n + delta - 1) // delta * delta


def report(path, metric):
    res = mtlib.run_memtrace(["report", path, "--unit", "B", "-n", "1000", "--metric", metric])
    check_eq(res.rc, 0, "memtrace report %s" % path, mtlib.tail(res.stderr))
    return mtlib.parse_report(res.stdout)


def flats(rep):
    return {f: (rep.row(f).flat if rep.row(f) else 0) for f in LEAKS.funcs}


def live(preload, metric):
    out = os.path.join(mtlib.TMPDIR, "formats.live.%s.%s.txt" % (os.path.basename(preload), metric))
    res = mtlib.run_memtrace(["--unit", "B", "-n", "1000", "--metric", metric, "-o", out, "--",
                              mtlib.prog_path("leaks")], env=dict(os.environ, LD_PRELOAD=preload))
    check_eq(res.rc, 0, "memtrace -- leaks with LD_PRELOAD=%s" % preload, mtlib.tail(res.stderr))
    with open(out) as f:
        return mtlib.parse_report(f.read())


def run_leaks(env):
    res = mtlib.run([mtlib.prog_path("leaks")], env=dict(os.environ, **env))
    check_eq(res.rc, 0, "leaks with %s" % env, res.stderr)


@test("formats.tcmalloc", needs=("memtrace", "bpf"))
def _tcmalloc():
    check(os.path.exists(TCMALLOC), "%s is missing (libgoogle-perftools-dev)" % TCMALLOC)
    prefix = os.path.join(mtlib.TMPDIR, "tc")
    run_leaks({"LD_PRELOAD": TCMALLOC, "HEAPPROFILE": prefix})
    files = sorted(glob.glob(prefix + ".*.heap"))
    check_eq(len(files), 1, "heap profiles written by tcmalloc")
    for metric in METRICS:
        rep = report(files[0], metric)
        check(rep.allocator.startswith("tcmalloc"), "allocator line %r" % rep.allocator, rep.text[:600])
        check(rep.events is None and rep.drops is None, "tcmalloc records no events or drops", rep.text[:600])
        want = {f: getattr(v, metric) for f, v in LEAKS.funcs.items()}
        check_eq(flats(rep), want, "%s per function from tcmalloc's profile vs programs.py" % metric,
                 mtlib.tail(rep.text, 40))
        check_eq(flats(rep), flats(live(TCMALLOC, metric)),
                 "%s per function: tcmalloc's profile vs a live memtrace trace" % metric)


@test("formats.jemalloc", needs=("memtrace", "bpf"))
def _jemalloc():
    check(os.path.exists(JEMALLOC), "%s is missing (libjemalloc-dev)" % JEMALLOC)
    prefix = os.path.join(mtlib.TMPDIR, "je")
    run_leaks({"LD_PRELOAD": JEMALLOC, "MALLOC_CONF": "prof:true,prof_final:true,prof_accum:true,"
               "lg_prof_sample:0,prof_prefix:" + prefix})
    files = sorted(glob.glob(prefix + ".*.heap"))
    check_eq(len(files), 1, "heap profiles written by jemalloc (is Debian's libjemalloc built with --enable-prof?)")
    for metric in METRICS:
        rep = report(files[0], metric)
        check(rep.allocator.startswith("jemalloc"), "allocator line %r" % rep.allocator, rep.text[:600])
        inuse = metric.startswith("inuse")
        if metric.endswith("objects"):
            want = {f: getattr(v, metric) for f, v in LEAKS.funcs.items()}
            check_eq(flats(rep), flats(live(JEMALLOC, metric)),
                     "%s per function: jemalloc's profile vs a live memtrace trace" % metric)
        else:
            want = {f: sum(je_class(n) for n in LEAKS_SIZES[f][0 if inuse else 1]) for f in LEAKS.funcs}
        check_eq(flats(rep), want, "%s per function from jemalloc's profile" % metric,
                 mtlib.tail(rep.text, 40))


def make_bad_test(name, text, mention):
    @test("formats.bad." + name, needs=("memtrace",))
    def _t():
        path = os.path.join(mtlib.TMPDIR, "bad.%s.heap" % name)
        with open(path, "w") as f:
            f.write(text)
        res = mtlib.run_memtrace(["report", path])
        check_eq(res.rc, 1, "exit status of memtrace report on %r" % text[:60], res.stderr)
        mtlib.check_one_line_error(res, "memtrace report " + name, (mention,))


make_bad_test("tc_header", "heap profile: 1: 2 [3: 4] @ growthz\n", "line 1")
make_bad_test("tc_record", "heap profile: 1: 2 [3: 4] @ heapprofile\n   1: x [1: 2] @ 0x1\n", "line 2")
make_bad_test("tc_negative", "heap profile: 1: 2 [3: 4] @ heapprofile\n  -1: 5 [1: 5] @ 0x1\n", "line 2")
make_bad_test("tc_inuse_over_alloc", "heap profile: 1: 2 [3: 4] @ heapprofile\n  2: 50 [1: 5] @ 0x1\n",
              "line 2")
make_bad_test("tc_address", "heap profile: 1: 2 [3: 4] @ heapprofile\n  1: 5 [1: 5] @ 0xzz\n", "line 2")
make_bad_test("je_period", "heap_v2/0\n", "line 1")
make_bad_test("je_totals", "heap_v2/1\n  t*: 1: 8 [0: 0]\n@ 0x10 0x20\n  t*: one\n", "line 4")
make_bad_test("je_stack", "heap_v2/1\n@ 0x10 nothex\n", "line 2")


# Go: tests/data/goheap/main.go, built here (golang-go), run with
# MemProfileRate = 1 (every allocation), its profile written as text.
GO_FUNCS = {  # function: (inuse_space, inuse_objects, alloc_space, alloc_objects)
    "main.allocLarge": (1 << 20, 1, 1 << 20, 1),
    "main.newBlock": (100 * 64, 100, 100 * 64, 100),   # inlined into allocSmall
    "main.allocTemp": (0, 0, 50 * 128, 50),
}


@test("formats.go_debug1", needs=("memtrace",))
def _go_debug1():
    from test_outputs import go_bin, go_env
    go = go_bin()
    src = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "main.go")
    exe = os.path.join(mtlib.TMPDIR, "goheap")
    res = mtlib.run([go, "build", "-trimpath", "-o", exe, src], env=go_env(), timeout=300)
    check_eq(res.rc, 0, "go build goheap", mtlib.tail(res.stderr))
    out = os.path.join(mtlib.TMPDIR, "goheap.txt")
    res = mtlib.run([exe, "-debug1", out])
    check_eq(res.rc, 0, "goheap -debug1", res.stderr)
    for i, metric in enumerate(METRICS):
        rep = report(out, metric)
        check(rep.allocator.startswith("go "), "allocator line %r" % rep.allocator, rep.text[:600])
        got = {f: (rep.row(f).flat if rep.row(f) else 0) for f in GO_FUNCS}
        check_eq(got, {f: v[i] for f, v in GO_FUNCS.items()}, "%s per function of Go's text profile" % metric,
                 mtlib.tail(rep.text, 30))


# ---------------------------------------------------------------- --base

ALIGNED = next(p for p in PROGRAMS if p.name == "aligned")


def tcmalloc_leaks_profile():
    prefix = os.path.join(mtlib.TMPDIR, "tcbase")
    files = sorted(glob.glob(prefix + ".*.heap"))
    if not files:
        run_leaks({"LD_PRELOAD": TCMALLOC, "HEAPPROFILE": prefix})
        files = sorted(glob.glob(prefix + ".*.heap"))
    check_eq(len(files), 1, "heap profiles written by tcmalloc")
    return files[0]


def memtrace_profile(prog):
    out = os.path.join(mtlib.TMPDIR, "base.%s.pb.gz" % prog)
    if not os.path.exists(out):
        res = mtlib.run_memtrace(["--pprof", out, "--", mtlib.prog_path(prog)])
        check_eq(res.rc, 0, "memtrace --pprof -- %s" % prog, mtlib.tail(res.stderr))
    return out


def diff_report(path, base, metric):
    res = mtlib.run_memtrace(["report", path, "--base", base, "--unit", "B", "-n", "1000", "--metric", metric])
    check_eq(res.rc, 0, "memtrace report %s --base %s" % (path, base), mtlib.tail(res.stderr))
    return mtlib.parse_report(res.stdout)


@test("formats.base.cross", needs=("memtrace", "bpf"))
def _base_cross():
    """tcmalloc's profile of leaks less memtrace's trace of aligned: leaks'
    functions keep their numbers, aligned's are negated; less memtrace's
    trace of leaks itself: every function 0."""
    tc = tcmalloc_leaks_profile()
    for metric in METRICS:
        rep = diff_report(tc, memtrace_profile("aligned"), metric)
        want = {f: getattr(v, metric) for f, v in LEAKS.funcs.items()}
        want.update({f: -getattr(v, metric) for f, v in ALIGNED.funcs.items()})
        got = {f: (rep.row(f).flat if rep.row(f) else 0) for f in want}
        check_eq(got, want, "%s per function, tcmalloc(leaks) --base memtrace(aligned)" % metric,
                 mtlib.tail(rep.text, 40))
        rep = diff_report(tc, memtrace_profile("leaks"), metric)
        got = {f: (rep.row(f).flat if rep.row(f) else 0) for f in LEAKS.funcs}
        check_eq(got, {f: 0 for f in LEAKS.funcs},
                 "%s per function, tcmalloc(leaks) --base memtrace(leaks)" % metric, mtlib.tail(rep.text, 40))
        check("less base" in rep.target, "target %r does not say what was subtracted" % rep.target)


@test("formats.base.outputs", needs=("memtrace", "bpf"))
def _base_outputs():
    """Every output format of a diff: folded stacks and a pprof profile that
    go tool pprof reads, with the same (negative) numbers."""
    base = memtrace_profile("aligned")
    d = os.path.join(mtlib.TMPDIR, "diff")
    os.makedirs(d, exist_ok=True)
    res = mtlib.run_memtrace(["report", memtrace_profile("leaks"), "--base", base, "--unit", "B", "-n", "1000",
                              "--text=" + os.path.join(d, "t.txt"), "--folded=" + os.path.join(d, "f.folded"),
                              "--pprof", os.path.join(d, "p.pb.gz")])
    check_eq(res.rc, 0, "memtrace report --base with every output", mtlib.tail(res.stderr))
    folded = {}
    with open(os.path.join(d, "f.folded")) as f:
        for line in f:
            stack, _, v = line.rstrip("\n").rpartition(" ")
            leaf = stack.split(";")[-1]
            folded[leaf] = folded.get(leaf, 0) + int(v)
    want = {f: v.inuse_space for f, v in LEAKS.funcs.items() if v.inuse_space}
    want.update({f: -v.inuse_space for f, v in ALIGNED.funcs.items() if v.inuse_space})
    got = {f: sum(v for k, v in folded.items() if mtlib.same_function(k, f)) for f in want}
    check_eq(got, want, "folded stacks' leaf totals of the diff")
    rep = report(os.path.join(d, "p.pb.gz"), "inuse_space")
    got = {f: (rep.row(f).flat if rep.row(f) else 0) for f in want}
    check_eq(got, want, "the diff's pprof profile read back")


@test("formats.budget", needs=("memtrace",))
def _budget():
    """A text profile is read within the budget --max-memory sets: about 16
    times its size over 64 MiB (doc/formats.md, Saved profiles)."""
    path = os.path.join(mtlib.TMPDIR, "budget.heap")
    rec = "     1:     8 [     1:     8] @ 0x1000 0x2000\n"
    with open(path, "w") as f:
        f.write("heap profile: 1: 8 [1: 8] @ heapprofile\n" + rec * 50000)  # 2.3 MB
    res = mtlib.run_memtrace(["report", path, "--max-memory", "64M"])
    mtlib.check_one_line_error(res, "a 2.3 MB text profile with --max-memory 64M", ("--max-memory",))
    res = mtlib.run_memtrace(["report", path, "--max-memory", "128M", "--unit", "B"])
    check_eq(res.rc, 0, "the same with --max-memory 128M", res.stderr)
    rep = mtlib.parse_report(res.stdout)
    check_eq(rep.inuse, (400000, 50000), "in use of 50000 records of 8 bytes")
