"""memtrace -p on tests/progs/holder.c, a program that always holds N
blocks while it replaces them as fast as it can: the report describes one
instant, however tracing stops (-d or SIGINT) and however the probes are
linked (uprobe_multi or perf-event uprobes).

With `holder N realloc` the program holds exactly N blocks at every
instant (a realloc frees and allocates in one call): in use is N objects,
and the untracked frees (the N blocks it held when memtrace attached) are
N.  With `holder N malloc` it allocates the new block before freeing the
old one: N or N+1 blocks at any instant, so both figures are N or N+1.
Probes detached one function after the other used to let frees through
after allocations had stopped being seen: in use fell below N."""

import os
import signal
import subprocess

import mtlib
from mtlib import check, check_eq, test

N = 256
RUNS = 3
EXIT_WAIT = 30


def start_holder(mode):
    h = mtlib.Bg([mtlib.prog_path("holder"), str(N), mode])
    line = h.out.wait_for(lambda l: l.startswith("ready "), 30)
    if line is None:
        h.kill()
        raise mtlib.Fail("holder did not say ready", h.details())
    return h


def one_run(mode, stop, env=None):
    """(in use objects, untracked frees) of one memtrace -p run."""
    h = start_holder(mode)
    mt = None
    try:
        args = [mtlib.MEMTRACE, "--unit", "B", "-p", str(h.pid)]
        if stop == "duration":
            args += ["-d", "1.5"]
        mt = mtlib.Bg(args, stdin=subprocess.DEVNULL, env=env)
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "memtrace -p did not start tracing", mt.details())
        if stop == "sigint":
            mt.wait(1.5)
            mt.signal(signal.SIGINT)
        rc = mt.wait(EXIT_WAIT + 2)
        check_eq(rc, 0, "memtrace's exit status", mt.details())
        rep = mtlib.parse_report(mt.out.text())
        check(h.alive(), "the holder died", h.details())
        h.send("\n")
        check_eq(h.wait(30), 0, "the holder's exit status", h.details())
        details = mt.details() + "\n" + mtlib.tail(rep.text, 12)
        check_eq(rep.drops[0], 0, "drops", details)
        check_eq(rep.allocated[1] - rep.freed[1], rep.inuse[1], "allocated - freed objects", details)
        check(rep.allocated[1] > 10 * N, "only %d allocations in 1.5 s" % rep.allocated[1], details)
        return rep.inuse[1], rep.untracked, details
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(h)


def make_test(mode, stop, links=None):
    name = "instant.%s_%s%s" % (mode, stop, "_" + links if links else "")
    env = dict(os.environ, MEMTRACE_LINKS=links) if links else None
    want = (N, N) if mode == "realloc" else (N, N + 1)

    @test(name)
    def _t():
        seen = []
        for _ in range(RUNS):
            inuse, untracked, details = one_run(mode, stop, env)
            seen.append((inuse, untracked))
            check(want[0] <= inuse <= want[1],
                  "in use %d objects, expected %s (runs so far: %s)" % (inuse, want, seen), details)
            check(want[0] <= untracked <= want[1],
                  "untracked frees %d, expected %s (runs so far: %s)" % (untracked, want, seen), details)


for _mode in ("realloc", "malloc"):
    for _stop in ("duration", "sigint"):
        make_test(_mode, _stop)
make_test("malloc", "duration", "perf")
