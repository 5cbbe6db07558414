"""memtrace -p PID on tests/progs/waiter.c: attach after the program has
allocated, untracked frees, the target exiting mid-trace, -d, SIGINT,
SIGTERM, and SIGKILL of memtrace leaving the target unharmed."""

import os
import signal
import time

import mtlib
from mtlib import check, check_eq, test
from programs import WAITER, WAITER_PRE, totals

EXIT_WAIT = 30  # seconds memtrace may take to write its report and exit


def step(w, what="done"):
    """Let the waiter run its traced part (frees, leaks) and wait for it."""
    w.send("\n")
    line = w.out.wait_for(lambda l: l.strip() == what, 30)
    check(line is not None, "waiter did not say %r" % what, w.details())


def check_waiter_report(rep, pid, details):
    t = totals(WAITER)
    check_eq(rep.target_pid, pid, "target pid", details)
    check_eq(rep.target_comm, "waiter", "target comm", details)
    check_eq(rep.inuse, (t["inuse_space"], t["inuse_objects"]), "in use (bytes, objects)", details)
    check_eq(rep.allocated, (t["alloc_space"], t["alloc_objects"]), "allocated (bytes, objects)", details)
    check_eq(rep.freed, (t["alloc_space"] - t["inuse_space"], t["alloc_objects"] - t["inuse_objects"]),
             "freed (bytes, objects)", details)
    check_eq(rep.untracked, WAITER_PRE, "untracked frees (blocks allocated before attaching)", details)
    check_eq(rep.events, (WAITER.calls, 0), "allocator calls, failed", details)
    check_eq(rep.drops[0], 0, "drops", details)
    for name, fn in WAITER.funcs.items():
        row = rep.row(name)
        got = row.flat if row else 0
        check_eq(got, fn.inuse_space, "flat inuse_space of %s" % name, details)
    check(rep.row("pre_alloc") is None, "pre_alloc (before attaching) is in the table", details)
    st = [s for s in rep.stacks if s.frames and s.frames[0].function == "waiter_leak"]
    check_eq(len(st), 1, "stacks of waiter_leak", details)
    exp = WAITER.stacks[0]
    got = ["%s %s:%s" % (f.function, os.path.basename(f.file or "?"), f.line) for f in st[0].frames[:len(exp.frames)]]
    want = ["%s %s:%d" % (f.function, WAITER.src, mtlib.marker_line(WAITER.src, f.marker)) for f in exp.frames]
    check_eq(got, want, "stack of waiter_leak", details)
    check_eq(st[0].value, exp.inuse_space, "bytes of the waiter_leak stack", details)


def report_of(mt, out):
    if out:
        check(os.path.exists(out), "no report in %s" % out, mt.details())
        with open(out) as f:
            text = f.read()
    else:
        text = mt.out.text()
    return mtlib.parse_report(text)


def details_of(mt):
    return mt.details() + "\nstdout:\n" + mtlib.tail(mt.out.text(1), 40)


def finish_waiter(w):
    """The waiter must still work: it exits 0 after its last line."""
    w.send("\n")
    rc = w.wait(30)
    check(rc is not None, "waiter did not exit after its last line", w.details())
    check_eq(rc, 0, "waiter's exit status (negative: killed by that signal)", w.details())


def session(name, mt_args, finish, use_stdout=False):
    w = mtlib.start_waiter()
    out = None if use_stdout else os.path.join(mtlib.TMPDIR, "pid.%s.txt" % name)
    mt = None
    try:
        args = ["--unit", "B", "-n", "100"] + list(mt_args)
        if out:
            args += ["-o", out]
        mt = mtlib.start_memtrace_pid(w.pid, args)
        step(w)
        finish(w, mt, out)
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)


@test("pid.target_exits")
def _target_exits():
    """memtrace -p with a long -d: the target exits, memtrace reports."""

    def finish(w, mt, out):
        t0 = time.monotonic()
        finish_waiter(w)
        rc = mt.wait(EXIT_WAIT)
        check(rc is not None, "memtrace still runs %ds after its target exited" % EXIT_WAIT, details_of(mt))
        check_eq(rc, 0, "memtrace's exit status", details_of(mt))
        check(time.monotonic() - t0 < EXIT_WAIT, "memtrace waited for -d instead of the target's exit")
        check_waiter_report(report_of(mt, out), w.pid, details_of(mt))

    session("exits", ["-d", "600"], finish)


@test("pid.duration")
def _duration():
    """-d 2: memtrace stops by itself, the target goes on."""

    def finish(w, mt, out):
        rc = mt.wait(2 + EXIT_WAIT)
        check(rc is not None, "memtrace -d 2 still runs after %ds" % (2 + EXIT_WAIT), details_of(mt))
        check_eq(rc, 0, "memtrace's exit status", details_of(mt))
        rep = report_of(mt, out)
        check(1.5 <= rep.duration <= 10, "duration %.2f s with -d 2" % rep.duration, rep.text)
        check(w.alive(), "the target died when memtrace stopped", w.details())
        check_waiter_report(rep, w.pid, details_of(mt))
        finish_waiter(w)

    session("duration", ["-d", "2"], finish)


def make_signal_test(signame, use_stdout):
    sig = getattr(signal, signame)

    @test("pid." + signame.lower())
    def _t():
        def finish(w, mt, out):
            mt.signal(sig)
            rc = mt.wait(EXIT_WAIT)
            check(rc is not None, "memtrace still runs %ds after %s" % (EXIT_WAIT, signame), details_of(mt))
            check_eq(rc, 0, "memtrace's exit status after %s" % signame, details_of(mt))
            check_waiter_report(report_of(mt, out), w.pid, details_of(mt))
            check(w.alive(), "the target died", w.details())
            finish_waiter(w)

        session(signame.lower(), [], finish, use_stdout=use_stdout)


make_signal_test("SIGINT", use_stdout=True)
make_signal_test("SIGTERM", use_stdout=False)


@test("pid.sigkill_leaves_target")
def _sigkill():
    """SIGKILL to memtrace: no report, but the target runs on unharmed (no
    leftover probe traps it) and can allocate, free and exit normally."""
    w = mtlib.start_waiter()
    mt = None
    try:
        mt = mtlib.start_memtrace_pid(w.pid, ["-d", "600"])
        mt.signal(signal.SIGKILL)
        rc = mt.wait(10)
        check_eq(rc, -signal.SIGKILL, "memtrace's status after SIGKILL")
        time.sleep(0.2)
        check(w.alive(), "the target died with memtrace", w.details())
        step(w)
        finish_waiter(w)
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)
