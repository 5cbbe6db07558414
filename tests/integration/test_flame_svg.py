"""--svg FILE, the flame graph, against ground truth and in a browser.

  svg.live.*       memtrace --svg -- PROG: the file parses as XML; the
                   frames, rebuilt into a tree from their geometry, carry
                   the stacks of programs.py with their exact values in
                   their titles, each function's self value is its flat
                   value, the root is the total, every share is right
  svg.report.*     memtrace report saved.pb.gz --svg: the same frames as
                   the live run; -o FILE.svg writes the same file; an
                   empty profile; a file that cannot be written
  svg.browser.*    the live file in headless Chromium: its script runs
                   without an error, ?s=REGEX highlights the matching
                   frames and shows their share (programs.py's sum),
                   ?zoom=NAME spreads that frame over the width; a
                   screenshot shows each frame in its colour

Expected values come from programs.py (never from memtrace), except where
a test compares the live file with the one read back.
"""

import collections
import functools
import os
import re
import tempfile
import xml.etree.ElementTree as ET

import browser
import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, totals

NS = "{http://www.w3.org/2000/svg}"
FRAME_H = 16
WHAT = {"inuse_space": "bytes in use", "inuse_objects": "objects in use",
        "alloc_space": "bytes allocated", "alloc_objects": "objects allocated"}
INFO_BYTES_RE = re.compile(r"^(\S+) \((\d+) bytes?\), (\d+\.\d\d)% of (.+)$")
INFO_OBJECTS_RE = re.compile(r"^(\d+) objects?, (\d+\.\d\d)% of (.+)$")
GOHEAP = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "heap.pb.gz")

# (program, metric) traced live.
RUNS = (("leaks", "inuse_space"), ("leaks", "alloc_objects"), ("shapes", "inuse_space"),
        ("realloc", "alloc_space"))


# ---------------------------------------------------------------- reading the SVG

Frame = collections.namedtuple("Frame", "name value share what x v y depth path fill")


class Svg:
    """A flame graph as a tree: frames with their path of names from the
    root (the root "all" has the path ())."""

    def __init__(self, path, details=""):
        self.file = path
        try:
            self.root = ET.parse(path).getroot()
        except ET.ParseError as e:
            raise mtlib.Fail("%s is not well-formed XML: %s" % (path, e), details)
        check_eq(self.root.tag, NS + "svg", "%s: the document element" % path, details)
        self.total = int(self.root.get("data-total"))
        self.unit = self.root.get("data-unit")
        self.title = self.root.findtext(NS + "title")
        box = self.root.find(NS + "g[@id='frames']")
        check(box is not None, "%s: no <g id=\"frames\">" % path, details)
        raw = [self._frame(g, details) for g in box.findall(NS + "g")]
        self.frames = self._tree(raw, details)
        self.by_path = {f.path: f for f in self.frames}
        check_eq(len(self.by_path), len(self.frames), "%s: frames with distinct paths" % path, details)

    def _frame(self, g, details):
        title, rect = g.findtext(NS + "title"), g.find(NS + "rect")
        check(title and rect is not None, "a frame without a title or a rect", details)
        name, _, info = title.partition("\n")
        m = INFO_BYTES_RE.match(info) if self.unit == "bytes" else INFO_OBJECTS_RE.match(info)
        check(m, "frame %r: title's second line %r is not '%s'" % (name, info, (
            INFO_BYTES_RE if self.unit == "bytes" else INFO_OBJECTS_RE).pattern), details)
        value, share, what = (int(m.group(2)), m.group(3), m.group(4)) if self.unit == "bytes" \
            else (int(m.group(1)), m.group(2), m.group(3))
        check_eq(int(g.get("data-v")), value, "frame %r: data-v vs the value in its title" % name, details)
        return Frame(name, value, share, what, int(g.get("data-x")), int(g.get("data-v")),
                     float(rect.get("y")), None, None, rect.get("fill"))

    @staticmethod
    def _tree(raw, details):
        """Depth from the row (the root at the bottom), parent = the frame
        of the row below whose range holds this one's."""
        bottom = max((f.y for f in raw), default=0)
        rows = collections.defaultdict(list)
        for f in raw:
            depth = (bottom - f.y) / FRAME_H
            check(depth == int(depth), "frame %r: y %g is not on a row" % (f.name, f.y), details)
            rows[int(depth)].append(f._replace(depth=int(depth)))
        out = []
        for depth in sorted(rows):
            for f in rows[depth]:
                if depth == 0:
                    check_eq(f.name, "all", "the bottom row's frame", details)
                    out.append(f._replace(path=()))
                    continue
                parents = [p for p in rows[depth - 1] if p.x <= f.x and f.x + f.v <= p.x + p.v]
                check_eq(len(parents), 1, "frames holding %r on the row below" % f.name, details)
                out.append(f._replace(path=parents[0].path + (f.name,)))
            rows[depth] = [f for f in out if f.depth == depth]
        return out

    def children(self, frame):
        return [f for f in self.frames if f.path[:-1] == frame.path and len(f.path) == len(frame.path) + 1]

    def ending_with(self, names):
        """Frames whose path ends with NAMES (root first; C++ names match
        without their parameters)."""
        n = len(names)
        return [f for f in self.frames if len(f.path) >= n and
                all(mtlib.same_function(g, w) for g, w in zip(f.path[-n:], names))]

    def values(self):
        return {f.path: f.value for f in self.frames}


# ---------------------------------------------------------------- live runs

Live = collections.namedtuple("Live", "prog metric svg pprof text res details")


@functools.lru_cache(maxsize=None)
def live(prog, metric):
    d = tempfile.mkdtemp(prefix="svg.%s.%s." % (prog, metric), dir=mtlib.TMPDIR)
    files = {k: os.path.join(d, k) for k in ("flame.svg", "profile.pb.gz", "report.txt")}
    res = mtlib.run_memtrace(["--metric", metric, "--unit", "B", "--svg", files["flame.svg"],
                              "--pprof", files["profile.pb.gz"], "--text=" + files["report.txt"],
                              "--", mtlib.prog_path(prog)])
    details = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc,
                                                            mtlib.tail(res.stderr))
    check_eq(res.rc, BY_NAME[prog].exit_status, "%s: memtrace's exit status" % prog, details)
    for f in files.values():
        check(os.path.exists(f), "memtrace wrote no %s" % f, details)
    return Live(prog, metric, files["flame.svg"], files["profile.pb.gz"], files["report.txt"], res, details)


def header_total(report_path, metric):
    with open(report_path, encoding="utf-8", errors="replace") as f:
        rep = mtlib.parse_report(f.read())
    return {"inuse_space": rep.inuse[0], "inuse_objects": rep.inuse[1],
            "alloc_space": rep.allocated[0], "alloc_objects": rep.allocated[1]}[metric]


def expected_stacks(p, metric):
    """{function names root first: value} of programs.py's stacks for
    METRIC (call sites of one function merged, as the graph merges them)."""
    stacks = p.stacks if metric.startswith("inuse") else (p.alloc_stacks or [])
    want = collections.OrderedDict()
    for st in stacks:
        key = tuple(f.function for f in reversed(st.frames))
        value = st.inuse_space if metric.endswith("_space") else st.inuse_objects
        want[key] = want.get(key, 0) + value
    return want


def make_live_test(prog, metric):
    @test("svg.live.%s.%s" % (prog, metric))
    def _t():
        p, run = BY_NAME[prog], live(prog, metric)
        svg = Svg(run.svg, run.details)
        d = run.details + "\nframes:\n" + "\n".join(
            "%s %d" % (";".join(f.path), f.value) for f in svg.frames)
        bad = []
        # The root: the total of the report's header, and of programs.py.
        check_eq(svg.by_path[()].value, svg.total, "the root frame's value vs data-total", d)
        check_eq(svg.total, header_total(run.text, metric), "the flame graph's total vs the --text header", d)
        if not p.extra:
            check_eq(svg.total, totals(p)[metric], "the flame graph's total vs programs.py", d)
        # Titles: what is counted, the share of the total.
        check(WHAT[metric] in svg.title and "(%s)" % prog in svg.title,
              "document title %r names neither %r nor the target (%s)" % (svg.title, WHAT[metric], prog), d)
        for f in svg.frames:
            if f.what != WHAT[metric] or f.share != "%.2f" % (100.0 * f.value / svg.total):
                bad.append("%s: '%s%% of %s'" % (f.name, f.share, f.what))
        # Each known stack: one frame at its end, with its exact value.
        for names, value in expected_stacks(p, metric).items():
            hits = svg.ending_with(names)
            if value == 0 and hits:
                bad.append("%s: a frame of value %d, expected none" % (";".join(names), hits[0].value))
            elif value and (len(hits) != 1 or hits[0].value != value):
                bad.append("%s: %s, expected one frame of %d" % (";".join(names), [h.value for h in hits], value))
        # Each function's self value (its frames less their children) is its flat value.
        for name, fn in p.funcs.items():
            frames = [f for f in svg.frames if mtlib.same_function(f.name, name)]
            self_value = sum(f.value - sum(c.value for c in svg.children(f)) for f in frames)
            if self_value != getattr(fn, metric):
                bad.append("%s: self %d, expected %d" % (name, self_value, getattr(fn, metric)))
        check(not bad, "%s --svg --metric %s: %s" % (prog, metric, "; ".join(bad)), d)


for _prog, _metric in RUNS:
    make_live_test(_prog, _metric)


# ---------------------------------------------------------------- memtrace report

def report(args, what, stderr=()):
    res = mtlib.run_memtrace(["report"] + list(args), timeout=60)
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc, mtlib.tail(res.stderr))
    check_eq(res.rc, 0, what + ": exit status", d)
    check_eq(mtlib.error_lines(res.stderr), list(stderr), what + ": stderr", d)
    return d


def make_report_test(prog, metric):
    @test("svg.report.%s.%s" % (prog, metric))
    def _t():
        run = live(prog, metric)
        out = os.path.join(os.path.dirname(run.svg), "report.svg")
        d = report([run.pprof, "--metric", metric, "--svg", out], "memtrace report --svg")
        got, want = Svg(out, d).values(), Svg(run.svg, run.details).values()
        diff = sorted(set(got.items()) ^ set(want.items()))
        check(got == want, "memtrace report --svg vs the live --svg: %d frames vs %d, differing (path, "
              "value): %s" % (len(got), len(want), diff[:6]), d)
        # -o FILE.svg chooses the format: the same document.
        out2 = os.path.join(os.path.dirname(run.svg), "by-name.svg")
        d = report([run.pprof, "--metric", metric, "-o", out2], "memtrace report -o FILE.svg")
        with open(out, "rb") as a, open(out2, "rb") as b:
            check(a.read() == b.read(), "-o FILE.svg and --svg FILE wrote different files", d)


for _prog, _metric in RUNS[:2]:
    make_report_test(_prog, _metric)


@test("svg.report.empty")
def _empty():
    """A profile left empty by --comm: a valid SVG that says so, whose
    script runs."""
    run = live("leaks", "inuse_space")
    out = os.path.join(os.path.dirname(run.svg), "empty.svg")
    # The filter that kept nothing says so (test_filters.py).
    d = report([run.pprof, "--comm", "no-such-process", "--svg", out], "memtrace report --comm --svg",
               ["memtrace: the report shows nothing: no process named 'no-such-process' among the 1 traced"])
    svg = Svg(out, d)
    check_eq((svg.total, svg.frames), (0, []), "an empty profile's total and frames", d)
    nothing = svg.root.find(NS + "text[@id='nothing']")
    check(nothing is not None and "Nothing to show" in nothing.text, "no 'Nothing to show' text", d)
    dom, log = browser.dump_dom(out)
    root = check_script_ran(dom, log)
    search = root.find(NS + "text[@id='search']")
    check("off" in search.get("class").split(), "a Search button over nothing to search")


@test("svg.report.unwritable", needs=("memtrace",))
def _unwritable():
    """--svg into a directory that does not exist: one line, non-zero."""
    res = mtlib.run_memtrace(["report", GOHEAP, "--svg", "/nonexistent-dir/flame.svg"], timeout=60)
    mtlib.check_one_line_error(res, "memtrace report --svg /nonexistent-dir/flame.svg",
                               mention=("/nonexistent-dir/flame.svg",))
    res = mtlib.run_memtrace(["report", GOHEAP, "--svg"], timeout=60)
    mtlib.check_one_line_error(res, "memtrace report FILE --svg (no file)", mention=("--svg",))


# ---------------------------------------------------------------- in a browser

def check_script_ran(dom, log, details=""):
    """The script reached its end (data-ready) with no uncaught error."""
    errors = browser.js_errors(log)
    check(not errors, "JavaScript errors in Chromium's console: %s" % errors[:3], details)
    try:
        root = ET.fromstring(dom)
    except ET.ParseError as e:
        raise mtlib.Fail("Chromium's DOM dump is not XML: %s" % e, details + "\n" + dom[:2000])
    check(root.get("data-error") is None, "the script caught an error: %r" % root.get("data-error"), details)
    check_eq(root.get("data-ready"), "1", "data-ready set by the script's last line", details + "\n" + dom[:600])
    return root


def dom_frames(root):
    """{name: [(g, rect)]} of a DOM dump."""
    out = collections.defaultdict(list)
    for g in root.find(NS + "g[@id='frames']").findall(NS + "g"):
        out[g.findtext(NS + "title").partition("\n")[0]].append((g, g.find(NS + "rect")))
    return out


@test("svg.browser.search")
def _search():
    """?s=REGEX highlights the frames whose names match and shows the
    bytes under them, a frame above another that matches counted once:
    the bytes of programs.py's stacks that have a matching function
    (depth3_a, depth3_b; depth5_a to _d, five in one stack; half_freed)."""
    p, run = BY_NAME["leaks"], live("leaks", "inuse_space")
    pattern = "depth|half_freed"
    dom, log = browser.dump_dom(run.svg, {"s": pattern})
    root = check_script_ran(dom, log)
    hits = [st for st in p.stacks if any(re.search(pattern, f.function) for f in st.frames)]
    want = sum(st.inuse_space for st in hits)
    total = totals(p)["inuse_space"]
    matched = root.findtext(NS + "text[@id='matched']") or ""
    check("(%d bytes)" % want in matched and "%.2f%%" % (100.0 * want / total) in matched,
          "matched line %r: expected %d bytes, %.2f%% (%d stacks)" % (matched, want, 100.0 * want / total,
                                                                      len(hits)))
    for name, frames in dom_frames(root).items():
        for _, rect in frames:
            lit = rect.get("fill") == "rgb(230,0,230)"
            check(lit == bool(re.search(pattern, name)),
                  "frame %s is %shighlighted" % (name, "" if lit else "not "))


@test("svg.browser.zoom")
def _zoom():
    """?zoom=depth5_a: it and the frames above it span the width, main
    below it is dimmed full width, leak_one (beside it) hidden."""
    run = live("leaks", "inuse_space")
    dom, log = browser.dump_dom(run.svg, {"zoom": "depth5_a"})
    root = check_script_ran(dom, log)
    frames = dom_frames(root)
    x0, width = root.get("data-x0"), float(root.get("data-w"))
    for name in ("depth5_a", "depth5_b", "depth5_c", "depth5_d", "leak_five", "main", "all"):
        g, rect = frames[name][0]
        check_eq((float(rect.get("x")), float(rect.get("width"))), (float(x0), width),
                 "%s's x and width after zooming on depth5_a" % name)
        check("display: none" not in (g.get("style") or ""), "%s hidden after zooming on depth5_a" % name)
    check("dim" in (frames["main"][0][0].get("class") or ""), "main (below depth5_a) not dimmed")
    for name in ("leak_one", "leak_three", "half_freed"):
        check("display: none" in (frames[name][0][0].get("style") or ""),
              "%s (not under depth5_a) still shown after zooming on it" % name)
    reset = root.find(NS + "text[@id='reset']")
    check("off" not in reset.get("class").split(), "'Reset zoom' hidden while zoomed")


def make_screenshot_test(scripts):
    @test("svg.browser.screenshot.%s" % ("js" if scripts else "nojs"))
    def _t():
        """Chromium draws every frame in its fill colour where the SVG puts
        it (the middle of the right half of each rectangle, away from its
        label), over the background, with JavaScript on and off; the
        "Search" button only with it on."""
        run = live("leaks", "inuse_space")
        svg = Svg(run.svg, run.details)
        width, height = int(svg.root.get("width")), int(svg.root.get("height"))
        path = run.svg
        if not scripts:
            # The document as a browser shows it with JavaScript off.
            path = os.path.join(os.path.dirname(run.svg), "noscript.svg")
            with open(run.svg, encoding="utf-8") as f:
                text, n = re.subn(r"<script\b.*?</script>", "", f.read(), flags=re.S)
            check_eq(n, 1, "<script> elements in the SVG")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        png = os.path.join(os.path.dirname(run.svg), "flame.%s.png" % scripts)
        log = browser.screenshot(path, png, width=width, height=height)
        check(not browser.js_errors(log), "JavaScript errors: %s" % browser.js_errors(log)[:3])
        img = browser.Png(png)
        check_eq((img.width, img.height), (width, height), "screenshot size")
        x0, w, bad = float(svg.root.get("data-x0")), float(svg.root.get("data-w")), []
        for f in svg.frames:
            x = x0 + w * (f.x + 0.75 * f.v) / svg.total
            want = tuple(int(c) for c in re.findall(r"\d+", f.fill))
            got = img.rgb(x, f.y + 7)
            if max(abs(a - b) for a, b in zip(got, want)) > 2:
                bad.append("%s at (%d, %d): %s, expected %s" % (f.name, x, f.y + 7, got, want))
        check(not bad, "frames not drawn in their colour: %s" % "; ".join(bad[:5]))
        background = img.rgb(2, 2)
        check_eq(background, (248, 248, 240), "background colour at (2, 2)")
        # "Search" ends at x0 + w, its baseline at y 24.
        button = [img.rgb(x, y) for x in range(int(x0 + w) - 60, int(x0 + w)) for y in range(12, 27)]
        drawn = sum(1 for px in button if px != background)
        check(bool(drawn) == scripts, "the Search button is %sdrawn with JavaScript %s (%d pixels)" % (
            "" if drawn else "not ", "on" if scripts else "off", drawn))


make_screenshot_test(True)
make_screenshot_test(False)

PY_WORK = ("import json, random\n"
           "d = [{'k%d' % i: [random.random() for _ in range(20)]} for i in range(5000)]\n"
           "json.loads(json.dumps(d))\n"
           "import xml.etree.ElementTree, email.parser, decimal, statistics\n")


@functools.lru_cache(maxsize=None)
def python_svg():
    """memtrace --metric alloc_space --svg -- python3 (Debian's): a few
    thousand frames, many of them narrow."""
    out = os.path.join(tempfile.mkdtemp(prefix="svg.python3.", dir=mtlib.TMPDIR), "flame.svg")
    res = mtlib.run_memtrace(["--metric", "alloc_space", "--svg", out, "--", "/usr/bin/python3", "-c", PY_WORK])
    check(res.rc == 0 and os.path.exists(out), "memtrace --svg -- python3: exit status %d" % res.rc,
          mtlib.tail(res.stderr))
    return out


def labels(root):
    """(title, x, width, label) of every frame, in document order."""
    return [(g.findtext(NS + "title"), g.find(NS + "rect").get("x"), g.find(NS + "rect").get("width"),
             g.findtext(NS + "text") or "")
            for g in root.find(NS + "g[@id='frames']").findall(NS + "g")]


def check_redrawn(path, want_cut):
    """?zoom=all redraws every frame at its place (the script's reset):
    each label is the one memtrace wrote (whole, cut with '..' or none:
    the script and the C writer fit names alike)."""
    want = labels(ET.parse(path).getroot())
    if want_cut:
        cut = sum(1 for w in want if w[3].endswith(".."))
        empty = sum(1 for w in want if not w[3])
        check(cut and empty, "%s: %d cut labels and %d empty ones: the test needs both" % (path, cut, empty))
    dom, log = browser.dump_dom(path, {"zoom": "all"}, timeout=120)
    got = labels(check_script_ran(dom, log))
    diff = [(a, b) for a, b in zip(want, got) if a != b]
    check(want == got, "%d of %d frames redrawn differently by the script, first: %r" % (
        len(diff) + abs(len(want) - len(got)), len(want), diff[:2]))


@test("svg.browser.labels.shapes")
def _labels_shapes():
    check_redrawn(live("shapes", "inuse_space").svg, want_cut=False)


@test("svg.browser.labels.python3")
def _labels_python3():
    check_redrawn(python_svg(), want_cut=True)
