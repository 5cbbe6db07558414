"""--record DIR and `memtrace report DIR --at peak|TIME`, on phases.c (the
timeline's ground truth: heap in use goes through known states, each held
for several 100 ms samples; test_timeline.py has the states).

A recording holds a profile per interval, taken at the interval's highest
timeline sample, the final profile, the timeline and index.tsv.  Checked:
each profile's in use is one of the program's states and equals what the
index says; --at peak picks the highest (A1 + A2: the transient block lives
between two samples); --at TIME picks the interval that holds TIME; no --at
picks the final profile; a directory that already holds a recording is
refused; --at on a plain file is refused."""

import os
import shutil

import mtlib
from mtlib import check, check_eq, test
import test_timeline


def read_index(d):
    rows = []
    with open(os.path.join(d, "index.tsv")) as f:
        for line in f:
            seq, t, at, inuse, name = line.rstrip("\n").split("\t")
            rows.append((int(seq), float(t), float(at), int(inuse), name))
    return rows


def report(args):
    res = mtlib.run_memtrace(["report"] + args + ["--unit", "B"])
    check_eq(res.rc, 0, "memtrace report %s" % " ".join(args), mtlib.tail(res.stderr))
    return mtlib.parse_report(res.stdout), res


@test("record.phases")
def _record_phases():
    d = os.path.join(mtlib.TMPDIR, "rec.phases")
    shutil.rmtree(d, ignore_errors=True)
    res = mtlib.run_memtrace(["--record", d, "-i", "0.5", "--keep", "0", "-o", "/dev/null",
                              "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace --record -- phases", mtlib.tail(res.stderr))
    for name in ("timeline.csv", "timeline.svg", "heap.pb.gz", "index.tsv"):
        check(os.path.exists(os.path.join(d, name)), "no %s in the recording: %s" % (name, os.listdir(d)))
    rows = read_index(d)
    check(len(rows) >= 4, "only %d profiles in index.tsv: %s" % (len(rows), rows))
    check_eq(rows[-1][0], 0, "the last index line is the final profile")
    check_eq([r[0] for r in rows[:-1]], list(range(1, len(rows))), "interval numbers")
    legal = {s[2][0] for s in test_timeline.states()} | {0}
    v = test_timeline.defines()
    for seq, t, at, inuse, name in rows:
        check(inuse in legal, "profile %s: %d bytes in use is none of the states %s"
              % (name, inuse, sorted(legal)))
        check(at <= t + 0.001, "profile %s: its moment %.3f after its interval's end %.3f"
              % (name, at, t))
        rep, _ = report([os.path.join(d, name)])
        check_eq(rep.inuse[0], inuse, "in use in %s against index.tsv" % name)
    peak = max(r[3] for r in rows)
    check_eq(peak, v["A1"] + v["A2"], "the highest profile kept (at the timeline's samples)")

    rep, res = report([d, "--at", "peak"])
    check_eq(rep.inuse[0], peak, "report DIR --at peak")
    check("moment" in rep.header, "no 'moment:' line in report DIR --at peak", rep.text[:800])
    rep, _ = report([d])
    check_eq(rep.inuse[0], rows[-1][3], "report DIR: the final profile")
    check_eq(rep.inuse[0], v["A2"] + v["D"], "the final profile: C + D in use at exit")
    for r in rows[:-1]:
        t_mid = r[1] - 0.1
        want = next(x for x in rows if x[1] >= t_mid)
        rep, res = report([d, "--at", "%.3fs" % t_mid])
        check(want[4] in res.stderr, "report DIR --at %.3fs did not pick %s: %s"
              % (t_mid, want[4], res.stderr.strip()))
        check_eq(rep.inuse[0], want[3], "report DIR --at %.3fs" % t_mid)

    again = mtlib.run_memtrace(["--record", d, "--", mtlib.prog_path("phases")])
    mtlib.check_one_line_error(again, "--record into a recording", mention=("already",))
    plain = mtlib.run_memtrace(["report", os.path.join(d, "heap.pb.gz"), "--at", "peak"])
    mtlib.check_one_line_error(plain, "report FILE --at", mention=("recording",))
    late = mtlib.run_memtrace(["report", d, "--at", "1h"])
    mtlib.check_one_line_error(late, "report DIR --at 1h", mention=("no profile",))


@test("record.at_time_live")
def _at_time_live():
    """--at TIME while tracing, with -i: the highest sample of the interval
    that holds TIME.  phases holds A1 + A2 from about 0.4 s to 1.2 s (the
    transient block between two samples): the interval [0.5 s, 1.0 s)."""
    v = test_timeline.defines()
    out = os.path.join(mtlib.TMPDIR, "rec.at_time.txt")
    res = mtlib.run_memtrace(["--at", "0.7s", "-i", "0.5", "--unit", "B", "--text=" + out,
                              "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace --at 0.7s -i 0.5 -- phases", mtlib.tail(res.stderr))
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    check_eq(rep.inuse, (v["A1"] + v["A2"], 2), "in use at the moment", rep.text[:800])
    m = rep.header.get("moment", "")
    check(m.endswith("(--at)"), "moment line: %r" % m)
    at = float(m.split()[0])
    check(0.5 <= at < 1.0, "the moment %.2f s is outside the interval [0.5, 1.0)" % at)
