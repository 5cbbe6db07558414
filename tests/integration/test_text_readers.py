"""memtrace report on text heap profiles and files it must refuse, as
untrusted input (issue 23, "Readers"):

  readers.big.*        200,000 stacks of each text format (tcmalloc, jemalloc,
                       Go debug=1), made by bench/text_profiles.py: the totals
                       in the header = the generator's (the time they take is
                       scripts/bench.sh's, never checked here)
  readers.bad.*        figures no profile can hold (a period of -1 or 2^64,
                       numbers beyond 64 bits, addresses "0x-1", totals past
                       2^62, a NUL in a record): one line of error, exit 1
  readers.sparse       a 2 GiB sparse file: refused before it is read (max
                       RSS measured), and a 300 MB one under --max-memory 256M
  readers.gzip_stream  a gzip file of 48 MB (stored, not compressed) under
                       --max-memory 16M: inflated as it is read, so memtrace
                       never holds the compressed file (max RSS measured)
  readers.gzip_pipe    Go's heap.pb.gz through a pipe, whole and as two gzip
                       members: the file's totals; trailing garbage, cut short:
                       one line of error
"""

import gzip
import importlib.util
import os

import mtlib
from mtlib import check, check_eq, test
from test_pprof_tools import report_usage


def generator():
    path = os.path.join(mtlib.ROOT, "bench", "text_profiles.py")
    spec = importlib.util.spec_from_file_location("text_profiles", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_big_test(fmt):
    @test("readers.big." + fmt, needs=("memtrace",))
    def _t():
        path = os.path.join(mtlib.TMPDIR, "big.%s.heap" % fmt)
        want = dict(kv.split("=") for kv in generator().write(fmt, 200000, path).split())
        res = mtlib.run_memtrace(["report", path, "--unit", "B", "-n", "3"])
        check_eq(res.rc, 0, "memtrace report on 200,000 %s stacks" % fmt, mtlib.tail(res.stderr))
        rep = mtlib.parse_report(res.stdout)
        check_eq(rep.inuse, (int(want["inuse_bytes"]), int(want["inuse_objects"])),
                 "in use (bytes, objects) of 200,000 %s stacks" % fmt, res.stdout[:600])
        check_eq(rep.allocated, (int(want["alloc_bytes"]), int(want["alloc_objects"])),
                 "allocated (bytes, objects) of 200,000 %s stacks" % fmt, res.stdout[:600])


for _f in ("tcmalloc", "jemalloc", "go"):
    make_big_test(_f)

TC = "heap profile: 1: 1 [1: 1] @ heapprofile\n"
GO = "heap profile: 1: 1 [1: 1] @ heap/2\n"
GO_FRAME = "#\t0x10\tmain.f+0x4\t/src/main.go:3\n"
BIG = "9223372036854775807"  # INT64_MAX


def make_bad_test(name, text, mention):
    @test("readers.bad." + name, needs=("memtrace",))
    def _t():
        path = os.path.join(mtlib.TMPDIR, "readers.bad.%s.heap" % name)
        with open(path, "wb") as f:
            f.write(text.encode())
        res = mtlib.run_memtrace(["report", path])
        mtlib.check_one_line_error(res, "memtrace report on %r" % text[:80], (mention,))


# Sampling periods that cannot be: negative, past 64 bits, past int64_t.
make_bad_test("je_period_negative", "heap_v2/-1\n@ 0x10\n  t*: 1: 1 [1: 1]\n", "line 1")
make_bad_test("je_period_2_64", "heap_v2/18446744073709551616\n@ 0x10\n  t*: 1: 1 [1: 1]\n", "line 1")
make_bad_test("je_period_past_int64", "heap_v2/9223372036854775808\n@ 0x10\n  t*: 1: 1 [1: 1]\n", "line 1")
make_bad_test("tc_period_negative", "heap profile: 1: 1 [1: 1] @ heap_v2/-5\n 1: 1 [1: 1] @ 0x10\n", "line 1")
make_bad_test("go_rate_negative", "heap profile: 1: 1 [1: 1] @ heap/-2\n1: 1 [1: 1] @ 0x10\n" + GO_FRAME,
              "line 1")
# Figures past 64 bits (sscanf saturated them).
make_bad_test("tc_figure_2_64", TC + " 1: 18446744073709551616 [1: 18446744073709551616] @ 0x10\n", "line 2")
make_bad_test("go_figure_2_64", GO + "1: 18446744073709551616 [1: 18446744073709551616] @ 0x10\n" + GO_FRAME,
              "line 2")
make_bad_test("je_figure_2_64", "heap_v2/1\n@ 0x10\n  t*: 1: 99999999999999999999 [1: 99999999999999999999]\n",
              "line 3")
# An address that is not one (strtoull took "-1" as 2^64-1).
make_bad_test("tc_address_negative", TC + " 1: 8 [1: 8] @ 0x-1\n", "line 2")
# One block of INT64_MAX bytes with period INT64_MAX: unbiased, 2^63 x more.
make_bad_test("tc_unbias_overflow", "heap profile: 1: 1 [1: 1] @ heap_v2/%s\n 1: 1 [1: 1] @ 0x10\n" % BIG,
              "too large")
# Totals past int64_t: Go's report said "in use: -9223372036854772737 bytes".
make_bad_test("go_totals", GO + ("1: %s [1: %s] @ 0x10\n" % (BIG, BIG)) + GO_FRAME + "\n"
              + "1: 4096 [1: 4096] @ 0x20\n" + GO_FRAME.replace("0x10", "0x20"), "2^62")
make_bad_test("tc_totals", TC + (" 1: %s [1: %s] @ 0x10\n" % (BIG, BIG)) * 2, "2^62")


@test("readers.bad.pprof_totals", needs=("memtrace",))
def _pprof_totals():
    """Two samples of 2^63-1 bytes in use: the report said "in use: 0 bytes"."""
    from test_pprof_tools import pb_field, varint
    head = pb_field(6, b"") + pb_field(6, b"inuse_space") + pb_field(6, b"bytes") + \
        pb_field(1, b"\x08\x01\x10\x02")
    path = os.path.join(mtlib.TMPDIR, "readers.bad.pprof_totals.pb")
    with open(path, "wb") as f:
        f.write(head + pb_field(2, b"\x10" + varint(int(BIG))) * 2)
    res = mtlib.run_memtrace(["report", path])
    mtlib.check_one_line_error(res, "memtrace report on 2 samples of 2^63-1 bytes", ("2^62",))


# A NUL inside a record ends nothing: the record is malformed.
make_bad_test("je_nul", "heap_v2/1\n@ 0x10\0 junk\n  t*: 1: 8 [1: 8]\n", "line 2")


def usage_line(path, rc, err, secs, rss):
    return "memtrace report %s (%d bytes): exit %d in %.2f s, max RSS %d KiB\nstderr:\n%s" % (
        path, os.path.getsize(path), rc, secs, rss, err)


def sparse(name, size):
    path = os.path.join(mtlib.TMPDIR, name)
    with open(path, "wb") as f:
        f.truncate(size)
    return path


@test("readers.sparse", needs=("memtrace",))
def _sparse():
    path = sparse("sparse.2g", 2 << 30)
    try:
        for extra in ([], ["--max-memory", "256M"]):
            rc, err, secs, rss = report_usage([path] + extra)
            d = usage_line(path, rc, err, secs, rss)
            lines = [l for l in err.splitlines() if l.strip()]
            check(rc == 1 and len(lines) == 1 and "larger than" in lines[0], "expected one line of error", d)
            check(rss < 32 * 1024, "max RSS %d KiB: the file was read before its size was checked" % rss, d)
    finally:
        os.unlink(path)
    # Under the 1 GiB cap but over the budget: refused unread too.
    path = sparse("sparse.300m", 300 << 20)
    try:
        rc, err, secs, rss = report_usage([path, "--max-memory", "256M"])
        d = usage_line(path, rc, err, secs, rss)
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc == 1 and len(lines) == 1 and "--max-memory" in lines[0],
              "expected one line of error naming --max-memory", d)
        check(rss < 32 * 1024, "max RSS %d KiB: the file was read though larger than the budget" % rss, d)
    finally:
        os.unlink(path)


@test("readers.gzip_stream", needs=("memtrace",))
def _gzip_stream():
    path = os.path.join(mtlib.TMPDIR, "stored.gz")
    with gzip.open(path, "wb", compresslevel=0) as f:
        for _ in range(48):
            f.write(os.urandom(1 << 20))
    try:
        rc, err, secs, rss = report_usage([path, "--max-memory", "16M"])
        d = usage_line(path, rc, err, secs, rss)
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc == 1 and len(lines) == 1 and "--max-memory" in lines[0],
              "expected one line of error naming --max-memory", d)
        # 16 MiB inflated at most, memtrace's own ~8 MiB; never the 48 MB file.
        check(rss < 40 * 1024, "max RSS %d KiB: more than the budget and memtrace's own" % rss, d)
    finally:
        os.unlink(path)


def report_stdin(data):
    """memtrace report /dev/stdin, DATA fed through a pipe (its size unknown)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            with os.fdopen(w, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(w)
    try:
        with os.fdopen(r, "rb") as pipe:
            return mtlib.run_memtrace(["report", "/dev/stdin", "--unit", "B"], stdin=pipe)
    finally:
        os.waitpid(pid, 0)


@test("readers.gzip_pipe", needs=("memtrace",))
def _gzip_pipe():
    """Go's heap.pb.gz through a pipe, whole and as two gzip members, reads
    as the file does; with trailing garbage or cut short, one line."""
    path = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "heap.pb.gz")
    res = mtlib.run_memtrace(["report", path, "--unit", "B"])
    check_eq(res.rc, 0, "memtrace report heap.pb.gz", res.stderr)
    want = mtlib.parse_report(res.stdout).inuse
    with open(path, "rb") as f:
        gz = f.read()
    raw = gzip.decompress(gz)
    half = len(raw) // 2
    for what, data in (("whole", gz), ("two members", gzip.compress(raw[:half]) + gzip.compress(raw[half:]))):
        res = report_stdin(data)
        check_eq(res.rc, 0, "memtrace report /dev/stdin (%s)" % what, res.stderr)
        check_eq(mtlib.parse_report(res.stdout).inuse, want, "in use read through a pipe (%s)" % what)
    for what, data, mention in (("trailing garbage", gz + b"junk", "trailing garbage"),
                                ("cut short", gz[:len(gz) // 2], "truncated")):
        res = report_stdin(data)
        mtlib.check_one_line_error(res, "memtrace report /dev/stdin (%s)" % what, (mention,))
