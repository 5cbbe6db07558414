"""The timeline (--timeline-interval, --timeline, --timeline-svg): memory
over time per process, against tests/progs/phases.c, whose phases are held
for several intervals each, with an 8 MiB block allocated and freed
between two samples.

  timeline.phases    the CSV's rows go through the program's states in
                     order, each exact (in use, allocated, freed, bytes
                     and objects), every held state seen in several rows;
                     the interval maxima exact, the transient block's
                     peak included; the header's "peak in use" and its
                     time; the sparkline; the last row = the report's
                     totals; the SVG parses and carries the peak
  timeline.live      the CSV has rows while the program still runs
  timeline.rollover  --timeline-max-size: FILE.1..FILE.3 kept, each with
                     its header, the rows in order across them
  timeline.off       --timeline-interval 0: "peak in use: not recorded",
                     no CSV; --timeline with it is a one-line error
  timeline.sampled   -s 64K: the last row = the report's estimates; the
                     peak and held states within 0.01% (blocks of 1 MiB
                     and more are sampled with probability 1 - e^-16 and
                     weigh their size within 1e-7)
  timeline.exec      -- bash -c 'x=$(echo hi); exec phases': the shell's
                     blocks count as freed at the exec, the last rows (its
                     and the subshell's) = the report's totals
  timeline.pprof     the peak line read back from --pprof by report
  timeline.at_peak   --at peak: the moment is the highest sample, the header
                     keeps the exact peak; --at needs the timeline
  timeline.browser   the SVG in headless Chromium (browser.py): no error,
                     the band of interval maxima drawn up to the peak

Expected numbers come from the #defines of phases.c.
"""

import csv
import math
import os
import re
import subprocess
import time
import xml.etree.ElementTree as ET

import mtlib
from mtlib import check, check_eq, test

SRC = os.path.join(mtlib.PROGS_SRC, "phases.c")


def defines():
    """phases.c's sizes: A1, A2, TRANSIENT, D (bytes) and HOLD_MS."""
    vals = {}
    with open(SRC) as f:
        for line in f:
            m = re.match(r"^#define (\w+) \(?([\d *]+)\)?$", line.strip())
            if m:
                vals[m.group(1)] = eval(m.group(2), {})  # digits and * only
    for k in ("A1", "A2", "TRANSIENT", "D", "HOLD_MS"):
        check(k in vals, "phases.c defines no %s" % k)
    return vals


def states():
    """The program's states in order: (name, in use, allocated, freed) with
    (bytes, objects) each; 'held' ones last HOLD_MS."""
    v = defines()
    a1, a2, t, d = v["A1"], v["A2"], v["TRANSIENT"], v["D"]
    return [
        ("a1", False, (a1, 1), (a1, 1), (0, 0)),
        ("A", True, (a1 + a2, 2), (a1 + a2, 2), (0, 0)),
        ("transient", False, (a1 + a2 + t, 3), (a1 + a2 + t, 3), (0, 0)),
        ("A again", True, (a1 + a2, 2), (a1 + a2 + t, 3), (t, 1)),
        ("C", True, (a2, 1), (a1 + a2 + t, 3), (a1 + t, 2)),
        ("C+D", True, (a2 + d, 2), (a1 + a2 + t + d, 4), (a1 + t, 2)),
    ]


COLUMNS = ["t_s", "pid", "comm", "inuse_bytes", "inuse_objects", "alloc_bytes",
           "alloc_objects", "free_bytes", "free_objects", "max_inuse_bytes"]


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    check(rows, "%s is empty" % path)
    check_eq(rows[0], COLUMNS, "the CSV's header row")
    out = []
    for r in rows[1:]:
        check_eq(len(r), len(COLUMNS), "columns in row %r" % r)
        d = dict(zip(COLUMNS, r))
        for k in COLUMNS:
            if k != "comm":
                d[k] = float(d[k]) if k == "t_s" else int(d[k])
        out.append(d)
    return out


def values(row):
    return ((row["inuse_bytes"], row["inuse_objects"]), (row["alloc_bytes"], row["alloc_objects"]),
            (row["free_bytes"], row["free_objects"]))


def run_phases(name, extra=(), svg=False):
    out = os.path.join(mtlib.TMPDIR, "tl.%s.txt" % name)
    path = os.path.join(mtlib.TMPDIR, "tl.%s.csv" % name)
    args = list(extra) + ["--unit", "B", "-o", out, "--timeline", path]
    if svg:
        args += ["--timeline-svg", path + ".svg"]
    res = mtlib.run_memtrace(args + ["--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace -- phases", mtlib.tail(res.stderr))
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    return rep, read_csv(path), path


def check_last_row(rep, rows, details):
    """The last row (taken once recording stopped) is the report's totals."""
    last = rows[-1]
    check_eq(values(last), (rep.inuse, rep.allocated, rep.freed),
             "the last row's (in use, allocated, freed) against the report's header", details)


@test("timeline.phases")
def _phases():
    rep, rows, path = run_phases("phases", svg=True)
    details = "\n".join(str(r) for r in rows)
    st = states()
    pid = rep.target_pid
    check(all(r["pid"] == pid and r["comm"] == "phases" for r in rows),
          "every row is pid %d (phases)" % pid, details)
    # Each row is one of the states, in the program's order.
    at, seen = 0, [0] * len(st)
    for r in rows:
        k = next((i for i in range(at, len(st)) if values(r) == st[i][2:]), None)
        check(k is not None, "row %r is none of the states from %s on" % (r, st[at][0]), details)
        at = k
        seen[k] += 1
    hold = defines()["HOLD_MS"] / 1000.0
    for i, s in enumerate(st):
        if s[1]:
            check(seen[i] >= 2, "state %s (held %.1f s) seen in %d rows" % (s[0], hold, seen[i]), details)
    # Times increase, an interval (0.1 s) apart, give or take a loaded machine.
    gaps = sorted(b["t_s"] - a["t_s"] for a, b in zip(rows, rows[1:-1]))
    check(all(g > 0 for g in gaps), "times increase", details)
    check(0.08 <= gaps[len(gaps) // 2] <= 0.2, "median interval %.3f s" % gaps[len(gaps) // 2], details)
    # Interval maxima: at least the in use at both ends, at most the peak;
    # the transient block in one interval (or the next, if an allocation
    # raced the sample), never sampled as in use outside it.
    v = defines()
    peak = v["A1"] + v["A2"] + v["TRANSIENT"]
    prev = 0
    for r in rows:
        check(max(prev, r["inuse_bytes"]) <= r["max_inuse_bytes"] <= peak,
              "row %r: interval max between its ends' in use and the peak" % r, details)
        prev = r["inuse_bytes"]
    top = [i for i, r in enumerate(rows) if r["max_inuse_bytes"] == peak]
    check(1 <= len(top) <= 2 and top[-1] - top[0] <= 1,
          "rows with the transient peak %d: %s" % (peak, top), details)
    first_after = next(i for i, r in enumerate(rows) if r["alloc_objects"] >= 3)
    check(top[0] in (first_after, first_after + 1),
          "the peak is in the interval of the transient block (row %d), not row %d" % (first_after, top[0]),
          details)
    # Away from a change, the interval max is the in use itself (exact,
    # not a bound): the rows whose state and previous state are one held
    # state, other than right after the transient.
    for i in range(1, len(rows)):
        if values(rows[i]) == values(rows[i - 1]) and i not in top and i - 1 not in top:
            check_eq(rows[i]["max_inuse_bytes"], rows[i]["inuse_bytes"],
                     "row %d's interval max (steady state)" % i, details)
    # The header: the exact peak, at the time of its row.
    check(rep.peak is not None, "no 'peak in use:' in the header", rep.text[:800])
    check_eq(rep.peak[0], peak, "header's peak in use (bytes)", rep.text[:800])
    check_eq("%.2f" % rep.peak[1], "%.2f" % rows[top[0]]["t_s"], "header's peak time")
    # The sparkline: one cell an interval (fewer than 60), the full block
    # where the peak was, the lowest before the first allocation is seen.
    line = rep.header.get("in use over time", "")
    m = re.match(r"^\|(.*)\| \((\d+) cells of (\d+\.\d\d) s; █ (\S+)\)$", line)
    check(m, "cannot parse 'in use over time: %s'" % line, rep.text[:800])
    cells, n = m.group(1), int(m.group(2))
    ncells = min(60, math.ceil(rows[-1]["t_s"] / 0.1 - 1e-6))
    check(abs(n - ncells) <= 1, "%d cells for a run of %.2f s" % (n, rows[-1]["t_s"]), line)
    check_eq(len(cells), n, "characters in the sparkline")
    check(set(cells) <= set(" ▁▂▃▄▅▆▇█"), "sparkline characters: %r" % cells)
    check(1 <= cells.count("█") <= 2, "the full block once (or twice, astride two cells): %r" % cells)
    lvl = " ▁▂▃▄▅▆▇█"
    held_a = lvl[math.ceil((v["A1"] + v["A2"]) / peak * 8)]
    check(held_a in cells and cells.index(held_a) < cells.index("█"),
          "the held state A (%s) before the peak: %r" % (held_a, cells))
    check(cells.rstrip() == cells and " " not in cells.strip(),
          "blank cells only before the first allocation: %r" % cells)
    check_last_row(rep, rows, details)
    # The SVG: XML, with the process and its exact peak.
    svg = ET.parse(path + ".svg").getroot()
    check_eq(svg.tag, "{http://www.w3.org/2000/svg}svg", "the SVG's root")
    series = svg.findall(".//{http://www.w3.org/2000/svg}g[@class='series']")
    check_eq([(g.get("data-pid"), g.get("data-peak-bytes")) for g in series], [(str(pid), str(peak))],
             "the SVG's series")
    legend = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    check("pid %d (phases): peak in use %d bytes" % (pid, peak) in legend, "the SVG's legend", legend)
    check("MiB" in legend and " s " in legend + " ", "axes in MiB and seconds", legend)
    with open(path + ".svg") as f:
        text = f.read()
    check("href" not in text and "<script" not in text, "the SVG refers to nothing outside")


@test("timeline.live")
def _live():
    """Rows reach the file while the program runs (tail -f)."""
    path = os.path.join(mtlib.TMPDIR, "tl.live.csv")
    mt = mtlib.Bg([mtlib.MEMTRACE, "--timeline", path, "-o", os.devnull, "--",
                   mtlib.prog_path("phases")], stdin=subprocess.DEVNULL)
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "memtrace did not start tracing", mt.details())
        deadline = time.monotonic() + 5
        rows = []
        while time.monotonic() < deadline and len(rows) < 3 and mt.alive():
            time.sleep(0.05)
            rows = read_csv(path) if os.path.exists(path) else []
        check(mt.alive(), "memtrace exited before the check", mt.details())
        check(len(rows) >= 3, "rows in the CSV while tracing: %d" % len(rows))
    finally:
        check_eq(mt.wait(60), 0, "memtrace's exit status")


@test("timeline.rollover")
def _rollover():
    path = os.path.join(mtlib.TMPDIR, "tl.roll.csv")
    out = os.path.join(mtlib.TMPDIR, "tl.roll.txt")
    res = mtlib.run_memtrace(["--timeline", path, "--timeline-interval", "0.01",
                              "--timeline-max-size", "1K", "--unit", "B", "-o", out,
                              "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace -- phases", mtlib.tail(res.stderr))
    files = [path + ".3", path + ".2", path + ".1", path]
    for f in files:
        check(os.path.exists(f), "%s was not kept" % os.path.basename(f))
        check(os.path.getsize(f) <= 1024, "%s has %d bytes, more than 1K" % (f, os.path.getsize(f)))
    check(not os.path.exists(path + ".4"), "FILE.4: only 3 rolled-over files are kept")
    rows = [r for f in files for r in read_csv(f)]
    ts = [r["t_s"] for r in rows]
    check(ts == sorted(ts) and len(set(ts)) == len(ts), "rows in time order across the files")
    gaps = [b - a for a, b in zip(ts, ts[1:-1])]
    check(max(gaps) < 0.2, "no rows lost between the files (largest gap %.3f s)" % max(gaps))
    with open(out) as f:
        check_last_row(mtlib.parse_report(f.read()), rows, "")


@test("timeline.off")
def _off():
    out = os.path.join(mtlib.TMPDIR, "tl.off.txt")
    res = mtlib.run_memtrace(["--timeline-interval", "0", "-o", out, "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace --timeline-interval 0", mtlib.tail(res.stderr))
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    check_eq(rep.header.get("peak in use"), "not recorded", "'peak in use:' with the timeline off")
    check("in use over time" not in rep.header, "a sparkline with the timeline off")
    path = os.path.join(mtlib.TMPDIR, "tl.off.csv")
    for args in (["--timeline-interval", "0", "--timeline", path],
                 ["--timeline-interval", "0", "--timeline-svg", path],
                 ["--timeline-interval", "5ms"], ["--timeline-interval", "x"],
                 ["--timeline-max-size", "100"]):
        res = mtlib.run_memtrace(args + ["--", mtlib.prog_path("phases")])
        mtlib.check_one_line_error(res, "memtrace %s" % " ".join(args), mention=("timeline",))
        check_eq(res.rc, 2, "exit status of memtrace %s" % " ".join(args))
        check(not os.path.exists(path), "memtrace %s created %s" % (" ".join(args), path))


@test("timeline.sampled")
def _sampled():
    rep, rows, _ = run_phases("sampled", extra=["-s", "64K"])
    details = "\n".join(str(r) for r in rows)
    check(rep.sampling is not None, "a sampled report says so")
    check_last_row(rep, rows, details)
    v = defines()
    peak = v["A1"] + v["A2"] + v["TRANSIENT"]
    check(rep.peak is not None and abs(rep.peak[0] - peak) <= peak * 1e-4,
          "sampled peak %r, expected %d within 0.01%%" % (rep.peak, peak), rep.text[:800])
    held_c = [r["inuse_bytes"] for r in rows if r["alloc_objects"] >= 3 and
              r["free_objects"] >= 2 and r["alloc_objects"] == rows[-1]["alloc_objects"]]
    # D (64 KiB = N) is sampled with probability 1 - 1/e, standing for
    # N / (1 - 1/e); A2 within 0.01% either way.
    last = rows[-1]["inuse_bytes"]
    d_est = v["D"] / (1 - math.exp(-1))
    check(abs(last - v["A2"]) <= v["A2"] * 1e-4 or abs(last - v["A2"] - d_est) <= d_est * 1e-3 + v["A2"] * 1e-4,
          "last in use %d: A2 (%d), or A2 and D's estimate (%.0f)" % (last, v["A2"], d_est), details)
    check(held_c, "rows after A1's free", details)


@test("timeline.exec")
def _exec():
    """bash allocates, then execs phases: its blocks are freed at the exec
    (as the report says); the last row is the report's totals, with the
    last row of the subshell of $(...), a process of its own (followed)."""
    bash = mtlib.which("bash")
    check(bash, "no bash")
    out = os.path.join(mtlib.TMPDIR, "tl.exec.txt")
    path = os.path.join(mtlib.TMPDIR, "tl.exec.csv")
    res = mtlib.run_memtrace(["--unit", "B", "-o", out, "--timeline", path, "--", bash, "-c",
                              "x=$(echo hi); exec %s" % mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace -- bash -c 'exec phases'", mtlib.tail(res.stderr))
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    rows = read_csv(path)
    details = "\n".join(str(r) for r in rows)
    check_eq(rows[-1]["comm"], "phases", "the process's name after the exec", details)
    check(rows[-1]["alloc_objects"] > 4, "bash's allocations count as allocated", details)
    last = {r["pid"]: values(r) for r in rows}
    check_eq(len(last), 2, "processes in the rows (bash/phases and the subshell)", details)
    check_eq(tuple(tuple(sum(v[k][i] for v in last.values()) for i in range(2)) for k in range(3)),
             (rep.inuse, rep.allocated, rep.freed),
             "each process's last row, summed, against the report's header", details)
    v = defines()
    check_eq(rows[-1]["inuse_bytes"], v["A2"] + v["D"], "in use at the end: phases's, not bash's", details)


@test("timeline.pprof")
def _pprof():
    """The peak line and sparkline are facts of the pprof profile."""
    pb = os.path.join(mtlib.TMPDIR, "tl.pb.gz")
    text = os.path.join(mtlib.TMPDIR, "tl.pprof.txt")
    res = mtlib.run_memtrace(["--pprof", pb, "--text=" + text, "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace --pprof -- phases", mtlib.tail(res.stderr))
    res = mtlib.run_memtrace(["report", pb])
    check_eq(res.rc, 0, "memtrace report", mtlib.tail(res.stderr))
    back = mtlib.parse_report(res.stdout)
    with open(text) as f:
        live = mtlib.parse_report(f.read())
    v = defines()
    check_eq(live.peak[0], v["A1"] + v["A2"] + v["TRANSIENT"], "the live report's peak")
    check_eq(back.header["peak in use"], live.header["peak in use"], "peak in use read back")
    check_eq(back.header["in use over time"], live.header["in use over time"], "sparkline read back")


@test("timeline.browser")
def _browser():
    """The SVG as Chromium renders it: no error, and the band of interval
    maxima reaches the transient peak's height (blue inside, not above)."""
    import browser
    _, rows, path = run_phases("browser", svg=True)
    svg = path + ".svg"
    png = os.path.join(mtlib.TMPDIR, "tl.browser.png")
    root = ET.parse(svg).getroot()
    width, height = int(root.get("width")), int(root.get("height"))
    log = browser.screenshot(svg, png, width=width, height=height)
    check_eq(browser.js_errors(log), [], "errors in Chromium's console")
    band = root.find(".//{http://www.w3.org/2000/svg}path[@class='max']")
    nums = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", band.get("d"))]
    pts = list(zip(nums[0::2], nums[1::2]))
    top = min(y for _, y in pts)
    xs = [x for x, y in pts if y == top]
    x = (min(xs) + max(xs)) / 2
    img = browser.Png(png)

    def blue(px):
        r, g, b = px
        return b > r + 10

    inside, above = img.rgb(x, top + 4), img.rgb(x, top - 8)
    check(blue(inside), "the peak's band at (%.0f, %.0f) is not drawn: %r" % (x, top + 4, inside))
    check(not blue(above), "blue above the peak's band at (%.0f, %.0f): %r" % (x, top - 8, above))


@test("timeline.at_peak")
def _at_peak():
    """--at peak takes the moment from the timeline's samples: the highest
    in use at a sample (A1 + A2: the transient block lives between two),
    while the header's peak stays the whole run's exact one."""
    out = os.path.join(mtlib.TMPDIR, "tl.at.txt")
    res = mtlib.run_memtrace(["--at", "peak", "--unit", "B", "-o", out, "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace --at peak -- phases", mtlib.tail(res.stderr))
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    v = defines()
    check("moment" in rep.header, "no 'moment:' line", rep.text[:800])
    check_eq(rep.inuse, (v["A1"] + v["A2"], 2), "in use at the moment", rep.text[:800])
    check_eq(rep.peak[0], v["A1"] + v["A2"] + v["TRANSIENT"], "the run's peak in the header", rep.text[:800])
    res = mtlib.run_memtrace(["--at", "peak", "--timeline-interval", "0", "--", mtlib.prog_path("phases")])
    mtlib.check_one_line_error(res, "--at peak --timeline-interval 0", mention=("timeline",))
