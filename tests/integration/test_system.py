"""System-wide tracing (no -p, no command): two waiters started before
memtrace and one started after it, each with exact totals of its own,
kept apart by pid; and their leaks kept after they exit."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import mtlib
from mtlib import check, check_eq, test
from programs import WAITER, WAITER_PRE, WAITER_PRE_SIZE, totals

RAW_STACK = re.compile(r"^stack \d+ id 0x[0-9a-f]+ pid (\d+): allocated (\d+) bytes in (\d+) objects, "
                       r"freed (\d+) bytes in (\d+) objects$")


def per_pid(raw_text, first_in=None):
    """{pid: [alloc bytes, alloc objects, freed bytes, freed objects]} from
    --raw; only stacks whose first frame is in file FIRST_IN if given."""
    out = {}
    lines = raw_text.splitlines()
    for i, line in enumerate(lines):
        m = RAW_STACK.match(line)
        if m and first_in is not None:
            ip0 = lines[i + 1].split() if i + 1 < len(lines) else []
            if ip0[:2] != ["ip", "#0"] or not ip0[3].startswith(first_in + "+"):
                continue
        if m:
            v = out.setdefault(int(m.group(1)), [0, 0, 0, 0])
            for k in range(4):
                v[k] += int(m.group(k + 2))
    return out


def step(w, what="done"):
    w.send("\n")
    line = w.out.wait_for(lambda l: l.strip() == what, 30)
    check(line is not None, "waiter did not say %r" % what, w.details())


def waiter_totals(pre):
    """[alloc bytes, alloc objects, freed bytes, freed objects] of a waiter
    traced from its step (PRE False) or from its start (PRE True: its PRE
    blocks too, allocated and freed)."""
    t = totals(WAITER)
    p, n = (WAITER_PRE * WAITER_PRE_SIZE, WAITER_PRE) if pre else (0, 0)
    return [t["alloc_space"] + p, t["alloc_objects"] + n,
            t["alloc_space"] - t["inuse_space"] + p, t["alloc_objects"] - t["inuse_objects"] + n]


def late_waiter_run(args, waiter_env=None, on_tracing=None, on_ready=None):
    """System-wide memtrace ARGS; once it traces, a waiter (environment
    WAITER_ENV) that a scan sees, stepped once and ended; then memtrace
    stopped by SIGINT.  ON_TRACING(line, mt) and ON_READY(w) check along
    the way.  Returns (mt, w)."""
    mt = mtlib.Bg([mtlib.MEMTRACE] + args, stdin=subprocess.DEVNULL)
    w = None
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "system-wide memtrace did not start tracing", mt.details())
        if on_tracing:
            on_tracing(line, mt)
        w = mtlib.Bg([mtlib.prog_path("waiter")], env=waiter_env)
        ready = w.out.wait_for(lambda l: l.startswith("ready "), 30)
        check(ready is not None, "the waiter did not start", w.details())
        if on_ready:
            on_ready(w)
        time.sleep(1.5)  # the next scan sees it (and what it maps)
        step(w)
        w.send("\n")
        check_eq(w.wait(30), 0, "waiter exit status", w.details())
        mt.signal(signal.SIGINT)
        check_eq(mt.wait(60), 0, "memtrace exit status", mt.details())
    finally:
        if w:
            mtlib.kill_quietly(w)
        mtlib.kill_quietly(mt)
    return mt, w


@test("system.three_processes_apart")
def _three():
    traced = waiter_totals(False)
    # Started after memtrace: its PRE blocks are traced too, and freed.
    late = waiter_totals(True)
    d = tempfile.mkdtemp(prefix="mt-system-")
    raw, folded = os.path.join(d, "raw.txt"), os.path.join(d, "folded.txt")
    pb = os.path.join(d, "heap.pb.gz")
    a, b = mtlib.start_waiter(), mtlib.start_waiter()
    mt = mtlib.Bg([mtlib.MEMTRACE, "--raw=" + raw, "--folded=" + folded, "--pprof", pb, "--metric", "alloc_objects", "-n", "1000000",
                   "--text"], stdin=subprocess.DEVNULL)
    c = None
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "system-wide memtrace did not start tracing", mt.details())
        step(a)
        step(b)
        c = mtlib.start_waiter()
        step(c)
        for w in (a, b, c):
            w.send("\n")
            check_eq(w.wait(30), 0, "waiter exit status", w.details())
        time.sleep(1.5)  # a scan notices the exits and moves their data out of the maps
        mt.signal(signal.SIGINT)
        check_eq(mt.wait(60), 0, "memtrace exit status", mt.details())
    finally:
        for w in (a, b, c):
            if w:
                mtlib.kill_quietly(w)
        mtlib.kill_quietly(mt)
    with open(raw) as f:
        got = per_pid(f.read())
    details = mt.details()
    check_eq(got.get(a.pid), traced, "pid %d (started before): allocated/freed bytes and objects" % a.pid, details)
    check_eq(got.get(b.pid), traced, "pid %d (started before): allocated/freed bytes and objects" % b.pid, details)
    check_eq(got.get(c.pid), late, "pid %d (started after): allocated/freed bytes and objects" % c.pid, details)
    with open(folded) as f:
        ftext = f.read()
    roots = {l.split(";", 1)[0] for l in ftext.splitlines()}
    for w in (a, b, c):
        mine = [l for l in ftext.splitlines() if l.startswith("waiter (%d);" % w.pid)]
        check(any(";waiter_leak " in l for l in mine),
              "no folded stack of waiter (%d) ends in waiter_leak" % w.pid,
              "\n".join(mine) or "\n".join(l for l in ftext.splitlines() if "waiter" in l))
    for w in (a, b, c):
        check("waiter (%d)" % w.pid in roots, "folded stacks have no root frame 'waiter (%d)'" % w.pid,
              "\n".join(sorted(roots)))
    rep = mtlib.parse_report(mt.out.text())
    check(rep.target.startswith("system-wide"), "target line: %r" % rep.target, details)
    row = rep.row("waiter_leak")
    check(row is not None and row.flat == 3 * WAITER.funcs["waiter_leak"].alloc_objects,
          "flat alloc_objects of waiter_leak over the three waiters", mtlib.tail(mt.out.text(), 40))

    # The saved profile, narrowed to one process, then to the waiters.
    res = mtlib.run_memtrace(["report", pb, "-p", str(c.pid), "--unit", "B"])
    one = mtlib.parse_report(res.stdout)
    check_eq(one.allocated, (late[0], late[1]), "report -p %d: allocated (bytes, objects)" % c.pid,
             mtlib.tail(res.stdout + res.stderr, 30))
    check_eq(one.freed, (late[2], late[3]), "report -p %d: freed (bytes, objects)" % c.pid,
             mtlib.tail(res.stdout, 30))
    res = mtlib.run_memtrace(["report", pb, "--comm", "waiter", "--unit", "B"])
    all3 = mtlib.parse_report(res.stdout)
    check_eq(all3.allocated, (2 * traced[0] + late[0], 2 * traced[1] + late[1]),
             "report --comm waiter: allocated (bytes, objects)", mtlib.tail(res.stdout + res.stderr, 30))


@test("system.other_libc_file")
def _other_libc():
    """A process using another libc file (as in a container) started after
    memtrace: the file is found, probed, and the process traced exactly."""
    d = tempfile.mkdtemp(prefix="mt-libc-")
    libc = os.path.join(d, "libc.so.6")
    shutil.copy("/lib/x86_64-linux-gnu/libc.so.6", libc)
    raw = os.path.join(d, "raw.txt")

    def not_named(line, mt):
        check(libc not in line, "the copied libc is probed before any process maps it", line)

    def maps_it(w):
        check(mapped(str(w.pid), libc), "waiter does not map the copied libc", w.details())

    mt, w = late_waiter_run(["--raw=" + raw], dict(os.environ, LD_LIBRARY_PATH=d),
                            not_named, maps_it)
    with open(raw) as f:
        got = per_pid(f.read())
    # Its PRE blocks were allocated before its libc file was probed (at the
    # next scan): their frees are untracked, so only the traced part counts.
    check_eq(got.get(w.pid), waiter_totals(False),
             "pid %d (own libc): allocated/freed bytes and objects" % w.pid, mt.details())


JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


@test("system.preloaded_allocator_first_call")
def _preloaded_allocator():
    """A process started after memtrace with LD_PRELOAD=libjemalloc, when
    no process maps jemalloc: its first allocations (the waiter's PRE
    blocks, made before any scan can see it) are traced, as the installed
    jemalloc is probed before any process maps it; the allocator line
    names jemalloc once the process is seen."""
    check(os.path.exists(JEMALLOC), "%s is missing (libjemalloc-dev)" % JEMALLOC)
    users = [p for p in os.listdir("/proc") if p.isdigit() and mapped(p, "libjemalloc")]
    check(not users, "processes already map jemalloc: %s" % users)
    d = tempfile.mkdtemp(prefix="mt-preload-")
    raw, out = os.path.join(d, "raw.txt"), os.path.join(d, "report.txt")

    def not_named(line, mt):
        check("jemalloc" not in line, "jemalloc named before a process maps it", line)

    def maps_it(w):
        check(mapped(str(w.pid), "libjemalloc"), "waiter does not map jemalloc", w.details())

    mt, w = late_waiter_run(["--raw=" + raw, "-o", out], dict(os.environ, LD_PRELOAD=JEMALLOC),
                            not_named, maps_it)
    # Only the waiter's own calls: jemalloc brings libstdc++, whose start-up
    # allocates too (its exception pool).
    with open(raw) as f:
        raw_text = f.read()
    got = per_pid(raw_text, first_in="waiter")
    mine = re.findall(r"^stack \d+ id \S+ pid %d:.*\n(?:  .*\n)*" % w.pid, raw_text, re.M)
    check_eq(got.get(w.pid), waiter_totals(True), "pid %d (LD_PRELOAD jemalloc): the waiter's allocated/freed bytes and objects" % w.pid,
             mt.details() + "\nits stacks:\n" + "".join(mine))
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    check("libjemalloc.so.2" in rep.allocator, "allocator line %r does not name jemalloc" % rep.allocator,
          mtlib.tail(rep.text, 20))
    check("libtcmalloc" not in rep.allocator, "allocator line %r names a tcmalloc no process used" % rep.allocator,
          mtlib.tail(rep.text, 20))


def mapped(pid, name):
    try:
        with open("/proc/%s/maps" % pid) as f:
            return name in f.read()
    except OSError:
        return False


@test("system.own_allocator_unprobed")
def _own_allocator_unprobed():
    """System-wide, memtrace's own malloc family and operator new run from
    an anonymous copy of their code (src/loader/registry/private_text.c), out
    of reach of the probes it places on every process's libc and
    libstdc++: no executable mapping of those files is left in memtrace,
    and it traces and reports as ever (a waiter started after it, exact)."""
    d = tempfile.mkdtemp(prefix="mt-own-")
    raw = os.path.join(d, "raw.txt")

    def own_code_copied(line, mt):
        with open("/proc/%d/maps" % mt.pid) as f:
            maps = f.read()
        code = [l for l in maps.splitlines()
                if l.split()[1:2] == ["r-xp"] and re.search(r"/lib(c\.so\.6|stdc\+\+\.so[.0-9]*)$", l)]
        check(not code, "memtrace's own libc/libstdc++ code is the files' mapping (probes reach it): %s"
              % code, maps)

    mt, w = late_waiter_run(["--raw=" + raw, "-o", os.devnull], on_tracing=own_code_copied)
    with open(raw) as f:
        got = per_pid(f.read())
    check_eq(got.get(w.pid), waiter_totals(True), "pid %d: allocated/freed bytes and objects" % w.pid,
             mt.details())
