"""The ring buffer of stack copies read on a thread of its own
(src/loader/unwind/copy_reader.c), so that a loader busy elsewhere does
not leave a program's first stacks to be lost.

- deferred.busy_loader: every stack copied (MEMTRACE_DEFER_ALL=1), a
  ring of 4 MiB, `many` making 12,000 allocations 50 frames deep
  (some 24 MiB of copies) while the loader is held for 1.5 s at its first
  copy (the test hook MEMTRACE_TEST_LOADER_STALL_MS, as a table load, a
  scan of /proc or a report would hold it): no copy lost, every stack
  whole to main.  The same with the reader thread off
  (MEMTRACE_DEFER_THREAD=0, the ring read on the loader's thread) loses
  copies: the scenario does fill the ring.
- deferred.queue_bound: the same with the queue bounded at 1 MiB (test
  hook MEMTRACE_DEFER_QUEUE): past it the ring fills and copies are
  counted lost; the queue never held more than the bound and a record.
"""

import re

from mtlib import check, check_eq, test
from test_deferred_unwind import _env, deferred_of, traced, truncated_of

# A ring of 4 MiB (some 2,000 of these copies: the reader thread may wait
# milliseconds for a core on a loaded machine), 12,000 copies of ~2 KiB.
N = 12000
_STALL = dict(MEMTRACE_DEFER_ALL=1, MEMTRACE_TEST_LOADER_STALL_MS=1500,
              MEMTRACE_DEFER_RING=4 << 20)


def _run(**extra):
    env = dict(_STALL)
    env.update(extra)
    return traced("many", env=_env(**env), input_text="%d 50\nq\n" % N)


@test("deferred.busy_loader")
def _busy_loader():
    res, stacks, det = _run()
    copies, unwound, cut, never, lost = deferred_of(res, det)
    check(copies >= N, "copies %d < %d" % (copies, N), det)
    check_eq(lost, 0, "copies lost with the reader thread", det)
    check_eq(cut, 0, "copies cut short", det)
    check_eq(never, 0, "copies never unwound", det)
    check_eq(truncated_of(res.stdout), 0, "truncated stacks", det)
    deep = [s for s in stacks if s.inuse_objects and
            sum(1 for f in s.frames if f.function == "rec") == 50]
    check_eq(sum(s.inuse_objects for s in deep), N,
             "blocks whose stack holds all 50 rec frames", det)
    check(all(any(f.function == "main" for f in s.frames) for s in deep),
          "a deep stack without main", det)

    res0, _, det0 = _run(MEMTRACE_DEFER_THREAD="0")
    lost0 = deferred_of(res0, det0)[4]
    check(lost0 > 0, "the same on the loader's thread lost no copy: the "
          "test does not fill the ring", det0)


@test("deferred.queue_bound")
def _queue_bound():
    # The same, with the queue bounded at 1 MiB (test hook): the thread
    # stops reading once the loader is that far behind, the ring fills and
    # the rest are counted lost; the queue never held more than the bound
    # and one record (a copy is at most 32 KiB and its frames).
    res, _, det = _run(MEMTRACE_DEFER_QUEUE=str(1 << 20))
    copies, unwound, cut, never, lost = deferred_of(res, det)
    check(lost > 0, "no copy lost with a 1 MiB queue behind a held loader", det)
    check_eq(copies + lost, N, "copies taken and lost", det)
    m = re.search(r"read ahead of the loader: (\d+) KiB at most", res.stderr)
    check(m is not None, "no 'read ahead' figure with -v", det)
    check(int(m.group(1)) <= 1024 + 48, "the queue held %s KiB" % m.group(1), det)
