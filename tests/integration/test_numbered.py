"""The numbers of interval reports' files (-i): 4 digits, or as many as
--count's (the last number) when it has more, so that a shell's glob
(`heap.*.pb.gz`) lists them in order; --record's index.tsv names the same
files.  Without --count a number past 9999 takes a fifth digit (the man
page says so: `ls -v` lists those in order).  A device (-o /dev/null) is
not numbered: it gets every report."""

import os
import re
import stat

import mtlib
from mtlib import check, check_eq, test
import test_record


@test("numbered.width_of_count")
def _width_of_count():
    d = os.path.join(mtlib.TMPDIR, "numbered")
    os.makedirs(d, exist_ok=True)
    rec = os.path.join(d, "rec")
    res = mtlib.run_memtrace(["-i", "0.2", "--count", "123456", "--keep", "0",
                              "--record", rec, "--text=%s/r.txt" % d,
                              "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace -i 0.2 --count 123456 -- phases", mtlib.tail(res.stderr))
    names = [n for n in os.listdir(d) if n.startswith("r.") and n != "r.txt"]
    check(len(names) >= 3, "only %d numbered reports: %s" % (len(names), sorted(os.listdir(d))))
    for n in names:
        check(re.match(r"^r\.\d{6}\.txt$", n), "%s: not 6 digits, as --count 123456 has" % n)
    nums = [int(n.split(".")[1]) for n in sorted(names)]
    check_eq(nums, list(range(1, len(names) + 1)), "the numbers in the names' order")
    rows = test_record.read_index(rec)
    for seq, t, at, inuse, name in rows:
        want = "heap.pb.gz" if seq == 0 else "heap.%06d.pb.gz" % seq
        check_eq(name, want, "index.tsv's file of profile %d" % seq)
        check(os.path.exists(os.path.join(rec, name)), "%s not in the recording" % name)


@test("numbered.device_not_numbered", needs=("memtrace", "bpf", "root"))
def _device_not_numbered():
    """-o a device (here a null device made in the test's directory, as
    -o /dev/null): every interval report goes to it, no DEVICE.0001 files
    beside it (they were regular files created in /dev)."""
    d = os.path.join(mtlib.TMPDIR, "numbered.dev")
    os.makedirs(d, exist_ok=True)
    dev = os.path.join(d, "nulldev")
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    res = mtlib.run_memtrace(["-i", "0.2", "--keep", "0", "-o", dev,
                              "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace -i 0.2 -o DEVICE -- phases", mtlib.tail(res.stderr))
    check_eq(sorted(os.listdir(d)), ["nulldev"], "files beside the device")
    check(stat.S_ISCHR(os.stat(dev).st_mode), "the device replaced by a file")
