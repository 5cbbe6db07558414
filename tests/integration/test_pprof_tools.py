"""memtrace's pprof profiles as other tools read them, and read back.

  pprof.mappings      -p on waiter: every Mapping of the profile (go tool pprof
                      -raw) is an executable mapping of /proc/PID/maps at trace
                      time (start, limit, file offset), with the file's GNU
                      build id; every location's address lies in its mapping
  pprof.stripped      a stripped program: its frames are address-only
                      locations (no invented names, no [FN] flag on its
                      mapping); go tool pprof -symbolize=force with the
                      unstripped binary resolves them after the fact, to the
                      program's known flat numbers
  pprof.disasm        go tool pprof -disasm on a non-PIE build: each leaking
                      function's bytes sit on a call instruction
  pprof.roundtrip.*   write, read back (memtrace report): every line of the
                      text report and of the folded stacks identical
                      (exact, sampled, --mmap, a stripped non-PIE program
                      whose frames are named by ELF address)
  pprof.not_recorded  a Go heap profile: the facts Go does not record say
                      "not recorded", never 0

Expected numbers come from programs.py and /proc, never from memtrace.
"""

import os
import re
import shutil
import subprocess

import mtlib
from mtlib import check, check_eq, test
from programs import PROGRAMS

from test_outputs import go_bin, go_env

LEAKS = next(p for p in PROGRAMS if p.name == "leaks")
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", "progs"))

MAP_RE = re.compile(r"^\s*(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)(?: ([0-9a-f]+))?(.*)$")
LOC_RE = re.compile(r"^\s*(\d+): 0x([0-9a-f]+) M=(\d+)(.*)$")


def go_tool_pprof(args, path, symbolize="none"):
    argv = [go_bin(), "tool", "pprof", "-symbolize=" + symbolize] + list(args) + [path]
    res = mtlib.run(argv, env=go_env(), timeout=120)
    check_eq(res.rc, 0, "%s: exit status" % " ".join(argv), mtlib.tail(res.stderr))
    return res.stdout


def raw_sections(text):
    """go tool pprof -raw: ({id: mapping}, [(id, addr, mapping id, rest)])."""
    maps, locs, section = {}, [], None
    for line in text.splitlines():
        if line.strip() in ("Samples:", "Locations", "Mappings"):
            section = line.strip()
            continue
        if section == "Mappings":
            m = MAP_RE.match(line)
            if m:
                maps[int(m.group(1))] = dict(start=int(m.group(2), 16), limit=int(m.group(3), 16),
                                             offset=int(m.group(4), 16), file=m.group(5),
                                             build_id=m.group(6) or "", flags=m.group(7))
        elif section == "Locations":
            m = LOC_RE.match(line)
            if m:
                locs.append((int(m.group(1)), int(m.group(2), 16), int(m.group(3)), m.group(4)))
    return maps, locs


def proc_maps(pid):
    """Executable file mappings of PID: [(start, end, offset, path)]."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/"):
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi, int(parts[2], 16), parts[5].strip()))
    return out


def build_id(path):
    res = mtlib.run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", res.stdout)
    return m.group(1) if m else ""


def check_locations_in_mappings(maps, locs, details):
    bad = ["location %d: 0x%x outside mapping %d (0x%x-0x%x)" % (i, a, m, maps[m]["start"], maps[m]["limit"])
           for i, a, m, _ in locs if m and not maps[m]["start"] <= a < maps[m]["limit"]]
    check(not bad, "locations outside their mapping: " + "; ".join(bad[:5]), details)


@test("pprof.mappings", needs=("memtrace", "bpf"))
def _mappings():
    w = mtlib.start_waiter()
    out = os.path.join(mtlib.TMPDIR, "mappings.pb.gz")
    mt = None
    try:
        mt = mtlib.start_memtrace_pid(w.pid, ["--pprof", out, "-d", "600"])
        at_trace = proc_maps(w.pid)
        w.send("\n")
        check(w.out.wait_for(lambda l: l.strip() == "done", 30) is not None, "waiter did not finish", w.details())
        w.send("\n")
        check(w.wait(30) == 0, "waiter did not exit 0", w.details())
        check(mt.wait(60) == 0, "memtrace did not exit 0 after its target", mt.details())
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)
    raw = go_tool_pprof(["-raw"], out)
    maps, locs = raw_sections(raw)
    d = "go tool pprof -raw:\n%s\n/proc/%d/maps (executable):\n%s" % (
        mtlib.tail(raw, 40), w.pid, "\n".join("%x-%x %x %s" % m for m in at_trace))
    check(maps, "no mappings in the profile", d)
    files = {m["file"] for m in maps.values()}
    check(mtlib.prog_path("waiter") in files or any(f.endswith("/waiter") for f in files),
          "the waiter's own mapping is missing", d)
    for i, m in maps.items():
        match = [t for t in at_trace if t[3] == m["file"]]
        check(match, "mapping %d (%s) is not an executable mapping of the process" % (i, m["file"]), d)
        check((m["start"], m["limit"], m["offset"]) in [(t[0], t[1], t[2]) for t in match],
              "mapping %d (%s): 0x%x/0x%x/0x%x, /proc/PID/maps says %s" % (
                  i, m["file"], m["start"], m["limit"], m["offset"],
                  ", ".join("0x%x/0x%x/0x%x" % t[:3] for t in match)), d)
        check_eq(m["build_id"], build_id(m["file"]), "build id of mapping %d (%s)" % (i, m["file"]), d)
    check(locs, "no locations in the profile", d)
    check_locations_in_mappings(maps, locs, d)


def go_top_flat(text):
    """{function: flat bytes} from go tool pprof -top -unit=B."""
    flat = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[1].endswith("%") and parts[4].endswith("%"):
            v = parts[0]
            flat[parts[5]] = int(v[:-1]) if v.endswith("B") else int(float(v))
    return flat


@test("pprof.stripped", needs=("memtrace", "bpf"))
def _stripped():
    full = mtlib.prog_path("leaks")
    stripped = os.path.join(mtlib.TMPDIR, "leaks.stripped")
    res = mtlib.run(["strip", "-o", stripped, full])
    check_eq(res.rc, 0, "strip", res.stderr)
    out = os.path.join(mtlib.TMPDIR, "stripped.pb.gz")
    res = mtlib.run_memtrace(["--pprof", out, "--", stripped])
    check_eq(res.rc, 0, "memtrace -- leaks.stripped", mtlib.tail(res.stderr))
    raw = go_tool_pprof(["-raw"], out)
    maps, locs = raw_sections(raw)
    mine = [i for i, m in maps.items() if m["file"] == stripped]
    check_eq(len(mine), 1, "mappings of the stripped program", raw)
    check("[FN]" not in maps[mine[0]]["flags"],
          "the stripped program's mapping claims functions (has_functions)", raw)
    own = [l for l in locs if l[2] == mine[0]]
    check(own, "no locations in the stripped program", raw)
    named = [l for l in own if l[3].strip()]
    check(not named, "address-only locations expected, got names: %s" % named[:3], raw)
    check_locations_in_mappings(maps, locs, raw)
    # After the fact, with the unstripped binary: the program's own numbers.
    top = go_tool_pprof(["-top", "-unit=B", "-sample_index=inuse_space", full], out, symbolize="force")
    flat = go_top_flat(top)
    want = {f: v.inuse_space for f, v in LEAKS.funcs.items() if v.inuse_space}
    got = {f: flat.get(f) for f in want}
    check_eq(got, want, "flat inuse_space per function after go tool pprof -symbolize=force", top)


@test("pprof.disasm", needs=("memtrace", "bpf"))
def _disasm():
    # Go's own pprof disassembles at link-time addresses only (its ObjAddr
    # is the identity): a position-dependent executable.
    exe = os.path.join(mtlib.TMPDIR, "leaks.nopie")
    res = mtlib.run(["gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-no-pie", "-o", exe,
                     os.path.join(SRC, "leaks.c")])
    check_eq(res.rc, 0, "gcc -no-pie leaks.c", res.stderr)
    out = os.path.join(mtlib.TMPDIR, "nopie.pb.gz")
    res = mtlib.run_memtrace(["--pprof", out, "--", exe])
    check_eq(res.rc, 0, "memtrace -- leaks.nopie", mtlib.tail(res.stderr))
    for fn in ("leak_three", "half_freed", "calloc_leak"):
        text = go_tool_pprof(["-disasm=%s" % fn, "-unit=B", "-sample_index=inuse_space"], out)
        rows = []
        for line in text.splitlines():
            m = re.match(r"^\s*(\d+)B\s+(\S+)\s+([0-9a-f]+):\s+(\S+)", line)
            if m:
                rows.append((int(m.group(1)), m.group(4)))
        check(rows, "go tool pprof -disasm=%s: no instruction with a value" % fn, text)
        check(all(op.upper().startswith("CALL") for _, op in rows),
              "-disasm=%s: values on instructions other than calls: %s" % (fn, rows), text)
        check_eq(sum(v for v, _ in rows), LEAKS.funcs[fn].inuse_space,
                 "-disasm=%s: bytes on its calls" % fn, text)


def roundtrip(name, prog, extra):
    """PROG: a program of tests/progs, or a path."""
    text = os.path.join(mtlib.TMPDIR, "rt.%s.txt" % name)
    folded = os.path.join(mtlib.TMPDIR, "rt.%s.folded" % name)
    pb = os.path.join(mtlib.TMPDIR, "rt.%s.pb.gz" % name)
    res = mtlib.run_memtrace(list(extra) + ["-n", "1000", "--text=" + text, "--folded=" + folded,
                                            "--pprof", pb, "--",
                                            prog if "/" in prog else mtlib.prog_path(prog)])
    check_eq(res.rc, 0, "memtrace -- %s" % prog, mtlib.tail(res.stderr))
    text2 = os.path.join(mtlib.TMPDIR, "rt.%s.back.txt" % name)
    folded2 = os.path.join(mtlib.TMPDIR, "rt.%s.back.folded" % name)
    res = mtlib.run_memtrace(["report", pb, "-n", "1000", "--text=" + text2, "--folded=" + folded2],
                             env=dict(os.environ, LC_ALL="C"))
    check_eq(res.rc, 0, "memtrace report", mtlib.tail(res.stderr))
    for a, b in ((text, text2), (folded, folded2)):
        with open(a) as f:
            want = f.read().splitlines()
        with open(b) as f:
            got = f.read().splitlines()
        diff = [(i + 1, w, g) for i, (w, g) in enumerate(zip(want, got)) if w != g]
        check(not diff and len(want) == len(got),
              "%s read back differs from the trace's (%d vs %d lines): %s" % (
                  os.path.basename(b), len(got), len(want),
                  "; ".join("line %d: %r != %r" % d for d in diff[:3])),
              "\n".join(want[:15]))
    return want


for _name, _prog, _extra in (("exact", "leaks", ()), ("sampled", "sampled", ("-s", "16384")),
                             ("mmap", "mmapper", ("--mmap",))):
    def _mk(name=_name, prog=_prog, extra=_extra):
        @test("pprof.roundtrip." + name)
        def _t():
            roundtrip(name, prog, extra)
    _mk()


@test("pprof.roundtrip.stripped_nopie")
def _roundtrip_stripped():
    exe = os.path.join(mtlib.TMPDIR, "leaks.nopie.stripped")
    res = mtlib.run(["gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-no-pie", "-o", exe,
                     os.path.join(SRC, "leaks.c")])
    check_eq(res.rc, 0, "gcc -no-pie leaks.c", res.stderr)
    res = mtlib.run(["strip", exe])
    check_eq(res.rc, 0, "strip", res.stderr)
    text = roundtrip("stripped_nopie", exe, ())
    check(any("leaks.nopie.stripped+0x40" in l for l in text),
          "expected frames named by their ELF address (0x40....)", "\n".join(text[:30]))


@test("pprof.not_recorded", needs=("memtrace",))
def _not_recorded():
    path = os.path.normpath(os.path.join(HERE, "..", "data", "goheap", "heap.pb.gz"))
    res = mtlib.run_memtrace(["report", path])
    check_eq(res.rc, 0, "memtrace report on Go's heap profile", res.stderr)
    head = res.stdout.split("\n\n")[0].splitlines()
    for key in ("allocator", "events", "untracked frees", "drops"):
        line = [l for l in head if l.startswith(key + ":")]
        check_eq(line, [key + ": not recorded"], "header line %r" % key, res.stdout[:800])


# ---------------------------------------------------------------- bombs

def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7f, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def pb_field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def gzip_bomb(path, mib):
    """MIB MiB of zeros, gzipped (about 1 KiB per MiB)."""
    import zlib
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(c.compress(chunk))
        f.write(c.flush())


def tiny_samples(path, n):
    """A valid profile header and N samples of nothing (2 bytes each)."""
    import gzip
    head = pb_field(6, b"") + pb_field(6, b"inuse_space") + pb_field(6, b"bytes") + \
        pb_field(1, b"\x08\x01\x10\x02")
    with gzip.open(path, "wb", 9) as f:
        f.write(head + b"\x12\x00" * n)


def report_usage(args):
    """memtrace report ARGS: (exit status, stderr, seconds, max RSS in KiB)."""
    import time
    t0 = time.monotonic()
    # Through rss_of: memtrace forked from this (large) Python process
    # would count the runner's memory as its own high-water mark.
    p = subprocess.run([mtlib.prog_path("rss_of"), mtlib.MEMTRACE, "report"] + list(args),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace")
    m = re.search(r"^rss_of: maxrss_kb=(\d+)$", err, re.M)
    check(m, "rss_of printed no maxrss", err)
    err = err[:m.start()] + err[m.end() + 1:]
    return p.returncode, err, time.monotonic() - t0, int(m.group(1))


def make_bomb_test(name, make, limit_kib, mention):
    @test("pprof.bomb." + name, needs=("memtrace",))
    def _t():
        path = os.path.join(mtlib.TMPDIR, "bomb." + name)
        make(path)
        rc, err, secs, rss = report_usage([path])
        d = "memtrace report %s (%d bytes): exit %d in %.2f s, max RSS %d KiB\nstderr:\n%s" % (
            path, os.path.getsize(path), rc, secs, rss, err)
        check_eq(rc, 1, "exit status", d)
        lines = [l for l in err.splitlines() if l.strip()]
        check(len(lines) == 1 and mention in lines[0] and "--max-memory" in lines[0],
              "expected one line naming %r and --max-memory" % mention, d)
        check(rss < limit_kib, "max RSS %d KiB, budget %d KiB" % (rss, limit_kib), d)
        check(secs < 5, "took %.2f s to reject" % secs, d)
        # The budget is the user's: a smaller one still holds (it bounds
        # gunzip and decoding each; memtrace itself takes about 8 MiB).
        rc, err, secs, rss2 = report_usage([path, "--max-memory", "8M"])
        check(rc == 1 and "--max-memory" in err and rss2 < (2 * 8 + 16) * 1024,
              "--max-memory 8M: exit %d, max RSS %d KiB" % (rc, rss2), err)

# A gzip bomb: 1 GiB of zeros in 1 MB (16 MiB + 32 x 1 MB may be inflated).
make_bomb_test("gzip", lambda p: gzip_bomb(p, 1024), 100 * 1024, "gzip bomb")
# 2M samples of nothing: 4 MB of protobuf, 4 KB gzipped, ~300 MB if decoded.
make_bomb_test("tiny_samples", lambda p: tiny_samples(p, 2000000), 40 * 1024, "needs more than")
