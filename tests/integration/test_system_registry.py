"""System-wide, the image registry (src/loader/registry/images.c) follows
every process: a process's image is dropped, and the files only it mapped
closed, once it has exited, so a long run's registry does not grow with
the processes that came and went; and the 1 s scan of /proc, the safety
net behind the events, counts (and says with -v) what it found that no
event had told of."""

import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import mtlib
from mtlib import check, check_eq, test

REGISTRY = re.compile(r"^memtrace: registry: (\d+) process images, (\d+) files open \((\d+) opened in all\); "
                      r"(\d+) images dropped at exit, (\d+) files closed; "
                      r"dlopens told by ld.so's hook \(in \d+ files\): (\d+); "
                      r"scans of /proc: (\d+) \([\d.]+ ms each\), "
                      r"finds no event had told of: (\d+); "
                      r"mappings left out for want of a descriptor: (\d+)$")
KEPT = re.compile(r"^memtrace: files the kernel named .*; processes whose mappings are kept: (\d+)$")
FOUND = re.compile(r"^memtrace: the scan found pid (\d+) \((.*)\): (allocator file|newly mapped) (.*), "
                   r"which no event had told of$")


def system_run(work, args=()):
    """System-wide memtrace -v ARGS while WORK(mt) runs; stopped by SIGINT
    after it.  Returns memtrace's Bg, finished."""
    return mtlib.system_wide(["-v", "-o", os.devnull] + list(args), work)


def registry_line(mt):
    lines = [REGISTRY.match(l.rstrip("\n")) for l in mt.err.text().splitlines()]
    lines = [m for m in lines if m]
    check_eq(len(lines), 1, "registry lines in -v output", mt.details())
    return [int(x) for x in lines[0].groups()]


def metric(url, name):
    """The value of NAME in /metrics at URL."""
    with urllib.request.urlopen(url + "/metrics", timeout=60) as r:
        text = r.read().decode()
    m = re.search(r"^%s (\d+)$" % name, text, re.M)
    check(m is not None, "/metrics has no %s" % name, text[-2000:])
    return int(m.group(1))


def live_pids():
    return sum(1 for p in os.listdir("/proc") if p.isdigit())


@test("system_registry.exited_dropped")
def _exited_dropped():
    """200 short-lived processes, each allocating (so an event has its image
    read, and the kernel tells of its mappings) and gone seconds before the
    end: the registry has dropped their images, and the mappings the kernel
    told of; it keeps about one of each per live process."""
    def work(mt):
        # Batches of 50 `sleep 0.4`: each allocates at its start (locale),
        # is read into the registry while it sleeps, and exits.
        for _ in range(4):
            procs = [subprocess.Popen(["/usr/bin/sleep", "0.4"]) for _ in range(50)]
            for p in procs:
                p.wait(30)
        time.sleep(2.5)  # scans notice the exits

    mt = system_run(work)
    images, nfiles, opened, dropped, closed, _, scans, _, no_fd = registry_line(mt)
    check_eq(no_fd, 0, "mappings left out for want of a descriptor", mt.details())
    live = live_pids()
    details = "%s\nlive processes after: %d" % (mt.details(), live)
    check(scans >= 2, "scans of /proc: %d" % scans, details)
    check(dropped >= 150, "images dropped at exit: %d (of 200 processes gone)" % dropped, details)
    # Not one per process that ever ran (the 200 and the machine's own).
    check(images <= live + 40, "process images at the end: %d, live processes: %d" % (images, live), details)
    check(nfiles <= opened and closed == opened - nfiles,
          "files: %d open, %d opened, %d closed" % (nfiles, opened, closed), details)
    # The mappings the kernel told of go with the processes too.
    kept = [KEPT.match(l) for l in mt.err.text().splitlines()]
    kept = [int(m.group(1)) for m in kept if m]
    check_eq(len(kept), 1, "lines of processes whose mappings the kernel told are kept", details)
    check(kept[0] <= live + 40, "processes whose told mappings are kept: %d, live processes: %d" % (kept[0], live),
          details)


@test("system_registry.scan_finds_counted")
def _scan_finds():
    """A python3 maps a copy of a library executable with mmap (no dlopen:
    no event tells of it): the next scan finds it, counts it and names it.
    Another copy it loads with dlopen is told by ld.so's hook, probed in
    every process: not among the finds.  It then execs perl, whose first
    allocation is an event that has the new image read: perl's files are
    not among the finds either.  /metrics shows the count rise, and the
    registry's images."""
    d = tempfile.mkdtemp(prefix="mt-scanfind-")
    mapped, opened = os.path.join(d, "mapped.so"), os.path.join(d, "opened.so")
    shutil.copy("/usr/lib/x86_64-linux-gnu/libz.so.1", mapped)
    shutil.copy("/usr/lib/x86_64-linux-gnu/libz.so.1", opened)
    script = ("import ctypes, mmap, os, sys, time\n"
              "time.sleep(1.5)\n"  # a scan reads its image as it is
              "print('ready', flush=True)\n"
              "sys.stdin.readline()\n"
              "f = open(%r, 'rb')\n"
              "m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)\n"
              "print('mapped', flush=True)\n"
              "time.sleep(2.5)\n"  # the next scan finds it
              "ctypes.CDLL(%r)\n"
              "time.sleep(2.5)\n"  # scans, after the hook told of it
              "os.execv('/usr/bin/perl', ['perl', '-e', 'print qq(perl\\n); sleep 3'])\n" % (mapped, opened))
    py, seen = [], []

    def work(mt):
        serving = [l for l in mt.err.lines if l.startswith("memtrace: serving ")]
        check(serving, "system-wide memtrace --http did not serve", mt.details())
        url = re.match(r"memtrace: serving (http://\S+?)/ ", serving[0]).group(1)
        p = mtlib.Bg(["/usr/bin/python3", "-c", script])
        py.append(p)
        try:
            check(p.out.wait_for(lambda l: l.startswith("ready"), 30) is not None,
                  "python3 did not start", p.details())
            before = metric(url, "memtrace_scan_finds_total")
            p.send("\n")
            check(p.out.wait_for(lambda l: l.startswith("mapped"), 30) is not None,
                  "python3 did not map the library", p.details())
            for _ in range(40):  # the next scan (once a second) finds it
                seen.append(metric(url, "memtrace_scan_finds_total"))
                if seen[-1] > before:
                    break
                time.sleep(0.1)
            check(seen[-1] > before, "/metrics: memtrace_scan_finds_total stayed %d (%d reads)" % (before, len(seen)),
                  "".join(l for l in mt.err.lines if "scan" in l))
            images = metric(url, "memtrace_registry_images")
            check(1 <= images <= live_pids() + 40, "/metrics: memtrace_registry_images %d" % images)
            check(p.out.wait_for(lambda l: l.startswith("perl"), 30) is not None,
                  "python3 did not exec perl", p.details())
            check_eq(p.wait(30), 0, "perl exit status", p.details())
        finally:
            mtlib.kill_quietly(p)

    mt = system_run(work, ["--http", "127.0.0.1:0"])
    pid = py[0].pid
    finds = [FOUND.match(l.rstrip("\n")) for l in mt.err.text().splitlines()]
    mine = [m.groups()[2:] for m in finds if m and int(m.group(1)) == pid]
    details = "%s\nfinds of pid %d: %s" % (mt.details(), pid, mine)
    check(("newly mapped", mapped) in mine, "the scan did not name %s as newly mapped" % mapped, details)
    check(not any(path == opened for _, path in mine),
          "the dlopen'ed %s, told by ld.so's hook, counted as the scan's find" % opened, details)
    check(registry_line(mt)[5] >= 1, "no dlopen told by ld.so's hook", details)
    perl = [path for _, path in mine if "perl" in path]
    check(not perl, "perl's files, told by its first allocation, counted as the scan's finds", details)
    counted = registry_line(mt)[7]
    check_eq(counted, sum(1 for m in finds if m), "finds counted against finds said", details)
    check(counted >= seen[-1], "finds counted at the end %d, in /metrics before %d" % (counted, seen[-1]),
          details)
