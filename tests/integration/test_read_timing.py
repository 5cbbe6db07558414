"""-v's account of each read of the maps, and reads that size their array
from the last one.

memtrace -v prints, for each report taken while tracing, how long the
read took and how much of its CPU was the kernel's, and for the final
report how many blocks and stacks it read and how long reading and writing
took (the figures `make bench` prints for snapshots and first reports).
A read starts with room for the blocks the previous read found, and an
eighth: the reads here find as many blocks (the hint exact), more than
the hint (the array grows past it) and the final one: each exact.
Nothing here is timed; only the figures' presence and the counts.

The target is tests/progs/many.c (N blocks of 24 bytes on request, one
stack per recursion depth, nothing else allocated).
"""

import os
import re
import signal
import tempfile

import mtlib
from mtlib import check, check_eq, test
from test_kernel_memory import ask, finish, start_many, wait_file

REPORT_RE = re.compile(r"memtrace: report (\d+): (\d+) blocks and (\d+) stacks read in [\d.]+ ms, "
                       r"written in [\d.]+ ms; the read took ([\d.]+) ms of CPU \(([\d.]+) in the kernel\)")
FINAL_RE = re.compile(r"memtrace: final report: (\d+) blocks and (\d+) stacks read in [\d.]+ ms, "
                      r"written in [\d.]+ ms; ([\d.]+) ms of CPU in all$")


@test("read_timing.verbose")
def _verbose():
    """1,000 blocks, then 2,000 (past the first read's hint of 1,125),
    then 2,000 again, then the final report: -v's lines give each read's
    blocks and stacks, the kernel's share of its CPU, and each report is
    exact."""
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.txt")
        mt = start_many(["-v", "--unit", "B", "-n", "100", "--text=%s" % report])
        lines, reps = [], []
        try:
            for i, (n, depth) in enumerate(((1000, 2), (1000, 3), (0, 0))):
                if n:
                    ask(mt, n, depth)
                mt.signal(signal.SIGUSR1)
                path = os.path.join(d, "r.%04d.txt" % (i + 1))
                lines.append(wait_file(path, mt, "report %d after SIGUSR1" % (i + 1)))
                with open(path) as f:
                    reps.append((path, f.read()))
            rep, text = finish(mt, report)
            reps.append((report, text))
            final = [l for l in mt.err.text().splitlines() if l.startswith("memtrace: final report")]
        finally:
            mtlib.kill_quietly(mt)
    got = []
    for line in lines:
        m = REPORT_RE.match(line)
        check(m is not None, "-v's report line lacks the read's figures: %r" % line)
        cpu, kernel = float(m.group(4)), float(m.group(5))
        # Both from the same thread's clocks, at the resolution of ticks.
        check(kernel <= cpu + 10, "the kernel's share %.1f ms above the read's CPU %.1f ms: %r"
              % (kernel, cpu, line))
        got.append((int(m.group(2)), int(m.group(3))))
    check_eq(got, [(1000, 1), (2000, 2), (2000, 2)], "blocks and stacks of each read", "\n".join(lines))
    check_eq(len(final), 1, "-v's final report lines", "\n".join(final))
    m = FINAL_RE.match(final[0])
    check(m is not None, "-v's final report line: %r" % final[0])
    check_eq((int(m.group(1)), int(m.group(2))), (2000, 2), "blocks and stacks of the final read", final[0])
    for (path, text), blocks in zip(reps, (1000, 2000, 2000, 2000)):
        r = mtlib.parse_report(text)
        details = "%s:\n%s" % (path, mtlib.tail(text, 30))
        check_eq(r.drops[0], 0, "drops in %s" % os.path.basename(path), details)
        check_eq(r.inuse, (24 * blocks, blocks), "in use in %s" % os.path.basename(path), details)
