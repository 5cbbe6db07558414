"""A full disk: memtrace says so (the system's words, "No space left on
device"), exits 1, and leaves nothing that lies about what was written.

The disk is a 64 KiB tmpfs mounted by the test (unmounted after), most of
it taken by a filler file.  Checked: --record's index.tsv names only
profiles that were written, each one a whole line whose in use is the
profile's; a line of index.tsv that cannot be written whole is taken back
and said (RLIMIT_FSIZE makes the short write: tmpfs fills by pages, which
profiles reach first); an SVG larger than stdio's buffer reports ENOSPC,
not "Input/output error", and leaves no file."""

import contextlib
import os
import resource
import signal
import subprocess
import tempfile

import mtlib
from mtlib import check, check_eq, test
import test_record

NOSPACE = "No space left on device"
GOHEAP = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "heap.pb.gz")


@contextlib.contextmanager
def small_disk(free_kib):
    """A 64 KiB tmpfs with FREE_KIB of it left free (the rest a filler)."""
    d = tempfile.mkdtemp(prefix="full.", dir=mtlib.TMPDIR)
    res = mtlib.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "none", d])
    check_eq(res.rc, 0, "mount -t tmpfs", res.stderr)
    try:
        with open(os.path.join(d, "filler"), "wb") as f:
            f.write(b"\0" * ((64 - free_kib) * 1024))
        yield d
    finally:
        mtlib.run(["umount", d])
        os.rmdir(d)


def details(res):
    return "command: %s\nexit status: %s\nstderr:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 30))


def check_index(rec, res):
    """Every line of index.tsv whole, naming a profile that is there,
    whose in use is the line's.  Returns the rows."""
    with open(os.path.join(rec, "index.tsv"), "rb") as f:
        data = f.read()
    check(data == b"" or data.endswith(b"\n"), "index.tsv ends in part of a line: %r"
          % data[-80:], details(res))
    for line in data.decode().splitlines():
        check_eq(len(line.split("\t")), 5, "fields of the index line %r" % line, details(res))
    rows = test_record.read_index(rec)
    for seq, t, at, inuse, name in rows:
        path = os.path.join(rec, name)
        check(os.path.exists(path), "index.tsv names %s, which was never written (%s)"
              % (name, sorted(os.listdir(rec))), details(res))
        rep, _ = test_record.report([path])
        check_eq(rep.inuse[0], inuse, "in use in %s against index.tsv" % name)
    return rows


@test("full_disk.record", needs=("memtrace", "bpf", "root"))
def _record():
    with small_disk(24) as d:
        rec = os.path.join(d, "rec")
        res = mtlib.run_memtrace(["--record", rec, "-i", "0.2", "--keep", "0",
                                  "--", mtlib.prog_path("phases")])
        check_eq(res.rc, 1, "memtrace's exit status on a full disk", details(res))
        check(NOSPACE in res.stderr, "no %r on stderr" % NOSPACE, details(res))
        check("Input/output error" not in res.stderr, "a full disk said as EIO", details(res))
        rows = check_index(rec, res)
        check(len(rows) >= 1, "no profile in index.tsv at all: the disk too small", details(res))
        check(any(r[0] == 0 for r in rows) or "heap.pb.gz" in res.stderr,
              "the final profile neither indexed nor said to be lost", details(res))


def _small_files(limit):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write fails EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


@test("full_disk.record_index_line", needs=("memtrace", "bpf", "root"))
def _record_index_line():
    """Files limited to 1.5 KiB: the profiles (about 1 KiB) are written, the
    index outgrows the limit within the run: the line that did not fit
    whole is taken back, and said."""
    d = tempfile.mkdtemp(prefix="fsize.", dir=mtlib.TMPDIR)
    rec = os.path.join(d, "rec")
    argv = [mtlib.MEMTRACE, "--record", rec, "-i", "0.02", "--keep", "0",
            "--", mtlib.prog_path("phases")]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=mtlib.TIMEOUT, preexec_fn=_small_files(1536))
    res = mtlib.Result(p.returncode, p.stdout, p.stderr, argv)
    size = os.path.getsize(os.path.join(rec, "index.tsv"))
    check(size > 1536 - 64, "index.tsv is %d bytes: it never reached the limit (1536)" % size,
          details(res))
    check_eq(res.rc, 1, "memtrace's exit status", details(res))
    check("--record: cannot write %s" % os.path.join(rec, "index.tsv") in res.stderr,
          "no message for the index line not written", details(res))
    check_index(rec, res)


@test("full_disk.svg", needs=("memtrace", "root"))
def _svg():
    """report --svg of a profile whose SVG is larger than stdio's buffer
    (12 KiB), onto 4 KiB free: ENOSPC in one line,
    and no file left (neither the SVG nor a temporary one)."""
    with small_disk(4) as d:
        out = os.path.join(d, "flame.svg")
        res = mtlib.run_memtrace(["report", GOHEAP, "--svg", out], timeout=60)
        mtlib.check_one_line_error(res, "memtrace report --svg onto a full disk", mention=(NOSPACE,))
        check_eq(sorted(os.listdir(d)), ["filler"], "files left on the full disk")
