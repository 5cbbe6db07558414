"""Stacks cut short, and why (tests/progs/cut_stacks.c, built -O2
-fomit-frame-pointer): a recursion 500 frames deep is whole, down to main
(the most frames a stack keeps is 1024);
each reason the unwinder can stop for that a program can provoke is
counted under its own name on the header's "truncated stacks:" line
(depth, no CFI, bad stack) and in /metrics (memtrace_truncated_stacks_total
{reason=...}); a coroutine's stack (makecontext) is what it is; a stack
unwound from its copy (deferred unwinding) whose next frame lies above
the copy's 32 KiB bound is "copy short", not "bad stack", where the BPF
walk of the live stack reaches main."""

import re
import urllib.request

import mtlib
from mtlib import check, check_eq, test
from test_deferred_unwind import _env, traced as traced_env
from test_unwind import traced

REASONS = ("no table", "no CFI", "bad stack", "depth", "CFI rule", "mapping busy", "copy lost",
           "file unreadable", "copy short")


def truncation(text, details):
    """The header's truncated stacks: (total, {reason: count})."""
    m = re.search(r"^truncated stacks: (\d+)(?: \((.*)\))?$", text, re.M)
    check(m, "no well-formed 'truncated stacks:' line", details)
    by = {}
    for part in (m.group(2) or "").split(", ") if m.group(2) else ():
        name, _, n = part.rpartition(" ")
        check(name in REASONS, "unknown reason %r" % name, details)
        by[name] = int(n)
    check_eq(sum(by.values()), int(m.group(1)), "the reasons' sum", details)
    return int(m.group(1)), by


def one_stack(stacks, size, details):
    hits = [s for s in stacks if s.inuse_bytes == size]
    check_eq(len(hits), 1, "stacks holding the block of %d bytes" % size, details)
    return hits[0]


def funcs(st):
    return [f.function.split("(", 1)[0] for f in st.frames]


DEEP = 500     # frames of recursion kept whole
MAX_DEPTH = 1024  # the most frames a stack keeps (MT_MAX_STACK_DEPTH)


@test("cut.deep_whole")
def _deep_whole():
    """500 frames of recursion without frame pointers: every one kept, to
    main, nothing truncated."""
    res, _, stacks, d = traced("cut_stacks", ["deep", str(DEEP)])
    check_eq(truncation(res.stdout, d), (0, {}), "truncated stacks", d)
    f = funcs(one_stack(stacks, 777, d))
    check_eq(f.count("deep_rec"), DEEP, "deep_rec frames", d + "\n" + " ".join(f[:5]))
    check("main" in f, "the stack does not reach main: ... %s" % " ".join(f[-5:]), d)


@test("cut.depth")
def _depth():
    """Deeper than the most frames a stack keeps: cut at the depth limit,
    counted as such."""
    res, _, stacks, d = traced("cut_stacks", ["deep", "1500"])
    check_eq(truncation(res.stdout, d), (1, {"depth": 1}), "truncated stacks", d)
    st = one_stack(stacks, 777, d)
    f = funcs(st)
    check_eq(len(st.ips), MAX_DEPTH, "frames of the stack cut at the limit", d)
    check("main" not in f and f.count("deep_rec") == MAX_DEPTH,
          "%d deep_rec frames, main %s" % (f.count("deep_rec"), "main" in f), d)


@test("cut.no_cfi")
def _no_cfi():
    """malloc called from code in an anonymous mapping (a JIT's), with no
    CFI and rbp no frame pointer: the stack ends at that frame, "no CFI"."""
    res, _, stacks, d = traced("cut_stacks", ["jit"])
    check_eq(truncation(res.stdout, d), (1, {"no CFI": 1}), "truncated stacks", d)
    st = one_stack(stacks, 555, d)
    check_eq(len(st.ips), 1, "frames (the JIT code's)", d)


@test("cut.bad_stack")
def _bad_stack():
    """A return address overwritten (0x10) under a right CFI: the stack
    does not unwind past corrupt_alloc, "bad stack"."""
    res, _, stacks, d = traced("cut_stacks", ["corrupt"])
    check_eq(truncation(res.stdout, d), (1, {"bad stack": 1}), "truncated stacks", d)
    check_eq(funcs(one_stack(stacks, 444, d)), ["corrupt_alloc"], "frames", d)


@test("cut.ucontext")
def _ucontext():
    """malloc on a makecontext() stack: the coroutine's frame is kept; the
    stack cannot reach main (it is not on main's stack): glibc's
    __start_context has no CFI, so it ends there, counted under a reason."""
    res, _, stacks, d = traced("cut_stacks", ["ucontext"])
    total, by = truncation(res.stdout, d)
    f = funcs(one_stack(stacks, 333, d))
    check_eq(f[0], "co_body", "first frame", d)
    check("main" not in f, "a coroutine's stack reaching main: %s" % f, d)
    check(total == 0 or by, "truncated without a reason", d)


@test("cut.copy_short")
def _copy_short():
    """main -> big_frame (48 KiB of locals) -> big_leaf -> malloc.  The BPF
    walk reads the live stack: whole to main.  Every stack copied and
    unwound by the loader (MEMTRACE_DEFER_ALL=1): the copy's 32 KiB from
    big_leaf's frame end inside big_frame's buffer, so its return address
    was never copied: cut after big_frame, "copy short" (it was counted
    "bad stack", as if the stack were corrupt)."""
    res, _, stacks, d = traced("cut_stacks", ["bigframe"])
    check_eq(truncation(res.stdout, d), (0, {}), "truncated stacks, BPF walk", d)
    f = funcs(one_stack(stacks, 222, d))
    check("main" in f and f.index("big_frame") == f.index("big_leaf") + 1,
          "the BPF walk's stack: %s" % f, d)

    res, stacks, d = traced_env("cut_stacks", ["bigframe"], env=_env(MEMTRACE_DEFER_ALL=1))
    check_eq(truncation(res.stdout, d), (1, {"copy short": 1}), "truncated stacks, deferred", d)
    hits = [s for s in stacks if s.inuse_bytes == 222]
    check_eq(len(hits), 1, "stacks holding the block of 222 bytes", d)
    f = [fr.function.split("(", 1)[0] for fr in hits[0].frames]
    check_eq(f[-2:], ["big_leaf", "big_frame"], "the copy's last frames", d)
    check("main" not in f, "a stack reaching main from a 32 KiB copy: %s" % f, d)


@test("cut.metrics")
def _metrics():
    """/metrics: one series per reason, the JIT stack's under no_cfi."""
    mt = mtlib.Bg([mtlib.MEMTRACE, "--http", "127.0.0.1:0", "--",
                   mtlib.prog_path("cut_stacks"), "jit", "wait"])
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: serving "), 60)
        ready = mt.out.wait_for(lambda l: l.startswith("ready "), 60)
        check(line and ready, "memtrace --http -- cut_stacks jit did not start", mt.details())
        url = re.match(r"memtrace: serving (http://\S+?)/ ", line).group(1)
        with urllib.request.urlopen(url + "/metrics", timeout=60) as r:
            text = r.read().decode()
        got = dict(re.findall(r'^memtrace_truncated_stacks_total\{reason="(\w+)"\} (\d+)$',
                              text, re.M))
        d = mt.details() + "\nmetrics:\n" + text
        check_eq(sorted(got), sorted(["no_table", "no_cfi", "bad_stack", "depth", "cfi_rule",
                                      "mapping_busy", "copy_lost", "file_unreadable",
                                      "copy_short"]), "reasons", d)
        check_eq(got["no_cfi"], "1", "no_cfi", d)
        check_eq(sum(int(v) for v in got.values()), 1, "truncated stacks in all", d)
        mt.send("\n")
        check_eq(mt.wait(60), 0, "memtrace's exit status", mt.details())
    finally:
        mt.kill()
