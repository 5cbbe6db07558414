"""Kernel memory that follows the need, and snapshots that read what changed.

memtrace's BPF maps are read from /proc/<memtrace>/fdinfo (every map it
made is open there, the unwind tables' chunks included): the memlock line
is what the kernel charges for the map.  The target is tests/progs/many.c,
which allocates on request N blocks of 24 bytes through a recursion D deep
(one stack per D) and exits holding them all, allocating nothing else.

- idle: an idle trace holds at most 32 MiB (plus a little per CPU), and
  the outstanding-block map is not made to its ceiling (--max-allocs): a
  preallocated map costs over 100 bytes an entry, one made on demand 16
  (its bucket array) plus what is live.
- follows_need: the same map grows with what is live (100,000 blocks), and
  the report is exact.
- drops_exact: with --max-allocs M and N > M blocks live, exactly M are
  kept and N - M counted as dropped ("allocs map full").
- snapshots: reports taken while tracing (SIGUSR1) are exact, and each
  copies from the kernel only the stacks it has not seen (-v says how many).
"""

import os
import re
import signal
import tempfile
import time

import mtlib
from mtlib import check, check_eq, test

MAPS_LIMIT = 32 << 20    # an idle trace's kernel memory, issue 25
PER_CPU = 64 << 10       # allowance for the per-CPU maps, per CPU
BPF_MAP_TYPE_HASH = 1
BPF_MAP_TYPE_ARRAY = 2


def maps_of(pid):
    """The BPF maps open in process PID: a list of dicts of fdinfo fields."""
    out = []
    fddir = "/proc/%d/fd" % pid
    for fd in os.listdir(fddir):
        try:
            if os.readlink(os.path.join(fddir, fd)) != "anon_inode:bpf-map":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        m = {k: v.strip() for k, v in info.items()}
        out.append({"type": int(m["map_type"]), "key": int(m["key_size"]),
                    "value": int(m["value_size"]), "max": int(m["max_entries"]),
                    "flags": int(m["map_flags"], 16), "memlock": int(m["memlock"])})
    return out


def allocs_map(maps, details):
    """The outstanding-block map: the hash map of struct mt_alloc_key (16
    bytes) -> struct mt_alloc_info (40 bytes)."""
    got = [m for m in maps if m["type"] == BPF_MAP_TYPE_HASH and m["key"] == 16 and m["value"] == 40]
    check_eq(len(got), 1, "hash maps of 16-byte keys and 40-byte values (allocs)", details)
    return got[0]


def describe(maps):
    return "\n".join("type %(type)d key %(key)d value %(value)d max %(max)d flags %(flags)#x "
                     "memlock %(memlock)d" % m for m in sorted(maps, key=lambda m: m["memlock"]))


def start_many(args=()):
    """memtrace ARGS -- many, once many has said ready."""
    mt = mtlib.Bg([mtlib.MEMTRACE] + list(args) + ["--", mtlib.prog_path("many")])
    line = mt.out.wait_for(lambda l: l.startswith("ready "), 60)
    if line is None:
        mt.kill()
        raise mtlib.Fail("many did not say ready under memtrace", mt.details())
    return mt


def ask(mt, n, depth):
    mt.send("%d %d\n" % (n, depth))
    check(mt.out.wait_for(lambda l: l.strip() == "ok", 120) is not None,
          "many did not allocate %d blocks at depth %d" % (n, depth), mt.details())


def finish(mt, report):
    mt.send("q\n")
    check_eq(mt.wait(120), 0, "memtrace's exit status", mt.details())
    with open(report) as f:
        text = f.read()
    return mtlib.parse_report(text), text


@test("kmem.idle")
def _idle():
    """An idle trace: at most 32 MiB of BPF maps, the block map not made in
    full (a preallocated one of 1,048,576 entries is 126 MB)."""
    with tempfile.TemporaryDirectory() as d:
        mt = start_many(["-o", os.path.join(d, "r.txt")])
        try:
            time.sleep(0.5)  # the unwind tables loaded
            maps = maps_of(mt.pid)
            details = describe(maps)
            a = allocs_map(maps, details)
            check_eq(a["max"], 1 << 20, "the block map's ceiling (--max-allocs' default)", details)
            # Made on demand: 16 bytes a bucket, a few hundred bytes else.
            check(a["memlock"] < 20 * a["max"] + (1 << 20),
                  "the empty block map takes %d bytes: made to its ceiling of %d entries"
                  % (a["memlock"], a["max"]), details)
            limit = MAPS_LIMIT + PER_CPU * os.cpu_count()
            total = sum(m["memlock"] for m in maps)
            check(total <= limit, "an idle trace holds %.1f MiB of BPF maps, more than %.1f"
                  % (total / 2 ** 20, limit / 2 ** 20), details)
            # The unwind rows: chunks of 32,768 (8-byte) rows, as many as
            # the tables loaded need (many, libc and ld.so: some 31,000).
            chunks = [m for m in maps if m["type"] == BPF_MAP_TYPE_ARRAY and m["key"] == 4
                      and m["value"] == 8 and m["max"] == 1 << 15]
            check(1 <= len(chunks) <= 2, "%d chunks of unwind rows for an idle trace" % len(chunks),
                  details)
        finally:
            mtlib.kill_quietly(mt)


@test("kmem.follows_need")
def _follows_need():
    """100,000 blocks live: the block map holds them (its memory grows by
    at least their entries) and the report is exact."""
    n = 100000
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.txt")
        mt = start_many(["--unit", "B", "-o", report])
        try:
            before = allocs_map(maps_of(mt.pid), "")["memlock"]
            ask(mt, n, 3)
            maps = maps_of(mt.pid)
            after = allocs_map(maps, describe(maps))["memlock"]
            # An entry: its header, a 16-byte key and a 40-byte value.
            check(after - before >= n * (16 + 40),
                  "the block map grew by %d bytes for %d blocks" % (after - before, n),
                  describe(maps))
            rep, text = finish(mt, report)
        finally:
            mtlib.kill_quietly(mt)
    details = mtlib.tail(text, 30)
    check_eq(rep.drops[0], 0, "drops", details)
    check_eq(rep.inuse, (24 * n, n), "in use (bytes, objects)", details)
    check_eq(rep.allocated, (24 * n, n), "allocated (bytes, objects)", details)


@test("kmem.drops_exact")
def _drops_exact():
    """--max-allocs 1000 with 3,000 blocks live: exactly 1,000 kept, 2,000
    counted as dropped; allocated stays exact."""
    m, n = 1000, 3000
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.txt")
        mt = start_many(["--unit", "B", "--max-allocs", str(m), "-o", report])
        try:
            ask(mt, n, 1)
            rep, text = finish(mt, report)
        finally:
            mtlib.kill_quietly(mt)
    details = mtlib.tail(text, 30)
    total, parts = rep.drops
    check_eq(parts.get("allocs map full"), n - m, "'allocs map full' drops", details)
    check_eq(total, n - m, "drops in all", details)
    check_eq(rep.inuse, (24 * m, m), "in use (bytes, objects): the blocks kept", details)
    check_eq(rep.allocated, (24 * n, n), "allocated (bytes, objects)", details)


def wait_file(path, mt, what):
    deadline = time.time() + 60
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)
    check(os.path.exists(path), "no %s" % what, mt.details())
    # Written in full once the -v line for it is out.
    line = mt.err.wait_for(lambda l: re.match(r"memtrace: report \d+: ", l), 60)
    check(line is not None, "no -v line for %s" % what, mt.details())
    return line


@test("kmem.snapshots")
def _snapshots():
    """Reports on SIGUSR1 while tracing: each exact, every stack whole,
    and each copies from the kernel only the stacks it has not seen: 21
    for the first (21 depths), none for the second (nothing new), 1 for
    the third (one more depth)."""
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.txt")
        mt = start_many(["-v", "--unit", "B", "-n", "100", "--text=%s" % report])
        lines, reps = [], []
        try:
            for depth in range(1, 21):
                ask(mt, 10, depth)
            for i, depth in enumerate((21, None, 22)):
                if depth:
                    ask(mt, 10, depth)
                mt.signal(signal.SIGUSR1)
                path = os.path.join(d, "r.%04d.txt" % (i + 1))
                lines.append(wait_file(path, mt, "report %d after SIGUSR1" % (i + 1)))
                with open(path) as f:
                    reps.append((path, f.read()))
            rep, text = finish(mt, report)
            reps.append((report, text))
        finally:
            mtlib.kill_quietly(mt)
    news = []
    for line in lines:
        m = re.search(r"(\d+) new stacks from the kernel", line)
        check(m is not None, "no count of new stacks in -v's line: %r" % line)
        news.append(int(m.group(1)))
    check_eq(news, [21, 0, 1], "stacks copied from the kernel by each report", "\n".join(lines))
    for (path, text), blocks in zip(reps, (210, 210, 220, 220)):
        rep = mtlib.parse_report(text)
        details = "%s:\n%s" % (path, mtlib.tail(text, 40))
        check_eq(rep.drops[0], 0, "drops in %s" % os.path.basename(path), details)
        check_eq(rep.inuse, (24 * blocks, blocks), "in use in %s" % os.path.basename(path), details)
        # Every stack whole: alloc_block, then rec D times.
        depths = sorted(sum(1 for f in s.frames if f.function == "rec") for s in rep.stacks)
        check_eq(depths, list(range(1, blocks // 10 + 1)),
                 "rec frames of the stacks in %s" % os.path.basename(path), details)
