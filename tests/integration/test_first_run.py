"""A program's first run, system-wide: stacks whole from its first
allocation although memtrace has never seen its files.

- system.first_run_whole: a program compiled here (a new file with a new
  build id) without frame pointers, main -> qa -> qb -> qc -> malloc with
  a size of its own each time, living a few milliseconds, run twice while
  `memtrace -d N` traces the machine: every allocation of both runs is
  counted, exactly, under a stack with the whole chain qc, qb, qa, main;
  none is under a stack cut short.  Its file's table cannot be made before
  its first allocation, nor read from /proc once it has exited: the BPF
  program copies the stacks and names the process's mappings itself
  (deferred unwinding, bpf/unwind_defer.h).
"""

import os
import random
import subprocess
import tempfile
import time

import mtlib
from mtlib import check_eq, parse_raw, test

N = 400          # allocations a run
BASE = 3001      # their sizes: BASE, BASE + 1, ...
RUNS = 2

SRC = r"""
#include <stdlib.h>
#include <string.h>
#define N %(n)d
#define BASE %(base)d
const char tag[] = "%(tag)s"; /* a new build id each time */
static void *volatile keep[N];
static volatile int sink;
__attribute__((noinline)) static void *qc(size_t n)
{ void *p = malloc(n); if (p) memset(p, 1, 1); sink++; return p; }
__attribute__((noinline)) static void *qb(size_t n)
{ void *p = qc(n); sink++; return p; }
__attribute__((noinline)) static void *qa(size_t n)
{ void *p = qb(n); sink++; return p; }
int main(void)
{
	for (int i = 0; i < N; i++)
		keep[i] = qa(BASE + (size_t)i);
	sink += tag[0];
	for (int i = 0; i < N; i++)
		free(keep[i]);
	return 0;
}
"""

CHAIN = ["qc", "qb", "qa", "main"]


def _whole(frames):
    """Do FRAMES (leaf first) hold qc, qb, qa, main one after the other?"""
    names = [f.function for f in frames]
    return any(names[i:i + 4] == CHAIN for i in range(len(names)))


@test("system.first_run_whole")
def _first_run():
    d = tempfile.mkdtemp(prefix="mt-first-")
    tag = "%016x" % random.getrandbits(64)
    name = "fr" + tag[:8]
    src, prog = os.path.join(d, name + ".c"), os.path.join(d, name)
    with open(src, "w") as f:
        f.write(SRC % {"n": N, "base": BASE, "tag": tag})
    cc = subprocess.run(["gcc", "-O1", "-fomit-frame-pointer", "-o", prog, src],
                        capture_output=True, text=True)
    check_eq(cc.returncode, 0, "gcc exit status", cc.stderr)
    raw = os.path.join(d, "raw.txt")
    pids = []

    def runs(_mt):
        for _ in range(RUNS):
            p = subprocess.Popen([prog])
            pids.append(p.pid)
            check_eq(p.wait(30), 0, "%s exit status" % name)
            time.sleep(0.3)

    # Bounded (-d): a system-wide memtrace left running disturbs everything.
    mt = mtlib.system_wide(["-v", "-d", "40", "--raw=" + raw, "-n", "5"], runs,
                           settle=1, timeout=120)
    with open(raw) as f:
        text = f.read()
    details = mt.details() + "\nraw of the program:\n" + "\n".join(
        l for l in text.splitlines() if any(" pid %d:" % p in l for p in pids))
    stacks = parse_raw(text, details)
    want = (N * BASE + N * (N - 1) // 2, N)
    for pid in pids:
        mine = [s for s in stacks if s.pid == pid]
        whole = [s for s in mine if _whole(s.frames)]
        cut = [s for s in mine if not _whole(s.frames)]
        shown = "\n".join("%d B in %d: %s" % (s.alloc_bytes, s.alloc_objects,
                                               ";".join(f.function for f in reversed(s.frames)))
                          for s in mine)
        check_eq((sum(s.alloc_bytes for s in whole), sum(s.alloc_objects for s in whole)), want,
                 "run %d (pid %d): bytes and allocations under main;qa;qb;qc" % (pids.index(pid) + 1, pid),
                 details + "\nstacks of pid %d:\n%s" % (pid, shown))
        check_eq([(s.alloc_bytes, s.alloc_objects) for s in cut], [],
                 "run %d (pid %d): stacks cut short" % (pids.index(pid) + 1, pid),
                 details + "\nstacks of pid %d:\n%s" % (pid, shown))
