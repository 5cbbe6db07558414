#!/usr/bin/env python3
"""text_profiles.py FORMAT STACKS OUT: writes a text heap profile of STACKS
distinct stacks in FORMAT (tcmalloc: gperftools' "heap profile: ... @
heapprofile"; jemalloc: "heap_v2/1"; go: runtime/pprof's debug=1 text,
"@ heap/2") and prints its totals, "inuse_bytes=.. inuse_objects=..
alloc_bytes=.. alloc_objects=..".  Every allocation is recorded (period 1),
so the totals are what `memtrace report` must print.

Used by scripts/bench.sh (the time to read 200,000 stacks of each format)
and tests/integration/test_text_readers.py (the totals, the memory).

Stack I is the frames 0x10000 + 16 x digit for each base-4096 digit of I
(leaf first), over a common root: STACKS distinct stacks of 2 to 4 frames,
from 4,096 addresses, as real profiles repeat their frames.
"""
import sys

FORMATS = ("tcmalloc", "jemalloc", "go")
BASE = 4096


def stack(i):
    digits = []
    while True:
        digits.append(i % BASE)
        i //= BASE
        if not i:
            break
    return [0x10000 + 16 * d for d in digits] + [0x90000]


def figures(i):
    """(in-use objects, in-use bytes, allocated objects, allocated bytes)."""
    ao = 1 + i % 7
    io = ao - i % 3 if ao > i % 3 else ao
    size = 16 * (1 + i % 13)
    return io, io * size, ao, ao * size


def write(fmt, n, out):
    tot = [0, 0, 0, 0]
    recs = []
    for i in range(n):
        f = figures(i)
        for k in range(4):
            tot[k] += f[k]
        recs.append((f, stack(i)))
    io, ib, ao, ab = tot
    with open(out, "w") as w:
        if fmt == "tcmalloc":
            w.write("heap profile: %6d: %8d [%6d: %8d] @ heapprofile\n" % (io, ib, ao, ab))
            for f, s in recs:
                w.write("%6d: %8d [%6d: %8d] @ %s\n" % (f + (" ".join("0x%x" % a for a in s),)))
            w.write("\nMAPPED_LIBRARIES:\n")
        elif fmt == "jemalloc":
            w.write("heap_v2/1\n  t*: %d: %d [%d: %d]\n  t0: %d: %d [%d: %d]\n" % (io, ib, ao, ab, io, ib, ao, ab))
            for f, s in recs:
                w.write("@ %s\n  t*: %d: %d [%d: %d]\n  t0: %d: %d [%d: %d]\n"
                        % ((" ".join("0x%x" % a for a in s),) + f + f))
            w.write("MAPPED_LIBRARIES:\n")
        elif fmt == "go":
            w.write("heap profile: %d: %d [%d: %d] @ heap/2\n" % (io, ib, ao, ab))
            for f, s in recs:
                w.write("%d: %d [%d: %d] @ %s\n" % (f + (" ".join("0x%x" % a for a in s),)))
                for a in s:
                    w.write("#\t0x%x\tmain.f%x+0x4\t/src/main.go:%d\n" % (a - 1, a, a % 1000 + 1))
                w.write("\n")
            w.write("\n# runtime.MemStats\n# Alloc = %d\n" % ib)
        else:
            raise SystemExit("text_profiles.py: FORMAT is one of " + ", ".join(FORMATS))
    return "inuse_bytes=%d inuse_objects=%d alloc_bytes=%d alloc_objects=%d" % (ib, io, ab, ao)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in FORMATS or not sys.argv[2].isdigit():
        raise SystemExit(__doc__.split("\n\n")[0])
    print(write(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
