"""Per-thread state in slots (bpf/thread_slots.h): a thread keeps what it
is in the middle of (depth, size, arguments) in the slot of "threads" its
thread id picks, or in task storage when another thread owns that slot.
Counts stay exact either way, across thread exits (a slot given back) and
thread ids running through many values:

  thread_slots.default   thread_waves (40 waves of 64 threads, each wave
                         exiting before the next): wave_work's allocated
                         objects and bytes, and what it still holds, exact;
                         no drops
  thread_slots.one_slot  the same with MEMTRACE_THREAD_SLOTS=1: one slot,
                         handed from thread to thread as they exit, the
                         others in task storage
"""

import os

import mtlib
from mtlib import check, check_eq, test

WAVES, THREADS = 40, 64
PER_THREAD_OBJECTS = 13          # 10 malloc, realloc, calloc, reallocarray
PER_THREAD_BYTES = 1000 + 300 + 150 + 100
HELD = (THREADS * 300, THREADS)  # the last wave's realloc'd blocks


def waves_report(metric, env_extra):
    out = os.path.join(mtlib.TMPDIR, "thread_waves.%s.%s.txt" % (metric, len(env_extra)))
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ)
    env.update(env_extra)
    res = mtlib.run_memtrace(["--unit", "B", "--metric", metric, "-o", out, "--",
                              mtlib.prog_path("thread_waves"), str(WAVES), str(THREADS)], env=env)
    d = "exit status %s\nstderr:\n%s" % (res.rc, mtlib.tail(res.stderr))
    check_eq(res.rc, 0, "memtrace's exit status", d)
    check(os.path.exists(out), "no report written", d)
    with open(out, encoding="utf-8") as f:
        rep = mtlib.parse_report(f.read())
    check_eq(rep.drops[0] if rep.drops else None, 0, "drops", mtlib.tail(rep.text, 30))
    row = rep.row("wave_work")
    check(row is not None, "no wave_work row", mtlib.tail(rep.text, 30))
    return rep, row


def check_waves(env_extra):
    n = WAVES * THREADS
    _, row = waves_report("alloc_objects", env_extra)
    check_eq(row.flat, n * PER_THREAD_OBJECTS, "wave_work's allocated objects")
    _, row = waves_report("alloc_space", env_extra)
    check_eq(row.flat, n * PER_THREAD_BYTES, "wave_work's allocated bytes")
    _, row = waves_report("inuse_space", env_extra)
    check_eq(row.flat, HELD[0], "wave_work's bytes in use")
    _, row = waves_report("inuse_objects", env_extra)
    check_eq(row.flat, HELD[1], "wave_work's objects in use")


@test("thread_slots.default")
def _default():
    check_waves({})


@test("thread_slots.one_slot")
def _one_slot():
    check_waves({"MEMTRACE_THREAD_SLOTS": "1"})
