"""memtrace with allocators other than glibc's malloc: jemalloc preloaded
(and its mallocx/rallocx/xallocx/dallocx/sdallocx), tcmalloc and
tcmalloc_minimal linked in (and their tc_* names), a static executable
that defines malloc itself, and C++ operator new/delete in all their forms
(libstdc++'s, jemalloc's, tcmalloc's); -p on a jemalloc program;
--allocator and --symbol-prefix.

Programs: tests/progs/alloc_*.c, alloc_cxx.cpp (built by
tests/progs/allocators.mk).  What each of their functions allocates is
written once, below, from reading the sources.

The header totals of these programs are more than the sum of their
functions: the allocator's start-up code allocates before main (libstdc++'s
emergency exception pool, loaded with libjemalloc.so.2 and libtcmalloc.so.4
since both are C++; tcmalloc's own initialisation; static glibc's _dl_*
set-up).  So the per-function numbers are checked exactly, and the header
is checked through `main`: its cum is exactly the program's totals (every
allocation the program makes is under main, none of the start-up ones is).
alloc_cxx with glibc is also checked against valgrind, which sees the same
start-up allocation.
"""

import collections
import functools
import os

import mtlib
from mtlib import check, check_eq, test

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
METRICS = ("inuse_space", "inuse_objects", "alloc_space", "alloc_objects")
EXIT_WAIT = 30

# A function's flat numbers: what it allocated itself (it called the allocator).
Fn = collections.namedtuple("Fn", "inuse_space inuse_objects alloc_space alloc_objects")
Z = Fn(0, 0, 0, 0)  # allocates nothing itself (only calls a function that does)

# Blocks still in use at exit, by leaf function: the markers of the lines
# that allocated them (one stack each) and the callers below it, leaf
# first, as (function, marker of the call line).
Leak = collections.namedtuple("Leak", "function markers callers inuse_space inuse_objects")

# key: test names; binary: build/tests/progs/BINARY; preload: LD_PRELOAD;
# kind/lib: the header's "allocator: KIND ...LIB..."; cxx: an object the
# header must name after "C++ new/delete in", or None; calls: allocator
# calls the program makes (free(NULL) included where the probe is at free's
# first instruction: jemalloc), or None when the start-up
# code's calls cannot be told from its allocations (see check_events).
Prog = collections.namedtuple("Prog", "key binary src preload kind lib cxx funcs leaks calls")

# ---------------------------------------------------------------- programs

# alloc_jemalloc.c under LD_PRELOAD of jemalloc.
JEMALLOC_FUNCS = {
    "je_use_malloc": Fn(200, 2, 300, 3),       # 3 x malloc(100), 1 freed
    "je_use_calloc": Fn(240, 1, 240, 1),       # calloc(10, 24)
    "je_use_realloc": Fn(40, 1, 1136, 4),      # malloc 64 -> realloc 1000 -> 40; malloc 32 freed
    "je_use_aligned": Fn(456, 2, 456, 2),      # posix_memalign(64, 200), aligned_alloc(128, 256)
    "je_use_mallocx": Fn(800, 2, 870, 3),      # mallocx 300, 500 kept; 70 dallocx'ed
    "je_use_rallocx": Fn(20, 1, 5070, 3),      # mallocx 50 -> rallocx 5000 -> 20
    # mallocx 4000, 100, 200; xallocx 4000 -> 1000 and 100 -> 110 in place
    # (each a free and an allocation); 200 not grown, sdallocx'ed.
    "je_use_xallocx": Fn(1110, 2, 4000 + 100 + 200 + 1000 + 110, 5),
    "je_use_sdallocx": Fn(0, 0, 4 * 128 + 64, 5),  # 4 x mallocx(128) sdallocx'ed; malloc 64 dallocx'ed
    "je_leak_deep": Fn(999, 3, 999, 3),        # 3 x mallocx(333)
    "je_deep_b": Z,
    "je_deep_a": Z,
}
JEMALLOC_LEAKS = [
    Leak("je_use_mallocx", ["JE_USE_MALLOCX", "JE_USE_MALLOCX_ALIGN"],
         [("main", "CALL_JE_USE_MALLOCX")], 800, 2),
    Leak("je_use_rallocx", ["JE_USE_RALLOCX"], [("main", "CALL_JE_USE_RALLOCX")], 20, 1),
    Leak("je_use_xallocx", ["JE_XALLOCX_SHRINK", "JE_XALLOCX_GROW"],
         [("main", "CALL_JE_USE_XALLOCX")], 1110, 2),
    Leak("je_leak_deep", ["JE_LEAK_DEEP"],
         [("je_deep_b", "CALL_JE_LEAK_DEEP"), ("je_deep_a", "CALL_JE_DEEP_B"),
          ("main", "CALL_JE_DEEP_A")], 999, 3),
]
# malloc family 4 + 1 + 5 + 2, mallocx 4, rallocx 3, xallocx 7, sdallocx 10,
# deep 3, free(NULL) 1.
JEMALLOC_CALLS = 4 + 1 + 5 + 2 + 4 + 3 + 7 + 10 + 3 + 1

# alloc_tcmalloc.c, linked with -ltcmalloc or -ltcmalloc_minimal.
TCMALLOC_FUNCS = {
    "tcp_use_malloc": Fn(200, 2, 300, 3),      # 3 x malloc(100), 1 freed
    "tcp_use_calloc": Fn(240, 1, 240, 1),      # calloc(10, 24)
    "tcp_use_realloc": Fn(40, 1, 1104, 3),     # malloc 64 -> realloc 1000 -> realloc 40
    "tcp_use_aligned": Fn(556, 3, 556, 3),     # posix_memalign 200, aligned_alloc 256, memalign 100
    # tc_malloc 300 (kept), 70 (tc_free), tc_calloc 5*20 (kept), tc_malloc 30
    # -> tc_realloc 60 (kept), tc_memalign 128 (kept), tc_posix_memalign 96
    # (tc_free_sized), tc_malloc 10 (tc_cfree).
    "tcp_use_tc_api": Fn(300 + 100 + 60 + 128, 4, 300 + 70 + 100 + 30 + 60 + 128 + 96 + 10, 8),
    "tcp_leak_deep": Fn(999, 3, 999, 3),       # 3 x malloc(333)
    "tcp_deep_b": Z,
    "tcp_deep_a": Z,
}
TCMALLOC_LEAKS = [
    Leak("tcp_use_tc_api", ["TCP_TC_MALLOC", "TCP_TC_CALLOC", "TCP_TC_REALLOC", "TCP_TC_MEMALIGN"],
         [("main", "CALL_TCP_USE_TC_API")], 588, 4),
    Leak("tcp_leak_deep", ["TCP_LEAK_DEEP"],
         [("tcp_deep_b", "CALL_TCP_LEAK_DEEP"), ("tcp_deep_a", "CALL_TCP_DEEP_B"),
          ("main", "CALL_TCP_DEEP_A")], 999, 3),
]
TCMALLOC_CALLS = 4 + 1 + 3 + 3 + 11 + 3 + 1

# alloc_static.c, gcc -static.
STATIC_FUNCS = {
    "st_use_malloc": Fn(200, 2, 300, 3),       # 3 x malloc(100), 1 freed
    "st_use_calloc": Fn(240, 1, 240, 1),       # calloc(10, 24)
    "st_use_realloc": Fn(40, 1, 1104, 3),      # malloc 64 -> realloc 1000 -> reallocarray(5, 8)
    # posix_memalign 200, aligned_alloc 256, memalign 100 kept; valloc 50 freed.
    "st_use_aligned": Fn(556, 3, 606, 4),
    "st_leak_deep": Fn(999, 3, 999, 3),        # 3 x malloc(333)
    "st_deep_b": Z,
    "st_deep_a": Z,
}
STATIC_LEAKS = [
    Leak("st_use_realloc", ["ST_USE_REALLOC"], [("main", "CALL_ST_USE_REALLOC")], 40, 1),
    Leak("st_leak_deep", ["ST_LEAK_DEEP"],
         [("st_deep_b", "CALL_ST_LEAK_DEEP"), ("st_deep_a", "CALL_ST_DEEP_B"),
          ("main", "CALL_ST_DEEP_A")], 999, 3),
]
# free(NULL) is not among them: glibc's free starts with its NULL check, and
# memtrace probes the instruction after it (src/loader/attach/prologue.c).
STATIC_CALLS = 4 + 1 + 3 + 5 + 3

# alloc_cxx.cpp: operator new's sizes (Tracked: 16 bytes + 8-byte array
# cookie; Aligned: 64 bytes, 64-aligned; AlignedD: the same with a
# destructor, 64-byte array cookie).
CXX_FUNCS = {
    "cx_new_delete": Fn(0, 0, 4 + 8, 2),                 # new int, ::operator new(8)
    "cx_array": Fn(0, 0, 25 * 4 + (3 * 16 + 8), 2),      # new int[25], new Tracked[3]
    "cx_nothrow": Fn(0, 0, 8 + 40, 2),                   # nothrow new double, char[40]
    "cx_aligned": Fn(0, 0, 64 + 3 * 64 + (2 * 64 + 64), 3),  # Aligned, Aligned[3], AlignedD[2]
    "cx_aligned_nothrow": Fn(0, 0, 64 + 2 * 64 + 64, 3),     # nothrow Aligned, Aligned[2], Aligned
    "cx_leak_direct": Fn(172, 3, 172, 3),                # int[25], Aligned, nothrow long
    "cx_leak_deep": Fn(248, 3, 248, 3),                  # Tracked[3], nothrow Aligned[2], AlignedD
    "cx_deep_b": Z,
    "cx_deep_a": Z,
}
CXX_LEAKS = [
    Leak("cx_leak_direct", ["CX_LEAK_DIRECT", "CX_LEAK_DIRECT_ALIGNED", "CX_LEAK_DIRECT_NOTHROW"],
         [("main", "CALL_CX_LEAK_DIRECT")], 172, 3),
    Leak("cx_leak_deep", ["CX_LEAK_DEEP", "CX_LEAK_DEEP_NOTHROW", "CX_LEAK_DEEP_ALIGNED"],
         [("cx_deep_b", "CALL_CX_LEAK_DEEP"), ("cx_deep_a", "CALL_CX_DEEP_B"),
          ("main", "CALL_CX_DEEP_A")], 248, 3),
]
CXX_CALLS = 18 + 12  # every new and every delete

# alloc_jewait.c under -p: JW_PRE blocks mallocx'ed before attaching.
JEWAIT_PRE = 5
JEWAIT_FUNCS = {
    "jw_leak": Fn(2100, 3, 2100, 3),           # 3 x mallocx(700)
    "jw_churn": Fn(0, 0, 10 * (50 + 80), 20),  # 10 x (mallocx 50 -> rallocx 80 -> sdallocx)
}
JEWAIT_CALLS = JEWAIT_PRE + 3 + 10 * 3  # dallocx of the pre blocks, then the above

PROGS = [
    Prog("jemalloc", "alloc_jemalloc", "alloc_jemalloc.c", JEMALLOC, "jemalloc", "libjemalloc.so.2",
         None, JEMALLOC_FUNCS, JEMALLOC_LEAKS, JEMALLOC_CALLS),
    # libtcmalloc's start-up calls setenv(), whose realloc is one call for
    # an allocation and a free: calls not checked.
    Prog("tcmalloc", "alloc_tcmalloc", "alloc_tcmalloc.c", None, "tcmalloc", "libtcmalloc.so.4",
         None, TCMALLOC_FUNCS, TCMALLOC_LEAKS, None),
    Prog("tcmalloc_minimal", "alloc_tcmalloc_minimal", "alloc_tcmalloc.c", None, "tcmalloc",
         "libtcmalloc_minimal.so.4", None, TCMALLOC_FUNCS, TCMALLOC_LEAKS, TCMALLOC_CALLS),
    Prog("static", "alloc_static", "alloc_static.c", None, "executable", "alloc_static",
         None, STATIC_FUNCS, STATIC_LEAKS, STATIC_CALLS),
    Prog("cxx", "alloc_cxx", "alloc_cxx.cpp", None, "glibc", "libc.so.6", "libstdc++.so.6",
         CXX_FUNCS, CXX_LEAKS, CXX_CALLS),
    Prog("cxx_jemalloc", "alloc_cxx", "alloc_cxx.cpp", JEMALLOC, "jemalloc", "libjemalloc.so.2",
         "libjemalloc.so.2", CXX_FUNCS, CXX_LEAKS, CXX_CALLS),
    Prog("cxx_tcmalloc", "alloc_cxx_tcmalloc", "alloc_cxx.cpp", None, "tcmalloc", "libtcmalloc.so.4",
         "libtcmalloc.so.4", CXX_FUNCS, CXX_LEAKS, None),
]


def prog_totals(funcs):
    return {m: sum(getattr(f, m) for f in funcs.values()) for m in METRICS}


# ---------------------------------------------------------------- running

def preload_env(preload):
    if not preload:
        return None
    check(os.path.exists(preload), "%s is missing (libjemalloc-dev; scripts/install-deps.sh)" % preload)
    return dict(os.environ, LD_PRELOAD=preload)


@functools.lru_cache(maxsize=None)
def trace(binary, metric, preload=None, extra=()):
    """memtrace --unit B -n 100 --metric METRIC [EXTRA] -o FILE -- PROG, with
    LD_PRELOAD=PRELOAD in memtrace's environment (it passes it on to PROG).
    Returns (Result, Report); cached."""
    path = mtlib.prog_path(binary)
    out = os.path.join(mtlib.TMPDIR, "allocators.%s.%s.%s.%s.txt"
                       % (binary, os.path.basename(preload or "-"), metric,
                          "_".join(a.replace("/", "_") for a in extra) or "-"))
    if os.path.exists(out):
        os.unlink(out)
    args = ["--unit", "B", "-n", "100", "--metric", metric, "-o", out] + list(extra) + ["--", path]
    res = mtlib.run_memtrace(args, env=preload_env(preload))
    d = run_details(res, preload)
    check(res.rc >= 0, "memtrace died of signal %d" % (-res.rc if res.rc < 0 else 0), d)
    check(os.path.exists(out), "memtrace wrote no report to %s (exit status %d)" % (out, res.rc), d)
    with open(out, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return res, mtlib.parse_report(text)


def run_details(res, preload=None):
    return "command: %s%s\nexit status: %s\nstderr:\n%s" % (
        "LD_PRELOAD=%s " % preload if preload else "", " ".join(res.argv), res.rc,
        mtlib.tail(res.stderr, 8))


def details_of(p, res, rep):
    env = "LD_PRELOAD=%s " % p.preload if p.preload else ""
    return "command: %s%s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
        env, " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 8), mtlib.tail(rep.text, 70))


def trace_prog(p, metric):
    return trace(p.binary, metric, p.preload)


def flat(rep, name):
    row = rep.row(name)
    return row.flat if row else 0


def check_run(p, res, rep):
    """What every report of P must say, whatever the metric."""
    d = details_of(p, res, rep)
    check_eq(res.rc, 0, "%s: memtrace's exit status (the program's)" % p.key, d)
    check_eq(rep.target_comm, p.binary[:15], "target comm", d)
    check(rep.allocator.startswith(p.kind + " "),
          "allocator line %r does not begin with %r" % (rep.allocator, p.kind + " "), d)
    main_part = rep.allocator.split(";")[0]
    check(p.lib in main_part, "allocator line %r does not name %s" % (rep.allocator, p.lib), d)
    if p.cxx:
        _, sep, cxx = rep.allocator.partition("; C++ new/delete in ")
        check(sep and p.cxx in cxx, "allocator line %r: C++ new/delete not in %s" % (rep.allocator, p.cxx), d)
    check_eq(rep.drops[0], 0, "%s: drops" % p.key, d)
    check_eq(rep.events[1], 0, "%s: failed allocator calls" % p.key, d)


# ---------------------------------------------------------------- per program

def make_header_test(p):
    @test("allocators.%s.header" % p.key)
    def _t():
        t = prog_totals(p.funcs)
        reps = {}
        for metric in METRICS:
            res, rep = trace_prog(p, metric)
            check_run(p, res, rep)
            reps[metric] = (res, rep)
            d = details_of(p, res, rep)
            main = rep.row("main")
            check(main is not None, "%s: main is not in the table" % p.key, d)
            check_eq(main.cum, t[metric], "%s: cum %s of main (the program's total)" % (p.key, metric), d)
        res, rep = reps["alloc_space"]
        d = details_of(p, res, rep)
        # The start-up code's allocations come on top of the program's.
        check(rep.allocated[0] >= t["alloc_space"] and rep.allocated[1] >= t["alloc_objects"],
              "%s: header allocated %r less than the program's (%d, %d)"
              % (p.key, rep.allocated, t["alloc_space"], t["alloc_objects"]), d)
        check(rep.inuse[0] >= t["inuse_space"] and rep.inuse[1] >= t["inuse_objects"],
              "%s: header in use %r less than the program's (%d, %d)"
              % (p.key, rep.inuse, t["inuse_space"], t["inuse_objects"]), d)
        check_eq((rep.allocated[0] - rep.freed[0], rep.allocated[1] - rep.freed[1]), rep.inuse,
                 "%s: allocated - freed vs in use" % p.key, d)
        if p.calls is not None:
            check_events(p, rep, d)


def check_events(p, rep, d):
    """Each allocator call counts once: the program's own calls, plus one
    per allocation or free made by the start-up code (which makes no
    realloc and no free(NULL), so each of its calls allocates or frees
    exactly one block), plus any untracked frees."""
    t = prog_totals(p.funcs)
    extra_allocs = rep.allocated[1] - t["alloc_objects"]
    extra_frees = rep.freed[1] - (t["alloc_objects"] - t["inuse_objects"])
    want = p.calls + extra_allocs + extra_frees + rep.untracked
    check_eq(rep.events[0], want,
             "%s: allocator calls (program %d + start-up allocations %d + start-up frees %d + untracked %d)"
             % (p.key, p.calls, extra_allocs, extra_frees, rep.untracked), d)


def make_untracked_test(p):
    @test("allocators.%s.untracked" % p.key)
    def _t():
        res, rep = trace_prog(p, "inuse_space")
        check_run(p, res, rep)
        hint = ""
        if p.lib == "libtcmalloc.so.4" and rep.untracked:
            hint = (" (libtcmalloc's tc_free_sized, also its sized operator delete, jumps to tc_free"
                    " for a block aligned to its 8 KiB page: a free inside a free, counted again)")
        check_eq(rep.untracked, 0,
                 "%s: untracked frees (under -- CMD every block freed was seen allocated)%s" % (p.key, hint),
                 details_of(p, res, rep))


def make_metric_test(p, metric):
    @test("allocators.%s.%s" % (p.key, metric))
    def _t():
        res, rep = trace_prog(p, metric)
        check_run(p, res, rep)
        d = details_of(p, res, rep)
        check(rep.title and metric in rep.title, "table title %r does not name %s" % (rep.title, metric), d)
        bad = []
        for name, fn in p.funcs.items():
            want, got = getattr(fn, metric), flat(rep, name)
            if got != want:
                bad.append("%s: flat %r, expected %d" % (name, got, want))
        check(not bad, "%s --metric %s: %s" % (p.key, metric, "; ".join(bad)), d)
        if metric != "alloc_space":
            return
        # Where each function is defined.
        for name, fn in p.funcs.items():
            row = rep.row(name)
            if row is None:
                continue
            want = "%s:%d" % (p.src, mtlib.marker_line(p.src, "DEF_" + name.upper()))
            got = "%s:%s" % (os.path.basename(row.file or "?"), row.line)
            if got != want:
                bad.append("%s defined at %s, table says %s" % (name, want, got))
        check(not bad, "%s: %s" % (p.key, "; ".join(bad)), d)


def leaf_name(st, names):
    """The program function (one of names) that is the leaf of st, or None."""
    if not st.frames:
        return None
    for n in names:
        if mtlib.same_function(st.frames[0].function, n):
            return n
    return None


def in_program(st):
    return any(mtlib.same_function(f.function, "main") for f in st.frames)


def make_stacks_test(p):
    @test("allocators.%s.stacks" % p.key)
    def _t():
        # alloc_space: every stack through main has a program function as
        # its leaf (not malloc, operator new, mallocx, je_*, tc_*), and the
        # stacks of each function add up to its flat numbers.
        res, rep = trace_prog(p, "alloc_space")
        check_run(p, res, rep)
        d = details_of(p, res, rep)
        sums = collections.defaultdict(lambda: [0, 0])
        bad = []
        for st in rep.stacks:
            if not in_program(st):
                continue
            leaf = leaf_name(st, p.funcs)
            if leaf is None:
                bad.append("leaf frame %r is not the program's (stack %s)"
                           % (st.frames[0].function, st.head))
                continue
            sums[leaf][0] += st.value
            sums[leaf][1] += st.objects or 0
        for name, fn in p.funcs.items():
            got = tuple(sums.get(name, (0, 0)))
            if got != (fn.alloc_space, fn.alloc_objects):
                bad.append("%s: stacks with it as leaf hold %r, expected (%d, %d)"
                           % (name, got, fn.alloc_space, fn.alloc_objects))
        check(not bad, "%s --metric alloc_space stacks: %s" % (p.key, "; ".join(bad)), d)

        # inuse_space: the leaks, stack by stack, with their lines.
        res, rep = trace_prog(p, "inuse_space")
        check_run(p, res, rep)
        d = details_of(p, res, rep)
        for lk in p.leaks:
            check_leak(p.src, lk, rep, "%s: %s" % (p.key, lk.function), d)


def check_leak(src, lk, rep, what, d):
    sts = [s for s in rep.stacks if s.frames and mtlib.same_function(s.frames[0].function, lk.function)]
    want_lines = sorted(mtlib.marker_line(src, m) for m in lk.markers)
    got_lines = sorted(s.frames[0].line for s in sts)
    check_eq(got_lines, want_lines, "%s: lines of the stacks with it as leaf frame" % what, d)
    for s in sts:
        check_eq(os.path.basename(s.frames[0].file or "?"), src, "%s: file of the leaf frame" % what, d)
        got = ["%s:%s" % (f.function, f.line) for f in s.frames[1:1 + len(lk.callers)]]
        want = ["%s:%d" % (fn, mtlib.marker_line(src, m)) for fn, m in lk.callers]
        ok = len(got) == len(want) and all(
            mtlib.same_function(g.rsplit(":", 1)[0], w.rsplit(":", 1)[0]) and
            g.rsplit(":", 1)[1] == w.rsplit(":", 1)[1] for g, w in zip(got, want))
        check(ok, "%s: callers %s, expected %s" % (what, got, want), d)
    check_eq((sum(s.value for s in sts), sum(s.objects or 0 for s in sts)),
             (lk.inuse_space, lk.inuse_objects), "%s: bytes and objects in use in its stacks" % what, d)


for _p in PROGS:
    make_header_test(_p)
    make_untracked_test(_p)
    for _m in METRICS:
        make_metric_test(_p, _m)
    make_stacks_test(_p)


# ---------------------------------------------------------------- C++ across allocators

@test("allocators.cxx.valgrind", needs=("memtrace", "bpf", "valgrind"))
def _cxx_valgrind():
    """alloc_cxx with libstdc++'s operators: the header is valgrind's
    total heap usage and in use at exit (both include libstdc++'s
    emergency pool)."""
    p = [q for q in PROGS if q.key == "cxx"][0]
    res, rep = trace_prog(p, "inuse_space")
    check_run(p, res, rep)
    vg = mtlib.valgrind("alloc_cxx")
    d = details_of(p, res, rep) + "\nvalgrind:\n" + mtlib.tail(vg.stderr, 12)
    check_eq(vg.rc, 0, "valgrind's exit status", d)
    check_eq(rep.allocated, (vg.bytes, vg.allocs), "allocated (bytes, objects) vs valgrind's total heap usage", d)
    check_eq(rep.inuse, (vg.inuse_bytes, vg.inuse_blocks), "in use vs valgrind's in use at exit", d)
    check_eq(rep.freed[1], vg.frees, "freed objects vs valgrind's frees", d)


@test("allocators.cxx.same_in_all")
def _cxx_same():
    """The program's per-function numbers do not depend on whose operator
    new/delete it calls: libstdc++'s, jemalloc's or tcmalloc's."""
    tables = {}
    for p in PROGS:
        if p.src != "alloc_cxx.cpp":
            continue
        tab = {}
        for metric in METRICS:
            res, rep = trace_prog(p, metric)
            check_run(p, res, rep)
            for name in CXX_FUNCS:
                tab[(name, metric)] = flat(rep, name)
        tables[p.key] = tab
    keys = sorted(tables)
    for k in keys[1:]:
        diff = ["%s %s: %s %d, %s %d" % (n, m, keys[0], tables[keys[0]][(n, m)], k, v)
                for (n, m), v in sorted(tables[k].items()) if v != tables[keys[0]][(n, m)]]
        check(not diff, "per-function numbers differ: %s" % "; ".join(diff))


# ---------------------------------------------------------------- -p with jemalloc

def start_jewait():
    """alloc_jewait under LD_PRELOAD of jemalloc (env(1) execs it: same
    pid), once it has said "ready PID"."""
    preload_env(JEMALLOC)
    w = mtlib.Bg(["env", "LD_PRELOAD=" + JEMALLOC, mtlib.prog_path("alloc_jewait")])
    line = w.out.wait_for(lambda l: l.startswith("ready "), 30)
    if line is None:
        w.kill()
        raise mtlib.Fail("alloc_jewait did not say ready", w.details())
    check_eq(int(line.split()[1]), w.pid, "pid printed by alloc_jewait")
    return w


@test("allocators.jemalloc.pid")
def _jemalloc_pid():
    """memtrace -p on a running program with jemalloc preloaded: jemalloc
    is chosen from its mappings, the blocks mallocx'ed before attaching and
    dallocx'ed after are untracked frees, the rest is exact."""
    w = start_jewait()
    mt = None
    out = os.path.join(mtlib.TMPDIR, "allocators.jewait.txt")
    try:
        mt = mtlib.start_memtrace_pid(w.pid, ["--unit", "B", "-n", "100", "-d", "600", "-o", out])
        w.send("\n")
        check(w.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "alloc_jewait did not say done", w.details())
        w.send("\n")
        rc = w.wait(30)
        check_eq(rc, 0, "alloc_jewait's exit status", w.details())
        rc = mt.wait(EXIT_WAIT)
        check(rc is not None, "memtrace still runs %ds after its target exited" % EXIT_WAIT, mt.details())
        check_eq(rc, 0, "memtrace's exit status", mt.details())
        check(os.path.exists(out), "no report in %s" % out, mt.details())
        with open(out) as f:
            rep = mtlib.parse_report(f.read())
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)
    d = mt.details() + "\nreport:\n" + mtlib.tail(rep.text, 40)
    t = prog_totals(JEWAIT_FUNCS)
    check_eq(rep.target_pid, w.pid, "target pid", d)
    check(rep.allocator.startswith("jemalloc ") and "libjemalloc.so.2" in rep.allocator,
          "allocator line %r does not name jemalloc" % rep.allocator, d)
    check_eq(rep.inuse, (t["inuse_space"], t["inuse_objects"]), "in use (bytes, objects)", d)
    check_eq(rep.allocated, (t["alloc_space"], t["alloc_objects"]), "allocated (bytes, objects)", d)
    check_eq(rep.freed, (t["alloc_space"] - t["inuse_space"], t["alloc_objects"] - t["inuse_objects"]),
             "freed (bytes, objects)", d)
    check_eq(rep.untracked, JEWAIT_PRE, "untracked frees (blocks mallocx'ed before attaching)", d)
    check_eq(rep.events, (JEWAIT_CALLS, 0), "allocator calls, failed", d)
    check_eq(rep.drops[0], 0, "drops", d)
    for name, fn in JEWAIT_FUNCS.items():
        check_eq(flat(rep, name), fn.inuse_space, "flat inuse_space of %s" % name, d)
    check(rep.row("jw_pre_alloc") is None, "jw_pre_alloc (before attaching) is in the table", d)
    check_leak("alloc_jewait.c", Leak("jw_leak", ["JW_LEAK"], [("main", "CALL_JW_LEAK")], 2100, 3),
               rep, "jw_leak", d)


# ---------------------------------------------------------------- --allocator, --symbol-prefix

@test("allocators.cli.libc_on_jemalloc")
def _libc_on_jemalloc():
    """--allocator libc on a program whose malloc is jemalloc's: glibc's
    malloc is probed, and the program never calls it."""
    res, rep = trace("alloc_jemalloc", "alloc_objects", JEMALLOC, ("--allocator", "libc"))
    d = run_details(res, JEMALLOC) + "\nreport:\n" + mtlib.tail(rep.text, 30)
    check_eq(res.rc, 0, "memtrace's exit status", d)
    check(rep.allocator.startswith("glibc ") and "libc.so" in rep.allocator.split(";")[0],
          "allocator line %r does not name glibc's libc.so" % rep.allocator, d)
    seen = [n for n in JEMALLOC_FUNCS if rep.row(n) is not None]
    check(not seen, "the program's functions are in the table with --allocator libc: %s" % seen, d)
    t = prog_totals(JEMALLOC_FUNCS)
    check(rep.allocated[1] < t["alloc_objects"],
          "allocated %r objects with --allocator libc, the program makes %d through jemalloc"
          % (rep.allocated[1], t["alloc_objects"]), d)


@test("allocators.cli.allocator_named")
def _allocator_named():
    """--allocator jemalloc and --allocator /path/libjemalloc.so.2 probe
    what auto chooses: the same numbers."""
    p = PROGS[0]
    for arg in ("jemalloc", JEMALLOC):
        res, rep = trace(p.binary, "alloc_space", JEMALLOC, ("--allocator", arg))
        d = run_details(res, JEMALLOC) + "\nreport:\n" + mtlib.tail(rep.text, 30)
        check_eq(res.rc, 0, "memtrace --allocator %s: exit status" % arg, d)
        check(JEMALLOC in rep.allocator.split(";")[0],
              "--allocator %s: allocator line %r does not name %s" % (arg, rep.allocator, JEMALLOC), d)
        bad = ["%s: %r, expected %d" % (n, flat(rep, n), fn.alloc_space)
               for n, fn in JEMALLOC_FUNCS.items() if flat(rep, n) != fn.alloc_space]
        check(not bad, "--allocator %s: flat alloc_space: %s" % (arg, "; ".join(bad)), d)


@test("allocators.cli.allocator_invalid", needs=("memtrace",))
def _allocator_invalid():
    res = mtlib.run_memtrace(["--allocator", "foo", "--", mtlib.prog_path("alloc_cxx")])
    mtlib.check_one_line_error(res, "--allocator foo", mention=["allocator"])


@test("allocators.cli.symbol_prefix_invalid", needs=("memtrace",))
def _prefix_invalid():
    res = mtlib.run_memtrace(["--symbol-prefix", "bad-", "--", mtlib.prog_path("alloc_cxx")])
    mtlib.check_one_line_error(res, "--symbol-prefix bad-", mention=["symbol-prefix", "prefix"])


@test("allocators.cli.allocator_absent")
def _allocator_absent():
    """--allocator tcmalloc on a program without tcmalloc: a one-line error
    naming it."""
    res = mtlib.run_memtrace(["--allocator", "tcmalloc", "--", mtlib.prog_path("alloc_jemalloc")],
                             env=preload_env(JEMALLOC))
    mtlib.check_one_line_error(res, "--allocator tcmalloc on a jemalloc program", mention=["tcmalloc"])


@test("allocators.cli.symbol_prefix_absent")
def _prefix_absent():
    """--symbol-prefix je_ where no object defines je_malloc (Debian's
    jemalloc has no prefix): a one-line error that says what was looked
    for."""
    res = mtlib.run_memtrace(["--symbol-prefix", "je_", "--", mtlib.prog_path("alloc_jemalloc")],
                             env=preload_env(JEMALLOC))
    mtlib.check_one_line_error(res, "--symbol-prefix je_ on a program without je_malloc",
                               mention=["je_"])


@test("allocators.symbol_prefix")
def _symbol_prefix():
    """--allocator PATH --symbol-prefix je_ on an allocator whose functions
    are je_malloc, je_calloc, je_free (tests/progs/prefixed_alloc.c);
    je_calloc calls je_malloc: one allocation."""
    lib = os.path.realpath(mtlib.prog_path("libprefixed.so"))
    res, rep = mtlib.trace("prefixed", extra=("--allocator", lib, "--symbol-prefix", "je_"))
    d = mtlib.tail(rep.text, 30)
    check_eq(res.rc, 0, "exit status", d)
    check(lib in rep.allocator, "allocator line does not name %s: %r" % (lib, rep.allocator), d)
    check_eq(rep.allocated, (3 * 100 + 4 * 25, 4), "allocated (bytes, objects)", d)
    check_eq(rep.inuse, (2 * 100 + 4 * 25, 3), "in use (bytes, objects)", d)
    check_eq(rep.untracked, 0, "untracked frees", d)
    row = rep.row("prefixed_leak")
    check(row is not None and row.flat == 200, "flat inuse_space of prefixed_leak: %s" % (row,), d)
    check_eq(row.line, mtlib.marker_line("prefixed.c", "DEF_PREFIXED_LEAK"), "definition line", d)
    res = mtlib.run_memtrace(["--allocator", lib, "-o", os.devnull, "--", mtlib.prog_path("prefixed")])
    mtlib.check_one_line_error(res, "--allocator %s without --symbol-prefix (it has no malloc)" % lib)
