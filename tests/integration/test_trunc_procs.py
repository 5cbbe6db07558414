"""Which processes the truncated stacks are of (-v): the header's
`truncated stacks:` line counts every process traced (system-wide, the
machine's other programs too); -v says, one line a process, how many of
each reason are whose, so that a measurement can tell its own programs'
from the others'.

- cut.by_process_walk: cut_stacks corrupt (a return address overwritten:
  one stack cut short in the BPF walk, "bad stack"): -v names its pid
  with "bad stack 1", and the lines add up to the header.
- cut.by_process_deferred: the same with every stack copied
  (MEMTRACE_DEFER_ALL=1): the cut is made by the loader's walk of the
  copy, and counted under the process as well.
- cut.by_process_lost: many with a ring buffer of a few copies, read on
  the loader's thread, held at its first copy (deferred.copy_lost): the
  copies lost are counted under many's pid, as many as the header says.
- cut.by_process_many: more processes than the BPF map has room for
  (test hook MEMTRACE_TRUNC_PROCS=4), eight cut_stacks run one after the
  other: each exited one's entry moves out of the map at its harvest,
  so all eight are named, none counted as "other processes".
"""

import os
import re

import mtlib
from mtlib import check, check_eq, test
from test_cut_stacks import truncation
from test_deferred_unwind import _env, traced

_LINE = re.compile(r"^memtrace:   pid (\d+) \(([^)]*)\):(.*)$", re.M)


def by_process(res, details):
    """{pid: (comm, {reason: count})} of -v's lines."""
    check("memtrace: truncated stacks by process" in res.stderr,
          "no 'truncated stacks by process' with -v", details)
    out = {}
    for pid, comm, rest in _LINE.findall(res.stderr):
        by = {}
        for part in rest.strip().split(", "):
            name, _, n = part.rpartition(" ")
            by[name] = int(n)
        out[int(pid)] = (comm, by)
    return out


def _check_sums(res, procs, details):
    """The lines add up to the header's line, reason by reason."""
    total, header = truncation(res.stdout, details)
    summed = {}
    for _, by in procs.values():
        for name, n in by.items():
            summed[name] = summed.get(name, 0) + n
    check_eq(summed, header, "the processes' reasons against the header's", details)
    return total


def _pid_of(procs, comm, details):
    mine = [pid for pid, (c, _) in procs.items() if c == comm]
    check_eq(len(mine), 1, "processes named %s" % comm, details)
    return mine[0]


@test("cut.by_process_walk")
def _walk():
    res, _, d = traced("cut_stacks", ["corrupt"])
    procs = by_process(res, d)
    check_eq(_check_sums(res, procs, d), 1, "truncated stacks", d)
    check_eq(procs[_pid_of(procs, "cut_stacks", d)][1], {"bad stack": 1}, "cut_stacks's", d)


@test("cut.by_process_deferred")
def _deferred():
    res, _, d = traced("cut_stacks", ["corrupt"], env=_env(MEMTRACE_DEFER_ALL=1))
    procs = by_process(res, d)
    check(_check_sums(res, procs, d) >= 1, "no truncated stack", d)
    check_eq(procs[_pid_of(procs, "cut_stacks", d)][1].get("bad stack"), 1,
             "cut_stacks's bad stacks", d)


@test("cut.by_process_lost")
def _lost():
    res, _, d = traced("many", env=_env(MEMTRACE_DEFER_ALL=1, MEMTRACE_DEFER_RING=65536,
                                       MEMTRACE_DEFER_THREAD=0, MEMTRACE_TEST_LOADER_STALL_MS=500),
                       input_text="3000 50\nq\n")
    procs = by_process(res, d)
    _check_sums(res, procs, d)
    lost = truncation(res.stdout, d)[1].get("copy lost", 0)
    check(lost > 0, "no copy lost with a ring buffer of a few copies", d)
    check_eq(procs[_pid_of(procs, "many", d)][1].get("copy lost"), lost, "many's copies lost", d)


@test("cut.by_process_many")
def _many_processes():
    # Room for 4 processes' entries in the BPF map (test hook), 8
    # processes cut one after the other: each harvested one's entry is
    # moved out of the map, so every one is named, none "other processes".
    prog = mtlib.prog_path("cut_stacks")
    script = "for i in 1 2 3 4 5 6 7 8; do %s corrupt; sleep 0.4; done" % prog
    res = mtlib.run_memtrace(["-v", "--text", "-n", "1", "--", "/bin/sh", "-c", script],
                             env=_env(MEMTRACE_TRUNC_PROCS=4))
    d = "command: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 20), mtlib.tail(res.stdout, 20))
    check_eq(res.rc, 0, "exit status", d)
    procs = by_process(res, d)
    check_eq(_check_sums(res, procs, d), 8, "truncated stacks", d)
    cut = [by for comm, by in procs.values() if comm == "cut_stacks"]
    check_eq(cut, [{"bad stack": 1}] * 8, "each cut_stacks process's line", d)
