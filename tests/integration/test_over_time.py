"""Reports while tracing: -i/--interval, SIGUSR1, numbered outputs, --keep,
--count, --delta, and signals that must not lose the trace.

The target is tests/progs/holder.c in `realloc` mode: it holds exactly N
blocks at every instant while it replaces them as fast as it can, so every
report taken while it runs, whenever it is taken, must show N objects in
use (test_instant.py checks the final report the same way).  Once every
block memtrace saw allocated has been replaced, allocated - freed = N too;
the first report may still see some of the blocks allocated before attach,
which are not counted (they show up as untracked frees), so the checks
start from the second report."""

import glob
import os
import re
import signal
import subprocess
import tempfile
import time

import mtlib
from mtlib import check, check_eq, test

N = 256


def start_holder():
    h = mtlib.Bg([mtlib.prog_path("holder"), str(N), "realloc"])
    line = h.out.wait_for(lambda l: l.startswith("ready "), 30)
    if line is None:
        h.kill()
        raise mtlib.Fail("holder did not say ready", h.details())
    return h


def finish(h, mt):
    rc = mt.wait(60)
    check_eq(rc, 0, "memtrace's exit status", mt.details())
    check(h.alive(), "the holder died", h.details())
    h.send("\n")
    check_eq(h.wait(30), 0, "the holder's exit status", h.details())


def reports_in(d, stem="r", ext=".txt"):
    """The numbered reports in D, in order, and the final one."""
    numbered = sorted(glob.glob(os.path.join(d, "%s.[0-9][0-9][0-9][0-9]%s" % (stem, ext))))
    return numbered, os.path.join(d, stem + ext)


def inuse_objects(path):
    with open(path) as f:
        text = f.read()
    rep = mtlib.parse_report(text)
    check_eq(rep.drops[0], 0, "drops in %s" % path, text)
    check("snapshot skew" not in rep.header, "snapshot skew in %s" % path, text)
    return rep.inuse[1], text


@test("over_time.interval_exact")
def _interval_exact():
    """-i 0.2 with -p: every report exact for its instant; names numbered;
    --keep 0 keeps them all; the final one under the name given."""
    h = start_holder()
    mt = None
    with tempfile.TemporaryDirectory() as d:
        try:
            mt = mtlib.start_memtrace_pid(h.pid, ["-d", "3", "-i", "0.2", "--keep", "0",
                                                  "--text=%s/r.txt" % d,
                                                  "--pprof", "%s/h.pb.gz" % d])
            finish(h, mt)
            numbered, final = reports_in(d)
            pb, pb_final = reports_in(d, "h", ".pb.gz")
            check(len(numbered) >= 8, "only %d interval reports in 3 s at -i 0.2: %s"
                  % (len(numbered), os.listdir(d)))
            check_eq([os.path.basename(p) for p in numbered],
                     ["r.%04d.txt" % (i + 1) for i in range(len(numbered))],
                     "numbered text reports")
            check_eq(len(pb), len(numbered), "numbered pprof profiles")
            check(os.path.exists(final) and os.path.exists(pb_final),
                  "the final report keeps the names given: %s" % os.listdir(d))
            seen = []
            for p in numbered[1:] + [final]:
                objs, text = inuse_objects(p)
                seen.append(objs)
                check_eq(objs, N, "objects in use in %s (so far %s)" % (os.path.basename(p), seen),
                         mtlib.tail(text, 20))
            # A saved interval profile reads back with the same figure.
            res = mtlib.run_memtrace(["report", pb[-1], "--unit", "B"])
            check_eq(res.rc, 0, "memtrace report of a numbered profile", res.stderr)
            check_eq(mtlib.parse_report(res.stdout).inuse[1], N,
                     "objects in use read back from %s" % os.path.basename(pb[-1]))
        finally:
            if mt:
                mtlib.kill_quietly(mt)
            mtlib.kill_quietly(h)


@test("over_time.sigusr1")
def _sigusr1():
    """SIGUSR1 three times: three numbered reports and the final one, each
    exact; tracing goes on after each.  SIGUSR2 (which would kill a program
    that does not handle it) is ignored with a note."""
    h = start_holder()
    mt = None
    with tempfile.TemporaryDirectory() as d:
        try:
            mt = mtlib.start_memtrace_pid(h.pid, ["--text=%s/r.txt" % d])
            time.sleep(0.5)  # every block seen replaced (see the docstring)
            for i in range(3):
                mt.signal(signal.SIGUSR1)
                want = os.path.join(d, "r.%04d.txt" % (i + 1))
                deadline = time.time() + 30
                while not os.path.exists(want) and time.time() < deadline:
                    time.sleep(0.05)
                check(os.path.exists(want), "no %s after SIGUSR1 number %d" % (want, i + 1),
                      mt.details())
                check(mt.alive(), "memtrace stopped after SIGUSR1", mt.details())
            mt.signal(signal.SIGUSR2)
            line = mt.err.wait_for(lambda l: "ignored" in l, 10)
            check(line is not None and "User defined signal 2" in line,
                  "no note that SIGUSR2 was ignored", mt.details())
            check(mt.alive(), "memtrace died of SIGUSR2", mt.details())
            mt.signal(signal.SIGINT)
            finish(h, mt)
            numbered, final = reports_in(d)
            check_eq(len(numbered), 3, "numbered reports after three SIGUSR1")
            for p in numbered + [final]:
                objs, text = inuse_objects(p)
                check_eq(objs, N, "objects in use in %s" % os.path.basename(p), mtlib.tail(text, 20))
        finally:
            if mt:
                mtlib.kill_quietly(mt)
            mtlib.kill_quietly(h)


@test("over_time.count_keep_stdout")
def _count_keep_stdout():
    """--count 6 stops at the sixth report, the final one (exit 0, as -d):
    five numbered before it; --keep 2 leaves the last two files; the text
    on standard output comes under one '--- HH:MM:SS (+T s)' line per
    report, the final one included."""
    h = start_holder()
    mt = None
    with tempfile.TemporaryDirectory() as d:
        try:
            mt = mtlib.start_memtrace_pid(h.pid, ["-i", "0.2", "--count", "6", "--keep", "2",
                                                  "--pprof", "%s/h.pb.gz" % d, "--text"])
            finish(h, mt)
            pb, final = reports_in(d, "h", ".pb.gz")
            check_eq([os.path.basename(p) for p in pb], ["h.0004.pb.gz", "h.0005.pb.gz"],
                     "numbered files left by --keep 2")
            check(os.path.exists(final), "no final profile")
            out = mt.out.text()
            seps = re.findall(r"^--- \d\d:\d\d:\d\d \(\+(\d+\.\d) s\)$", out, re.M)
            check_eq(len(seps), 6, "'---' lines on stdout (5 reports and the final one: --count 6)", out[:2000])
            times = [float(t) for t in seps]
            check(times == sorted(times), "report times not increasing: %s" % times)
        finally:
            if mt:
                mtlib.kill_quietly(mt)
            mtlib.kill_quietly(h)


def alloc_objects_total(path):
    res = mtlib.run_memtrace(["report", path, "--metric", "alloc_objects", "--unit", "B"])
    check_eq(res.rc, 0, "memtrace report %s" % path, res.stderr)
    rep = mtlib.parse_report(res.stdout)
    m = re.search(r"total (\d+)", rep.title or "")
    check(m, "no total in %r" % rep.title, res.stdout[:2000])
    return int(m.group(1)), rep


@test("over_time.delta_sums")
def _delta_sums():
    """--delta: the alloc_objects of the interval reports and the final one
    add up to what the whole trace allocated; each in-use is still N."""
    h = start_holder()
    mt = None
    with tempfile.TemporaryDirectory() as d:
        try:
            mt = mtlib.start_memtrace_pid(h.pid, ["-d", "2", "-i", "0.3", "--delta", "--keep", "0",
                                                  "--pprof", "%s/h.pb.gz" % d])
            finish(h, mt)
            pb, final = reports_in(d, "h", ".pb.gz")
            check(len(pb) >= 4, "only %d interval profiles" % len(pb))
            parts = []
            for p in pb + [final]:
                n, rep = alloc_objects_total(p)
                parts.append(n)
                check("alloc figures" in rep.header, "no 'alloc figures' line in %s" % p,
                      "\n".join("%s: %s" % kv for kv in rep.header.items()))
            whole = rep.allocated[1]  # the final header: the whole trace
            check_eq(sum(parts), whole, "sum of --delta alloc_objects %s" % parts)
            check(all(x > 0 for x in parts), "an interval allocated nothing: %s" % parts)
            check_eq(rep.inuse[1], N, "objects in use in the final --delta report")
        finally:
            if mt:
                mtlib.kill_quietly(mt)
            mtlib.kill_quietly(h)


@test("over_time.errors", needs=("memtrace",))
def _errors():
    """Bad values and misplaced options: one line, exit 2."""
    for args, mention in ((["-i", "0", "--", "true"], ("--interval",)),
                          (["-i", "x", "--", "true"], ("--interval",)),
                          (["--count", "3", "--", "true"], ("--count needs -i",)),
                          (["--keep", "-1", "--", "true"], ("--keep",)),
                          (["report", "x.pb.gz", "-i", "1"], ("not for report",))):
        res = mtlib.run_memtrace(args)
        check_eq(res.rc, 2, "exit status of memtrace %s" % " ".join(args), res.stderr)
        mtlib.check_one_line_error(res, " ".join(args), mention)


@test("over_time.base_between")
def _base_between():
    """Two profiles of one run: B --base A allocated exactly what the
    program allocated between them (the headers' difference), and
    A --base A is empty."""
    h = start_holder()
    mt = None
    with tempfile.TemporaryDirectory() as d:
        try:
            mt = mtlib.start_memtrace_pid(h.pid, ["-d", "1.5", "-i", "0.5", "--keep", "0",
                                                  "--pprof", "%s/h.pb.gz" % d])
            finish(h, mt)
            pb, final = reports_in(d, "h", ".pb.gz")
            check(len(pb) >= 2, "only %d interval profiles" % len(pb))
            a, b = pb[0], final
            na, ra = alloc_objects_total(a)
            nb, rb = alloc_objects_total(b)
            res = mtlib.run_memtrace(["report", b, "--base", a, "--metric", "alloc_objects",
                                      "--unit", "B"])
            check_eq(res.rc, 0, "memtrace report B --base A", res.stderr)
            diff = mtlib.parse_report(res.stdout)
            m = re.search(r"total (-?\d+)", diff.title or "")
            check(m, "no total in %r" % diff.title, res.stdout[:1500])
            check_eq(int(m.group(1)), rb.allocated[1] - ra.allocated[1],
                     "B --base A: objects allocated between A and B")
            check(int(m.group(1)) > 0, "nothing allocated between A and B")
            res = mtlib.run_memtrace(["report", a, "--base", a, "--unit", "B"])
            check_eq(res.rc, 0, "memtrace report A --base A", res.stderr)
            same = mtlib.parse_report(res.stdout)
            check_eq(same.inuse, (0, 0), "A --base A: in use")
            check_eq(same.allocated, (0, 0), "A --base A: allocated")
        finally:
            if mt:
                mtlib.kill_quietly(mt)
            mtlib.kill_quietly(h)
