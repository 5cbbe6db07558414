"""memtrace itself built with sanitizers (`make memtrace-asan memtrace-tsan`,
tests/sanitize.mk) and driven through the parts that a plain build would
get through silently: AddressSanitizer + UBSan over live tracing with
interval reports of a followed command, ThreadSanitizer over the threaded
parts (the HTTP bridge, the unwind-table builder, the loop).

A run passes when memtrace exits 0 with no sanitizer report on stderr and
its final report has the numbers the program is known to have."""

import os
import re

import mtlib
from mtlib import check, check_eq, test
import test_timeline

ASAN = os.path.join(mtlib.ROOT, "build", "memtrace-asan")
TSAN = os.path.join(mtlib.ROOT, "build", "memtrace-tsan")

# What a sanitizer prints when it finds something (UBSan: "runtime error").
SAN_RE = re.compile(r"runtime error:|ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|"
                    r"WARNING: ThreadSanitizer")


def sanitized(path):
    if not os.access(path, os.X_OK):
        raise mtlib.Fail("%s is not built (make %s)" % (path, os.path.basename(path)))
    return path


def check_clean(res, what):
    details = "command: %s\nexit status: %s\nstderr:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 40))
    m = SAN_RE.search(res.stderr)
    check(m is None, "%s: sanitizer report: %s" % (what, m and m.group(0)), details)
    check_eq(res.rc, 0, "%s: exit status" % what, details)


@test("sanitizers.asan_live_intervals")
def _asan_live_intervals():
    """-i with a followed command: an interval report is taken while no
    process has exited yet (tracer.c's append_raw once passed memcpy a NULL
    source then).  Every report one of phases.c's states, the last exact."""
    d = os.path.join(mtlib.TMPDIR, "asan.intervals")
    os.makedirs(d, exist_ok=True)
    res = mtlib.run([sanitized(ASAN), "-i", "0.3", "--keep", "0", "--unit", "B",
                     "--text=%s/r.txt" % d, "--", mtlib.prog_path("phases")])
    check_clean(res, "memtrace-asan -i 0.3 -- phases")
    names = sorted(n for n in os.listdir(d) if re.match(r"^r\.\d+\.txt$", n))
    check(len(names) >= 3, "only %d interval reports: %s" % (len(names), os.listdir(d)))
    legal = {s[2][0] for s in test_timeline.states()} | {0}
    for n in names:
        with open(os.path.join(d, n)) as f:
            rep = mtlib.parse_report(f.read())
        check(rep.inuse[0] in legal, "%s: %d bytes in use is none of the states %s"
              % (n, rep.inuse[0], sorted(legal)))
    with open(os.path.join(d, "r.txt")) as f:
        final = mtlib.parse_report(f.read())
    v = test_timeline.defines()
    check_eq(final.inuse, (v["A2"] + v["D"], 2), "the final report's in use")
