"""Deferred unwinding: a stack that meets a file whose unwind table is not
made yet is copied by the BPF program and unwound by the loader once the
table is there (bpf/unwind_defer.h, src/loader/unwind/deferred_unwind.c).

- deferred.same_stacks: the test hook MEMTRACE_DEFER_ALL=1 sends every
  stack through the loader's walk; the stacks of the same programs
  (without frame pointers: a chain of calls, a qsort callback, a
  constructor, a thread, a dlopened library, operator new) must be the
  BPF walk's, frame for frame, with the same totals.
- deferred.same_deep, deferred.same_too_deep: a recursion 500 frames deep
  is as whole from its copy as from the BPF walk; one of 1,500 is cut at
  the same depth limit (1,024 frames) both ways.
- deferred.dlopen_fresh: six libraries built here (new files, new build
  ids), each dlopened and allocated through at once: every first stack
  whole, none truncated.
- deferred.copy_lost: a ring buffer of a few copies (MEMTRACE_DEFER_RING),
  read on the loader's thread (MEMTRACE_DEFER_THREAD=0), held 0.5 s at
  its first copy (a reader thread can keep even such a ring from
  filling), and every stack copied: the copies that do not fit are counted, and counted
  as truncated stacks; nothing else is lost.
"""

import os
import re
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test


def _env(**kw):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in kw.items()})
    return env


def traced(prog, args=(), env=None, input_text=None, extra=()):
    """memtrace -v --raw=F --text EXTRA -- PROG ARGS: (result, stacks, details)."""
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "stacks.raw")
        res = mtlib.run_memtrace(["-v", "--raw=" + raw, "--text", "-n", "5"] + list(extra) + ["--",
                                  mtlib.prog_path(prog)] + list(args), env=env,
                                 input_text=input_text)
        det = "command: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
            " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 8), mtlib.tail(res.stdout, 30))
        check_eq(res.rc, 0, "exit status", det)
        with open(raw, encoding="utf-8") as f:
            text = f.read()
    return res, parse_raw(text, det), det + "\nraw:\n" + mtlib.tail(text, 60)


_DEFERRED = re.compile(r"deferred stacks: (\d+) copies, (\d+) unwound \((\d+) cut short\), "
                       r"(\d+) never unwound, (\d+) lost")


def deferred_of(res, details):
    """(copies, unwound, cut short, never unwound, lost) of -v's line."""
    m = _DEFERRED.search(res.stderr)
    check(m is not None, "no 'deferred stacks' line with -v", details)
    return tuple(int(g) for g in m.groups())


def truncated_of(text):
    m = re.search(r"^truncated stacks: (\d+)(?: \(.*\))?$", text, re.M)
    return int(m.group(1)) if m else 0


def shape(stacks):
    """Every stack as its totals and its frames by file and offset, sorted
    (addresses differ from run to run, offsets in files do not)."""
    out = []
    for st in stacks:
        ips = tuple((ip.module, ip.offset) for ip in st.ips)
        out.append((st.alloc_bytes, st.alloc_objects, st.inuse_bytes, st.inuse_objects, ips))
    return sorted(out)


def _same_stacks(prog, args):
    res0, st0, d0 = traced(prog, args)
    res1, st1, d1 = traced(prog, args, env=_env(MEMTRACE_DEFER_ALL=1))
    d = "BPF walk:\n%s\n\nall deferred:\n%s" % (d0, d1)
    copies, unwound, cut, never, lost = deferred_of(res1, d)
    check(copies > 0, "no stack was copied with MEMTRACE_DEFER_ALL=1", d)
    check_eq((unwound, cut, never, lost), (copies, 0, 0, 0),
             "copies unwound, cut short, never unwound, lost", d)
    a, b = shape(st0), shape(st1)
    only0 = [s for s in a if s not in b]
    only1 = [s for s in b if s not in a]
    check(not only0 and not only1,
          "stacks differ: %d only in the BPF walk's, %d only in the deferred ones: %s / %s"
          % (len(only0), len(only1), only0[:2], only1[:2]), d)
    check_eq(truncated_of(res1.stdout), truncated_of(res0.stdout), "truncated stacks", d)
    check(len(a) >= 3, "too few stacks to compare: %d" % len(a), d)


@test("deferred.same_stacks")
def _same_nofp():
    _same_stacks("nofp", [mtlib.prog_path("libnofp_plugin.so")])


@test("deferred.same_stacks_cxx")
def _same_cxx():
    # operator new's frames are left out at the top (MT_UW_SKIP rows): the
    # loader's walk must do as the BPF one.
    _same_stacks("nofp_cxx", [])


def _same_deep(depth, frames, truncated):
    """cut_stacks deep DEPTH, walked by BPF and all deferred: the block's
    stack has DEPTH deep_rec frames (FRAMES: exactly that many frames, or
    None: to main), TRUNCATED stacks cut short."""
    res0, st0, d0 = traced("cut_stacks", ["deep", str(depth)])
    res1, st1, d1 = traced("cut_stacks", ["deep", str(depth)], env=_env(MEMTRACE_DEFER_ALL=1))
    d = "BPF walk:\n%s\n\nall deferred:\n%s" % (d0, d1)
    copies, unwound, cut, never, lost = deferred_of(res1, d)
    check(copies > 0, "no stack was copied with MEMTRACE_DEFER_ALL=1", d)
    check_eq((unwound, never, lost), (copies, 0, 0), "copies unwound, never unwound, lost", d)
    for st in (st0, st1):
        hits = [s for s in st if s.inuse_bytes == 777]
        check_eq(len(hits), 1, "stacks holding the block of 777 bytes", d)
        f = [fr.function.split("(", 1)[0] for fr in hits[0].frames]
        if frames is None:
            check_eq(f.count("deep_rec"), depth, "deep_rec frames", d)
            check("main" in f, "the deep stack does not reach main", d)
        else:
            check_eq(len(hits[0].ips), frames, "frames of the deep stack", d)
    a, b = shape(st0), shape(st1)
    check(a == b, "stacks differ: %d only in the BPF walk's, %d only in the deferred ones"
          % (len([s for s in a if s not in b]), len([s for s in b if s not in a])), d)
    check_eq(truncated_of(res0.stdout), truncated, "truncated stacks of the BPF walk", d)
    # The same reasons too ("depth" past the limit).
    line = re.compile(r"^truncated stacks: .*$", re.M)
    check_eq(line.findall(res1.stdout), line.findall(res0.stdout),
             "the deferred walk's truncated stacks line against the BPF walk's", d)


@test("deferred.same_deep")
def _deep():
    """A recursion 500 frames deep (some 8 KiB of stack) unwound from its
    copy: the very stack the BPF walk gives, every frame to _start."""
    _same_deep(500, None, 0)


@test("deferred.same_too_deep")
def _too_deep():
    """1,500 frames: the loader's walk stops at the depth limit, as the
    BPF walk does (1,024 frames), counted truncated for its depth."""
    _same_deep(1500, 1024, 1)


FRESH_LIBS = 6


def build_fresh(d, i, tag):
    """A library of its own (new file, new build id): nofp_plugin.c and a
    tag of this run's."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs",
                       "nofp_plugin.c")
    tag_c = os.path.join(d, "tag%d.c" % i)
    with open(tag_c, "w", encoding="utf-8") as f:
        f.write('const char fresh_tag[] = "%s-%d";\n' % (tag, i))
    lib = os.path.join(d, "libfresh%d.so" % i)
    res = mtlib.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-fPIC", "-shared",
                     "-Wl,--build-id", "-o", lib, src, tag_c])
    check_eq(res.rc, 0, "gcc " + lib, res.stderr)
    return lib


@test("deferred.dlopen_fresh")
def _dlopen_fresh():
    # --no-follow: no hold at ld.so's hook (following, a dlopen holds the
    # process until the new files' tables are made): nothing but the
    # deferred walk can make these first stacks whole.
    tag = "%d-%d" % (os.getpid(), int.from_bytes(os.urandom(4), "little"))
    with tempfile.TemporaryDirectory() as d:
        libs = [build_fresh(d, i, tag) for i in range(FRESH_LIBS)]
        res, stacks, det = traced("dlopen_soon", libs, extra=["--no-follow"])
    check_eq(truncated_of(res.stdout), 0, "truncated stacks", det)
    for i in range(FRESH_LIBS):
        hits = [s for s in stacks if s.inuse_bytes == 1000 + i and s.inuse_objects == 1]
        check_eq(len(hits), 1, "stacks holding the block of %d bytes" % (1000 + i), det)
        funcs = [f.function for f in hits[0].frames]
        want = ["plugin_inner", "plugin_outer", "call_soon", "main"]
        got = [f for f in funcs if f in want]
        check_eq(got, want, "the first stack through libfresh%d.so" % i, det)
        check(funcs and funcs[-1] == "_start", "stack of %d bytes does not reach _start: %s"
              % (1000 + i, funcs), det)
        check_eq(hits[0].ips[0].module, "libfresh%d.so" % i, "the leaf's file", det)


@test("deferred.copy_lost")
def _copy_lost():
    # A ring buffer of a few copies: most of many's 3,000 quick
    # allocations (each copied) find it full.
    res, stacks, det = traced("many", env=_env(MEMTRACE_DEFER_ALL=1, MEMTRACE_DEFER_RING=65536,
                                       MEMTRACE_DEFER_THREAD=0, MEMTRACE_TEST_LOADER_STALL_MS=500),
                              input_text="3000 50\nq\n")
    copies, unwound, cut, never, lost = deferred_of(res, det)
    check(lost > 0, "no copy lost with a ring buffer of a few copies", det)
    check(copies > 0, "no copy taken", det)
    check_eq(never, 0, "copies never unwound", det)
    check(truncated_of(res.stdout) >= lost,
          "truncated stacks %d < copies lost %d" % (truncated_of(res.stdout), lost), det)
    # many's own lines ("ready PID", "ok") come before the report.
    report = "\n".join(l for l in res.stdout.splitlines() if l not in ("ok",)
                       and not l.startswith("ready "))
    rep = mtlib.parse_report(report)
    check_eq(rep.drops[0], 0, "drops", det)
    check_eq(sum(s.inuse_objects for s in stacks if s.inuse_bytes), 3000,
             "blocks in use (every allocation kept, its stack cut short or not)", det)
