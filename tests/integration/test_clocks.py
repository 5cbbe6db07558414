"""The report's times agree: the timeline counts from the start of the
duration and its last point is the end of it, so `peak in use ... at T s`
and every --timeline row's t_s are at most `duration:`.  Followed
processes (sh -c 'leaks; leaks') make the stop slow (a last scan, the
probes detached): the last point used to be taken after that, past the
duration."""

import csv
import os
import re

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME


def times(args, what):
    out = os.path.join(mtlib.TMPDIR, "clocks.%s.csv" % what)
    res = mtlib.run_memtrace(["--timeline", out] + args)
    details = "stderr:\n%s\nstdout:\n%s" % (mtlib.tail(res.stderr), mtlib.tail(res.stdout, 30))
    dur = re.search(r"^duration: (\d+\.\d+) s$", res.stdout, re.M)
    peak = re.search(r"^peak in use: \d+ bytes at (\d+\.\d+) s", res.stdout, re.M)
    check(dur and peak, "%s: no duration or peak line" % what, details)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    check(rows, "%s: no timeline rows" % what, details)
    return res, float(dur.group(1)), float(peak.group(1)), max(float(r["t_s"]) for r in rows), details


@test("clocks.peak_within_duration")
def _peak():
    prog = mtlib.prog_path("leaks")
    for i in range(3):
        res, dur, peak, last, details = times(["--", "sh", "-c", '"$0"; "$0"; "$0"', prog], "sh%d" % i)
        check_eq(res.rc, BY_NAME["leaks"].exit_status, "exit status", details)
        check(peak <= dur, "run %d: peak in use at %.2f s, after the duration %.2f s" % (i, peak, dur), details)
        # The CSV has more digits than the header's two.
        check(last <= dur + 0.005, "run %d: last timeline row at %.3f s, after the duration %.2f s"
              % (i, last, dur), details)


@test("clocks.gawk")
def _gawk():
    gawk = mtlib.which("gawk")
    if not gawk:
        raise mtlib.Skip("gawk is not installed")
    res, dur, peak, last, details = times(["--", gawk, "BEGIN { for (i = 0; i < 20000; i++) a[i] = i \"x\" }"],
                                          "gawk")
    check_eq(res.rc, 0, "exit status", details)
    check(peak <= dur, "gawk: peak in use at %.2f s, after the duration %.2f s" % (peak, dur), details)
    check(last <= dur + 0.005, "gawk: last timeline row at %.3f s, after the duration %.2f s" % (last, dur), details)
