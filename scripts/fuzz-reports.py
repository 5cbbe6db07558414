#!/usr/bin/python3
"""Fuzz `memtrace report` with mutated profiles.

    scripts/fuzz-reports.py [--memtrace BIN] [--seconds N] [--seed S]
                            [--max-files N] [--save DIR] [--jobs N]

First runs every file of tests/data/fuzz/found/ as it is (inputs that
once failed: add each new finding there with the fix).  Then builds a
corpus from the seeds in tests/data/fuzz/seeds/ (a gperftools,
a jemalloc and a Go debug=1 heap profile, made by the real allocators and
Go's runtime), tests/data/goheap/heap.pb.gz (Go's pprof) and the text
seeds converted to pprof by memtrace itself, then mutates them: numbers
replaced by boundary values (0, -1, 2^63, 2^64, ...), lines deleted,
repeated (thousands of times) or swapped, bytes flipped, inserted (NUL,
0xff) or cut, a line made 100,000 bytes long; pprof profiles are mutated
inside the protobuf (a varint field set to a boundary value, a field
dropped or repeated, in every nested message) and in the gzip stream.

Each file is given to `BIN report FILE` (and with --folded, --pprof or
--svg into a temporary file, in turn), BIN being the ASan/UBSan build
(build/memtrace-asan, `make memtrace-asan`) by default.  A file fails
when memtrace dies of a signal, prints a sanitizer report, exits with a
status other than 0 or 1, takes more than 10 s (a hang), or exits 1
without saying why on its last line ("memtrace: ...").  Runs until N
seconds have passed (default 60) or --max-files are done; the corpus is
the same for the same --seed (default 1).  Failing files are copied to
--save DIR (default: a new directory under /tmp), the command to
reproduce each printed.  Exit status: 0 when nothing failed, 1 otherwise,
2 on a usage error.
"""

import argparse
import gzip
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED_DIR = os.path.join(ROOT, "tests", "data", "fuzz", "seeds")
FOUND_DIR = os.path.join(ROOT, "tests", "data", "fuzz", "found")
GOHEAP = os.path.join(ROOT, "tests", "data", "goheap", "heap.pb.gz")
HANG_S = 10

SANITIZER_RE = re.compile(r"runtime error:|ERROR: (Address|Leak|UndefinedBehavior|Memory)Sanitizer|"
                          r"AddressSanitizer|SUMMARY: \w+Sanitizer")

BOUNDARY = [b"0", b"1", b"-1", b"2147483647", b"2147483648", b"4294967295", b"4294967296",
            b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
            b"18446744073709551615", b"18446744073709551616", b"99999999999999999999999999",
            b"0x0", b"0xffffffffffffffff", b"0x10000000000000000", b"1e308", b"nan", b"-0", b""]
BOUNDARY_VARINTS = [0, 1, 2, 127, 128, 255, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32,
                    2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 62, 1 << 40]
NUMBER_RE = re.compile(rb"-?(0x[0-9a-fA-F]+|[0-9]+)")
DECIMAL_RE = re.compile(rb"(?<![0-9a-zA-Z])-?[0-9]+(?![0-9a-zA-Z])")  # counts, not addresses


# ---------------------------------------------------------------- text

def mutate_text(rng, data):
    lines = data.split(b"\n")
    kind = rng.randrange(12)
    if kind == 11:  # many numbers at once: one boundary value, or each its own
        one = rng.choice(BOUNDARY[1:-1]) if rng.randrange(2) else None
        p = rng.choice((0.1, 0.5, 1.0))
        return DECIMAL_RE.sub(lambda m: (one or rng.choice(BOUNDARY)) if rng.random() < p
                              else m.group(0), data)
    if kind <= 2:  # numbers: boundary values (several at once, sometimes)
        nums = list(NUMBER_RE.finditer(data))
        if not nums:
            return data + b"1"
        out = bytearray(data)
        for m in sorted(rng.sample(nums, min(len(nums), rng.choice((1, 1, 2, 5)))),
                        key=lambda m: -m.start()):
            out[m.start():m.end()] = rng.choice(BOUNDARY)
        return bytes(out)
    if kind == 3:  # a line deleted
        del lines[rng.randrange(len(lines))]
    elif kind == 4:  # a line repeated many times
        i = rng.randrange(len(lines))
        lines[i:i + 1] = [lines[i]] * rng.choice((2, 100, 5000))
    elif kind == 5:  # two lines swapped
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 6:  # cut anywhere
        return data[:rng.randrange(len(data) + 1)]
    elif kind == 7:  # bytes flipped
        out = bytearray(data)
        for _ in range(rng.choice((1, 1, 4, 16))):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return bytes(out)
    elif kind == 8:  # bytes inserted: NUL, 0xff, separators
        i = rng.randrange(len(data) + 1)
        return data[:i] + rng.choice((b"\0", b"\xff", b":", b"@", b"[", b"]", b"/", b"\n",
                                      b" ", b"\t", b"#")) * rng.choice((1, 3, 1000)) + data[i:]
    elif kind == 9:  # a very long line, or a stack very deep
        i = rng.randrange(len(lines))
        lines[i] = lines[i] + rng.choice((b"x" * 100000, b" 0x1" * 20000, b" 1" * 30000))
    else:  # a separator replaced by another
        seps = [m.start() for m in re.finditer(rb"[:@\[\]/ ]", data)]
        if not seps:
            return data
        out = bytearray(data)
        out[rng.choice(seps)] = rng.choice(b":@[]/ \t0")
        return bytes(out)
    return b"\n".join(lines)


# ---------------------------------------------------------------- protobuf

def read_varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("bad varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def parse_msg(b):
    """[field, wire type, value]: value an int (varint, fixed) or bytes;
    raises ValueError when B is not a message."""
    out, i = [], 0
    while i < len(b):
        key, i = read_varint(b, i)
        field, wt = key >> 3, key & 7
        if field == 0:
            raise ValueError("field 0")
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = read_varint(b, i)
            if i + n > len(b):
                raise ValueError("length")
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type")
        if i > len(b):
            raise ValueError("end")
        out.append([field, wt, v])
    return out


def encode_msg(fields):
    out = bytearray()
    for field, wt, v in fields:
        out += varint(field << 3 | wt)
        if wt == 0:
            out += varint(v)
        elif wt == 1:
            out += (v & (2 ** 64 - 1)).to_bytes(8, "little")
        elif wt == 5:
            out += (v & (2 ** 32 - 1)).to_bytes(4, "little")
        else:
            out += varint(len(v)) + v
    return bytes(out)


def packed(v):
    """The varints of a packed field, or None."""
    try:
        out, i = [], 0
        while i < len(v):
            x, i = read_varint(v, i)
            out.append(x)
        return out
    except ValueError:
        return None


def mutate_msg(rng, b, depth=0):
    """B (a message) with one mutation somewhere inside it."""
    try:
        fields = parse_msg(b)
    except ValueError:
        return mutate_bytes(rng, b)
    if not fields:
        return encode_msg([[rng.randrange(1, 16), 0, rng.choice(BOUNDARY_VARINTS)]])
    i = rng.randrange(len(fields))
    field, wt, v = fields[i]
    kind = rng.randrange(8)
    if kind == 0:
        del fields[i]
    elif kind == 1:
        fields[i:i + 1] = [fields[i]] * rng.choice((2, 50, 2000))
    elif wt == 0 or (wt in (1, 5) and kind < 5):
        fields[i][2] = rng.choice(BOUNDARY_VARINTS)
    elif wt == 2:
        nums = packed(v) if kind in (2, 3) else None
        if nums:  # a packed repeated field (ids, values): one set to a boundary value
            nums[rng.randrange(len(nums))] = rng.choice(BOUNDARY_VARINTS)
            fields[i][2] = b"".join(varint(x) for x in nums)
        elif depth < 4 and kind in (2, 3, 4, 5):
            fields[i][2] = mutate_msg(rng, v, depth + 1)
        else:
            fields[i][2] = mutate_bytes(rng, v)
    else:
        fields[i][2] = rng.choice(BOUNDARY_VARINTS)
    return encode_msg(fields)


def mutate_bytes(rng, b):
    b = bytearray(b)
    kind = rng.randrange(4)
    if kind == 0 and b:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == 1:
        del b[rng.randrange(len(b) + 1):]
    elif kind == 2:
        i = rng.randrange(len(b) + 1)
        b[i:i] = rng.choice((b"\xff" * 10, b"\0", b"\x80" * 11, bytes(b[:16])))
    elif b:
        i = rng.randrange(len(b))
        b[i:i] = b[i:i + rng.randrange(1, 64)] * rng.choice((2, 100))
    return bytes(b)


def mutate_pprof(rng, data):
    try:
        raw = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return mutate_bytes(rng, data)
    if rng.randrange(10) == 0:  # the gzip stream itself
        return mutate_bytes(rng, data)
    for _ in range(rng.choice((1, 1, 1, 3))):
        raw = mutate_msg(rng, raw)
    if rng.randrange(8) == 0:
        return raw  # not compressed: memtrace reads plain protobuf too
    return gzip.compress(raw, 6, mtime=0)


# ---------------------------------------------------------------- running

def seeds(memtrace, tmp):
    """(name, bytes, is_pprof) of every seed."""
    out = []
    for name in sorted(os.listdir(SEED_DIR)):
        with open(os.path.join(SEED_DIR, name), "rb") as f:
            data = f.read()
        out.append((name, data, data[:2] == b"\x1f\x8b"))
        if data[:2] != b"\x1f\x8b":  # memtrace's own pprof of it, a seed too
            pb = os.path.join(tmp, name + ".pb.gz")
            subprocess.run([memtrace, "report", os.path.join(SEED_DIR, name), "--pprof", pb],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            if os.path.exists(pb):
                with open(pb, "rb") as f:
                    out.append((name + ".pb.gz", f.read(), True))
    with open(GOHEAP, "rb") as f:
        out.append(("goheap.pb.gz", f.read(), True))
    return out


def run_one(memtrace, path, n, tmp):
    """None, or why memtrace failed on PATH."""
    extra = ([], ["--folded"], ["--pprof", os.path.join(tmp, "out%d.pb.gz" % n)],
             ["--svg", os.path.join(tmp, "out%d.svg" % n)])[n % 4]
    argv = [memtrace, "report", path] + extra
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1")
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=HANG_S, env=env)
    except subprocess.TimeoutExpired:
        return argv, "no answer after %d s (a hang?)" % HANG_S, ""
    finally:
        for e in extra[1:]:
            try:
                os.unlink(e)
            except OSError:
                pass
    err = p.stderr.decode("utf-8", "replace")
    lines = [l for l in err.splitlines() if l.strip()]
    why = None
    if SANITIZER_RE.search(err):
        why = "sanitizer report"
    elif p.returncode < 0:
        why = "killed by signal %d" % -p.returncode
    elif p.returncode not in (0, 1):
        why = "exit status %d" % p.returncode
    elif p.returncode == 1 and (not lines or not lines[-1].startswith("memtrace: ")):
        why = "exit status 1 without a 'memtrace: ' line saying why"
    if why:
        return argv, "%s (%.1f s)" % (why, time.monotonic() - t0), err
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memtrace", default=os.path.join(ROOT, "build", "memtrace-asan"))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-files", type=int, default=0)
    ap.add_argument("--save", default=None)
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    if not os.access(a.memtrace, os.X_OK):
        print("fuzz: %s is not built (make memtrace-asan)" % a.memtrace, file=sys.stderr)
        return 2
    deadline = time.monotonic() + a.seconds
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="memtrace-fuzz.")
    failures = []
    done = 0
    try:
        corpus = seeds(a.memtrace, tmp)

        found = sorted(os.listdir(FOUND_DIR)) if os.path.isdir(FOUND_DIR) else []
        for i, name in enumerate(found):
            for k in range(4):  # with each output format
                res = run_one(a.memtrace, os.path.join(FOUND_DIR, name), 4 * i + k, tmp)
                done += 1
                if res:
                    failures.append((os.path.join(FOUND_DIR, name), res))

        def make(n):
            name, data, is_pb = corpus[n % len(corpus)]
            for _ in range(rng.choice((1, 1, 2, 3))):
                data = mutate_pprof(rng, data) if is_pb else mutate_text(rng, data)
            path = os.path.join(tmp, "%06d.%s" % (n, name))
            with open(path, "wb") as f:
                f.write(data)
            return path

        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            n = 0
            while time.monotonic() < deadline and (not a.max_files or n < a.max_files):
                batch = []
                for _ in range(max(1, a.jobs)):
                    if a.max_files and n >= a.max_files:
                        break
                    batch.append((n, make(n)))
                    n += 1
                for (i, path), res in zip(batch, pool.map(lambda t: run_one(a.memtrace, t[1], t[0], tmp),
                                                          batch)):
                    done += 1
                    if res:
                        failures.append((path, res))
                    else:
                        os.unlink(path)
        if failures:
            save = a.save or tempfile.mkdtemp(prefix="memtrace-fuzz-failures.")
            os.makedirs(save, exist_ok=True)
            for path, (argv, why, err) in failures:
                kept = shutil.copy(path, save)
                argv = [kept if x == path else x for x in argv]
                print("FAIL %s: %s" % (os.path.basename(path), why))
                print("    %s" % " ".join(argv))
                for line in err.strip().splitlines()[-6:]:
                    print("    " + line)
            print("fuzz: failing inputs kept in %s" % save)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("fuzz: %d profiles, %d failed (seed %d, %d seeds)" % (done, len(failures), a.seed, len(corpus)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
