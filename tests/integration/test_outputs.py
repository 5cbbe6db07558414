"""The report formats against ground truth.  One traced run per program
writes all five outputs (--text, --leaks, --folded, --raw, --pprof):

  out.leaks.*     --leaks: "not freed" = valgrind's "in use at exit", one
                  group per known stack with its bytes/blocks, leaf first,
                  sorted by bytes; --min-age with -p (waiter) and -- CMD
  out.folded.*    --folded: flamegraph.pl's line format, root first, values
                  adding up to the totals, per leaf and per stack
  out.pprof.*     --pprof / -o FILE.pb.gz read by `go tool pprof`: totals,
                  flat per function, pid/comm labels
  out.raw.*       --raw: every stack, ip lines module+0xOFF, sums = totals
  out.report.*    `memtrace report FILE` as an unprivileged user renders the
                  same table, folded stacks and leaks as the live run; a Go
                  heap profile's totals agree with `go tool pprof`
  out.corrupt.*   `memtrace report` on broken files: one line on stderr,
                  non-zero exit, no crash, no hang

Expected numbers come from programs.py, valgrind and go tool pprof, never
from memtrace, except where a test compares a live run with its read-back.
"""

import atexit
import collections
import functools
import gzip
import os
import random
import re
import shutil
import signal
import tempfile
import time
import zlib

import mtlib
from mtlib import check, check_eq, test
from programs import METRICS, PROGRAMS, BY_NAME, WAITER, totals

FORMATS = ("text", "leaks", "folded", "raw", "pprof")
FILE_OF = {"text": "report.txt", "leaks": "leaks.txt", "folded": "stacks.folded",
           "raw": "raw.txt", "pprof": "profile.pb.gz"}
GOHEAP = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "heap.pb.gz")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
EXIT_WAIT = 30


# ---------------------------------------------------------------- live runs

class Live:
    """memtrace --unit B -n 1000 --metric M [--cum] with every format
    written to a file of its own, -- PROG."""

    def __init__(self, prog, metric, cum, res, files):
        self.prog, self.metric, self.cum, self.res, self.files = prog, metric, cum, res, files

    def read(self, fmt):
        path = self.files[fmt]
        check(os.path.exists(path), "%s: memtrace wrote no --%s file %s" % (self.prog, fmt, path),
              self.details())
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()

    @functools.cached_property
    def rep(self):
        return mtlib.parse_report(self.read("text"))

    def details(self, fmt=None):
        d = "command: %s\nexit status: %s\nstderr:\n%s" % (
            " ".join(self.res.argv), self.res.rc, mtlib.tail(self.res.stderr, 8))
        if fmt and os.path.exists(self.files[fmt]):
            with open(self.files[fmt], encoding="utf-8", errors="replace") as f:
                d += "\n--%s output:\n%s" % (fmt, mtlib.tail(f.read(), 50))
        return d


@functools.lru_cache(maxsize=None)
def live(prog, metric="inuse_space", cum=False, extra=()):
    p = BY_NAME[prog]
    d = tempfile.mkdtemp(prefix="out.%s.%s." % (prog, metric), dir=mtlib.TMPDIR)
    files = {f: os.path.join(d, FILE_OF[f]) for f in FORMATS}
    args = ["--unit", "B", "-n", "1000", "--metric", metric]
    if cum:
        args.append("--cum")
    for f in FORMATS:
        args += ["--pprof", files[f]] if f == "pprof" else ["--%s=%s" % (f, files[f])]
    res = mtlib.run_memtrace(args + list(extra) + ["--", mtlib.prog_path(prog)])
    run = Live(prog, metric, cum, res, files)
    check(res.rc >= 0, "%s: memtrace died of signal %d" % (prog, -res.rc), run.details())
    check_eq(res.rc, p.exit_status, "%s: memtrace's exit status (the program's)" % prog, run.details())
    return run


# ---------------------------------------------------------------- ground truth

Truth = collections.namedtuple("Truth", "source inuse_space inuse_objects alloc_space alloc_objects")


@functools.lru_cache(maxsize=None)
def valgrind_full(prog):
    """valgrind --leak-check=full --run-libc-freeres=no --run-cxx-freeres=no
    PROG: (in use bytes, blocks), (allocs, bytes allocated)."""
    if not mtlib.which("valgrind"):
        raise mtlib.Fail("valgrind is not installed")
    argv = ["valgrind", "--leak-check=full", "--run-libc-freeres=no", "--run-cxx-freeres=no",
            mtlib.prog_path(prog)]
    res = mtlib.run(argv)
    m1 = re.search(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", res.stderr)
    m2 = re.search(r"total heap usage: ([\d,]+) allocs, [\d,]+ frees, ([\d,]+) bytes allocated", res.stderr)
    check(m1 and m2, "%s: no heap summary in valgrind's output" % prog, mtlib.tail(res.stderr))
    n = [int(m.replace(",", "")) for m in (m1.group(1), m1.group(2), m2.group(1), m2.group(2))]
    return n[0], n[1], n[2], n[3]


def truth(p):
    """The four totals: valgrind's, or the program's own when valgrind
    cannot run it (programs.py says why)."""
    if p.valgrind is None:
        ib, io, ao, ab = valgrind_full(p.name)
        return Truth("valgrind", ib, io, ab, ao)
    t = totals(p)
    return Truth("programs.py (%s)" % p.valgrind, t["inuse_space"], t["inuse_objects"],
                 t["alloc_space"], t["alloc_objects"])


def header_total(rep, metric):
    return {"inuse_space": rep.inuse[0], "inuse_objects": rep.inuse[1],
            "alloc_space": rep.allocated[0], "alloc_objects": rep.allocated[1]}[metric]


def needs_for(p, *more):
    base = ("memtrace", "bpf") + tuple(more)
    return base + (("valgrind",) if p.valgrind is None else ())


def stack_value(st, metric):
    """A programs.Stack's value for an inuse metric (alloc_stacks hold the
    alloc numbers in the same fields)."""
    return st.inuse_space if metric.endswith("_space") else st.inuse_objects


def names_match(got_names, want_names):
    return len(got_names) >= len(want_names) and all(
        mtlib.same_function(g, w) for g, w in zip(got_names, want_names))


# ---------------------------------------------------------------- --leaks

Group = collections.namedtuple("Group", "index bytes blocks human sizes ages addrs more frames head")
LEAK_SUMMARY_RE = re.compile(r"^not freed: (\d+) bytes in (\d+) blocks from (\d+) call sites \((\S+)\)"
                             r"(?:, blocks older than (\S+))?$")
GROUP_RE = re.compile(r"^#(\d+) (\d+) bytes in (\d+) blocks \((\S+)\) not freed"
                      r"(?:, block sizes (\S+)\.\.(\S+), ages (\S+)\.\.(\S+))?$")
AT_RE = re.compile(r"^    at (0x[0-9a-f]+(?: 0x[0-9a-f]+)*)( \.\.\.)?$")
AGE_RE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
AGE_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def parse_age(tok):
    m = AGE_RE.match(tok)
    if not m:
        raise ValueError("not an age: %r" % tok)
    return float(m.group(1)) * AGE_UNIT[m.group(2)]


class Leaks:
    pass


def parse_leaks(text, details, live_run=True):
    """A --leaks report: header (as a mtlib Report), summary, groups."""
    lk = Leaks()
    lines = text.splitlines()
    check(lines and lines[0] == "memtrace %s leak report" % mtlib.VERSION,
          "first line of the leak report is not 'memtrace %s leak report': %r"
          % (mtlib.VERSION, lines[0] if lines else ""), details)
    i = 0
    while i < len(lines) and lines[i].strip():
        i += 1
    head = ["memtrace %s heap profile" % mtlib.VERSION] + lines[1:i]
    lk.header = mtlib.parse_report("\n".join(head) + "\n")
    while i < len(lines) and not lines[i].strip():
        i += 1
    check(i < len(lines), "leak report has no 'not freed:' line", details)
    m = LEAK_SUMMARY_RE.match(lines[i])
    check(m, "leak summary %r does not match %s" % (lines[i], LEAK_SUMMARY_RE.pattern), details)
    lk.summary_line = lines[i]
    lk.bytes, lk.blocks, lk.sites = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        lk.human = mtlib.parse_value(m.group(4))
    except ValueError:
        raise mtlib.Fail("leak summary: cannot parse %r" % m.group(4), details)
    lk.groups = []
    i += 1
    cur = None
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            cur = None
            continue
        if line.startswith("#"):
            m = GROUP_RE.match(line)
            check(m, "leak group line %r does not match %s" % (line, GROUP_RE.pattern), details)
            try:
                human = mtlib.parse_value(m.group(4))
                sizes = (mtlib.parse_value(m.group(5)), mtlib.parse_value(m.group(6))) if m.group(5) else None
                ages = (parse_age(m.group(7)), parse_age(m.group(8))) if m.group(7) else None
            except ValueError as e:
                raise mtlib.Fail("leak group line %r: %s" % (line, e), details)
            if live_run:
                check(sizes is not None, "leak group line %r has no block sizes and ages" % line, details)
            cur = Group(int(m.group(1)), int(m.group(2)), int(m.group(3)), human, sizes, ages, [], [], [], line)
            lk.groups.append(cur)
            continue
        check(cur is not None, "leak report line %r outside a group" % line, details)
        m = AT_RE.match(line)
        if m:
            check(not cur.addrs and not cur.frames, "second 'at' line in group %r" % cur.head, details)
            cur.addrs.extend(m.group(1).split())
            cur.more.append(bool(m.group(2)))
            continue
        check(line.startswith("    ") and not line.startswith("    at "),
              "leak report line %r is neither 'at' nor a frame" % line, details)
        cur.frames.append(mtlib.parse_location(line))
    return lk


def check_leak_groups(p, lk, details, live_run=True):
    """Format, sums and sort order of the groups, and the known stacks."""
    bad = []
    check_eq([g.index for g in lk.groups], list(range(1, len(lk.groups) + 1)), "group numbers #1..#N", details)
    check_eq(lk.sites, len(lk.groups), "call sites in the summary vs groups listed", details)
    check_eq((sum(g.bytes for g in lk.groups), sum(g.blocks for g in lk.groups)), (lk.bytes, lk.blocks),
             "sum of the groups' (bytes, blocks) vs the summary line", details)
    check_eq(lk.human, lk.bytes, "summary's '(...)' value with --unit B", details)
    sizes = [g.bytes for g in lk.groups]
    check(sizes == sorted(sizes, reverse=True), "groups are not sorted by bytes, descending: %s" % sizes, details)
    for g in lk.groups:
        if g.human != g.bytes:
            bad.append("%s: '(...)' is %r with --unit B" % (g.head, g.human))
        if g.blocks < 1:
            bad.append("%s: a group of no blocks" % g.head)
        if not g.frames:
            bad.append("%s: no frames" % g.head)
        if live_run:
            lo, hi = g.sizes
            if not (lo <= hi and lo * g.blocks <= g.bytes <= hi * g.blocks):
                bad.append("%s: block sizes %s..%s cannot make %d bytes in %d blocks" % (g.head, lo, hi, g.bytes, g.blocks))
            if not (0 <= g.ages[0] <= g.ages[1]):
                bad.append("%s: ages %s..%s" % (g.head, g.ages[0], g.ages[1]))
            n = len(g.addrs)
            if not g.addrs or n > g.blocks or len(set(g.addrs)) != n or g.more[0] != (n < g.blocks):
                bad.append("%s: 'at' line lists %d distinct of %d addresses%s for %d blocks"
                           % (g.head, len(set(g.addrs)), n, " and '...'" if g.more and g.more[0] else "", g.blocks))
    # The known stacks: one group each, the leaking function first.
    for st in p.stacks:
        names = [f.function for f in st.frames]
        found = [g for g in lk.groups if names_match([f.function for f in g.frames], names)]
        label = " <- ".join(names)
        if len(found) != 1:
            bad.append("%d groups %s, expected 1 with %d bytes in %d blocks"
                       % (len(found), label, st.inuse_space, st.inuse_objects))
            continue
        g = found[0]
        if (g.bytes, g.blocks) != (st.inuse_space, st.inuse_objects):
            bad.append("group %s: %d bytes in %d blocks, expected %d in %d"
                       % (label, g.bytes, g.blocks, st.inuse_space, st.inuse_objects))
        leaf = g.frames[0]
        want_line = mtlib.marker_line(p.src, st.frames[0].marker)
        if (os.path.basename(leaf.file or "?"), leaf.line, leaf.inlined) != (p.src, want_line, st.frames[0].inlined):
            bad.append("group %s: first frame %s:%s%s, expected %s:%d%s"
                       % (label, leaf.file, leaf.line, " (inlined)" if leaf.inlined else "",
                          p.src, want_line, " (inlined)" if st.frames[0].inlined else ""))
    if not p.extra:
        check_eq(len(lk.groups), len(p.stacks), "%s: groups (call sites with blocks not freed)" % p.name, details)
    else:
        own = [g for g in lk.groups if g.frames and any(mtlib.same_function(g.frames[0].function, f) for f in p.funcs)]
        check_eq(len(own), len(p.stacks), "%s: groups whose first frame is one of the program's functions" % p.name,
                 details)
    check(not bad, "%s --leaks: %s" % (p.name, "; ".join(bad)), details)


def make_leaks_test(p):
    @test("out.leaks." + p.name, needs=needs_for(p))
    def _t():
        run = live(p.name)
        d = run.details("leaks")
        lk = parse_leaks(run.read("leaks"), d)
        t = truth(p)
        check_eq((lk.bytes, lk.blocks), (t.inuse_space, t.inuse_objects),
                 "%s: 'not freed' (bytes, blocks) vs %s's in use at exit" % (p.name, t.source), d)
        check_eq(lk.header.inuse, (t.inuse_space, t.inuse_objects),
                 "%s: leak report header 'in use' vs %s" % (p.name, t.source), d)
        check_leak_groups(p, lk, d)


@test("out.leaks.cmd_ignores_min_age", needs=needs_for(BY_NAME["leaks"]))
def _cmd_min_age():
    """-- CMD --min-age 1h: every block not freed at exit is still reported."""
    p = BY_NAME["leaks"]
    run = live(p.name, extra=("--min-age", "1h"))
    d = run.details("leaks")
    lk = parse_leaks(run.read("leaks"), d)
    t = truth(p)
    check_eq((lk.bytes, lk.blocks), (t.inuse_space, t.inuse_objects),
             "-- CMD --min-age 1h: 'not freed' (bytes, blocks) vs valgrind's in use at exit", d)
    check_leak_groups(p, lk, d)


def waiter_leaks(name, min_age, settle):
    """memtrace -p WAITER --leaks --min-age AGE: the waiter runs its traced
    part, then (after settle seconds) SIGINT stops memtrace."""
    w = mtlib.start_waiter()
    out = os.path.join(mtlib.TMPDIR, "out.pid.%s.leaks.txt" % name)
    mt = None
    try:
        mt = mtlib.start_memtrace_pid(w.pid, ["--unit", "B", "--leaks", "--min-age", min_age, "-o", out])
        t0 = time.monotonic()
        w.send("\n")
        line = w.out.wait_for(lambda l: l.strip() == "done", 30)
        check(line is not None, "waiter did not say 'done'", w.details())
        time.sleep(max(0.0, settle - (time.monotonic() - t0)))
        mt.signal(signal.SIGINT)
        rc = mt.wait(EXIT_WAIT)
        details = mt.details()
        check(rc is not None, "memtrace still runs %ds after SIGINT" % EXIT_WAIT, details)
        check_eq(rc, 0, "memtrace's exit status after SIGINT", details)
        check(os.path.exists(out), "no leak report in %s" % out, details)
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
        details += "\nleak report:\n" + mtlib.tail(text, 30)
        lk = parse_leaks(text, details)
        w.send("\n")
        w.wait(30)
        return w.pid, lk, details
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)


def check_waiter_traced(pid, lk, details):
    """The trace itself saw the waiter's leaks, whatever --min-age hides."""
    t = totals(WAITER)
    check_eq(lk.header.target_pid, pid, "target pid", details)
    check_eq(lk.header.inuse, (t["inuse_space"], t["inuse_objects"]), "header 'in use' (bytes, objects)", details)


@test("out.leaks.pid_min_age_1h")
def _pid_1h():
    pid, lk, d = waiter_leaks("1h", "1h", 0)
    check_waiter_traced(pid, lk, d)
    check_eq((lk.bytes, lk.blocks, lk.sites), (0, 0, 0),
             "-p --min-age 1h (every block is younger): 'not freed' bytes, blocks, call sites", d)
    check_eq(len(lk.groups), 0, "groups listed with --min-age 1h", d)


def check_waiter_all(lk, d, min_age):
    check_eq((lk.bytes, lk.blocks, lk.sites), (2100, 3, 1), "-p --min-age %s: 'not freed' bytes, blocks, sites"
             % min_age, d)
    check_leak_groups(WAITER, lk, d)
    g = lk.groups[0]
    check(g.ages[0] >= min_age, "-p --min-age %gs: a listed block is %gs old" % (min_age, g.ages[0]), d)


@test("out.leaks.pid_min_age_0")
def _pid_0():
    pid, lk, d = waiter_leaks("0", "0", 0)
    check_waiter_traced(pid, lk, d)
    check_waiter_all(lk, d, 0)


@test("out.leaks.pid_min_age_1s")
def _pid_1s():
    """The blocks are ~1.6 s old when tracing stops: --min-age 1s lists them
    all, with ages of at least 1 s (--min-age compares ages, not 0/not 0)."""
    pid, lk, d = waiter_leaks("1s", "1s", 1.6)
    check_waiter_traced(pid, lk, d)
    check_waiter_all(lk, d, 1.0)


BAD_MIN_AGE = {"abc": "abc", "negative": "-5s", "unit": "5parsecs", "empty": "", "huge": "1e99"}


def make_bad_min_age_test(name, value):
    @test("out.leaks.bad_min_age." + name, needs=("memtrace",))
    def _t():
        res = mtlib.run_memtrace(["--leaks", "--min-age", value, "--", "/bin/true"], timeout=30)
        line = mtlib.check_one_line_error(res, "memtrace --leaks --min-age %r" % value)
        check("min-age" in line, "the error does not name --min-age: %r" % line)


# ---------------------------------------------------------------- --folded

FLAMEGRAPH_RE = re.compile(r"^(.*)\s+?(\d+(?:\.\d*)?)$")   # flamegraph.pl's


def parse_folded(text, details):
    """{stack tuple (root first): value}; checks the line format."""
    out = {}
    for line in text.splitlines():
        m = FLAMEGRAPH_RE.match(line)
        check(m, "folded line %r does not match flamegraph.pl's %s" % (line, FLAMEGRAPH_RE.pattern), details)
        stack, value = m.group(1), m.group(2)
        check(re.fullmatch(r"\d+", value), "folded value %r is not an integer count/byte size" % value, details)
        check(stack == stack.strip() and stack, "folded line %r: empty stack or blanks around it" % line, details)
        frames = tuple(stack.split(";"))
        check(all(f and f == f.strip() for f in frames),
              "folded line %r has an empty frame or one with blanks around it" % line, details)
        check(frames not in out, "folded stack %r is on two lines" % stack, details)
        out[frames] = int(value)
    return out


def check_folded(p, folded, metric, total, details):
    """Sum, per-leaf sums (= the functions' flat) and known stacks."""
    check_eq(sum(folded.values()), total, "%s: sum of folded %s values vs the total" % (p.name, metric), details)
    bad = []
    for name, fn in p.funcs.items():
        got = sum(v for fr, v in folded.items() if mtlib.same_function(fr[-1], name))
        if got != getattr(fn, metric):
            bad.append("leaf %s: %d, expected %d" % (name, got, getattr(fn, metric)))
    if metric.startswith("inuse"):
        stacks = p.stacks
    elif p.alloc_stacks:
        stacks = p.alloc_stacks
    else:
        stacks = []
    want = collections.OrderedDict()
    for st in stacks:
        key = tuple(f.function for f in st.frames)
        want[key] = want.get(key, 0) + stack_value(st, metric)
    for key, value in want.items():
        rev = list(reversed(key))
        hits = [(fr, v) for fr, v in folded.items()
                if len(fr) >= len(rev) and all(mtlib.same_function(g, w) for g, w in zip(fr[-len(rev):], rev))]
        got = sum(v for _, v in hits)
        label = ";".join(rev)
        if value and len(hits) != 1:
            bad.append("%d lines end with %s, expected one (value %d)" % (len(hits), label, value))
        elif got != value:
            bad.append("lines ending with %s: %d, expected %d" % (label, got, value))
    if not p.extra and stacks:
        nonzero = sum(1 for v in folded.values() if v)
        check_eq(nonzero, sum(1 for v in want.values() if v),
                 "%s: folded lines with a non-zero %s (distinct stacks)" % (p.name, metric), details)
    check(not bad, "%s --folded --metric %s: %s" % (p.name, metric, "; ".join(bad)), details)


def make_folded_test(p):
    @test("out.folded." + p.name, needs=needs_for(p))
    def _t():
        run = live(p.name)
        d = run.details("folded")
        folded = parse_folded(run.read("folded"), d)
        t = truth(p)
        check_eq(sum(folded.values()), header_total(run.rep, "inuse_space"),
                 "sum of folded values vs the report header's in use bytes", d)
        check_folded(p, folded, "inuse_space", t.inuse_space, d)


def make_folded_metric_test(p, metric):
    @test("out.folded_metric.%s.%s" % (p.name, metric), needs=needs_for(p))
    def _t():
        run = live(p.name, metric)
        d = run.details("folded")
        folded = parse_folded(run.read("folded"), d)
        check_eq(sum(folded.values()), header_total(run.rep, metric),
                 "sum of folded %s values vs the report header" % metric, d)
        check_folded(p, folded, metric, getattr(truth(p), metric), d)


@test("out.folded.inline_frames")
def _inline_frames():
    """The inlined helper is a frame of its own, between its caller and
    nothing else: ...;outer_fn;inl_alloc."""
    run = live("inline")
    d = run.details("folded")
    folded = parse_folded(run.read("folded"), d)
    hits = [fr for fr in folded if fr[-1] == "inl_alloc"]
    check_eq(len(hits), 1, "folded stacks whose leaf is inl_alloc", d)
    check(hits[0][-2:] == ("outer_fn", "inl_alloc") and hits[0][-3] == "main",
          "inl_alloc's stack is %r, expected ...;main;outer_fn;inl_alloc" % ";".join(hits[0]), d)


# ---------------------------------------------------------------- --pprof

GO_UNIT = {"": 1, "B": 1, "kB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}
GO_VALUE_RE = re.compile(r"^(-?\d+(?:\.\d+)?)(B|kB|MB|GB|TB)?$")
GO_ROW_RE = re.compile(r"^\s*(\S+)\s+(\S+)%\s+(\S+)%\s+(\S+)\s+(\S+)%\s+(.+?)\s*$")


def go_value(tok):
    """A value as go tool pprof prints it; kB = 1024 B (Go's measurement
    package: kilobyte = 1024, megabyte = 1024 kilobytes)."""
    m = GO_VALUE_RE.match(tok)
    if not m:
        raise ValueError("not a go pprof value: %r" % tok)
    v = float(m.group(1)) * GO_UNIT[m.group(2) or ""]
    return int(v) if v == int(v) else v


def go_bin():
    go = mtlib.which("go")
    if not go:
        raise mtlib.Skip("go is not installed (golang-go): cannot read --pprof with go tool pprof")
    return go


@functools.lru_cache(maxsize=None)
def go_env():
    base = tempfile.mkdtemp(prefix="go.", dir=mtlib.TMPDIR)
    env = dict(os.environ)
    env.update(GOCACHE=os.path.join(base, "cache"), HOME=os.path.join(base, "home"), GOFLAGS="-mod=mod",
               GOPROXY="off", GOTOOLCHAIN="local", PPROF_TMPDIR=os.path.join(base, "pprof"))
    return env


def go_pprof(args, path):
    res = mtlib.run([go_bin(), "tool", "pprof", "-symbolize=none"] + list(args) + [path], env=go_env(), timeout=60)
    check_eq(res.rc, 0, "go tool pprof %s %s: exit status" % (" ".join(args), path), mtlib.tail(res.stderr))
    return res.stdout


GoTop = collections.namedtuple("GoTop", "total flat text")


@functools.lru_cache(maxsize=None)
def go_top(path, index, unit="B"):
    """go tool pprof -top -sample_index=INDEX: the total and {function: flat}
    (names without Go's ' (inline)' mark)."""
    args = ["-top", "-nodefraction=0", "-edgefraction=0", "-sample_index=" + index]
    if unit:
        args.append("-unit=" + unit)
    out = go_pprof(args, path)
    m = re.search(r"^Showing nodes accounting for \S+, [\d.]+% of (\S+) total$", out, re.M)
    check(m, "go tool pprof -top: no 'Showing nodes accounting for ... total' line", mtlib.tail(out, 20))
    flat = {}
    lines = out.splitlines()
    try:
        total = go_value(m.group(1))
        start = [i for i, l in enumerate(lines) if l.split()[:5] == ["flat", "flat%", "sum%", "cum", "cum%"]][0]
        for line in lines[start + 1:]:
            r = GO_ROW_RE.match(line)
            if not r:
                raise ValueError("row %r" % line)
            name = r.group(6)
            if name.endswith(" (inline)"):
                name = name[: -len(" (inline)")]
            flat[name] = flat.get(name, 0) + go_value(r.group(1))
    except (ValueError, IndexError) as e:
        raise mtlib.Fail("cannot parse go tool pprof -top output (%s)" % e, mtlib.tail(out, 30))
    return GoTop(total, flat, out)


UNRESOLVED_RE = re.compile(r"^(.+)\+0x[0-9a-f]+$")


def text_flats(rep):
    """memtrace's non-zero flats; its unresolved frames (MODULE+0xOFFSET)
    are address-only locations in the profile, which go tool pprof shows
    as [MODULE], one row per module."""
    flats = {}
    for r in rep.rows:
        m = UNRESOLVED_RE.match(r.function)
        name = "[%s]" % m.group(1) if m and not r.file else r.function
        if r.flat:
            flats[name] = flats.get(name, 0) + r.flat
    return flats


def check_go_vs_text(run, index, details):
    """Go's total and non-zero flats = memtrace's live text report of the
    same run (--metric INDEX, --unit B, every function shown)."""
    rep = run.rep
    check(rep.shown and rep.shown[1] <= rep.shown[0], "the text report does not show every function", details)
    g = go_top(run.files["pprof"], index)
    d = details + "\ngo tool pprof -top:\n" + mtlib.tail(g.text, 30)
    m = re.search(r"total (\S+)$", rep.title or "")
    check(m, "text report title %r has no total" % rep.title, d)
    check_eq(g.total, mtlib.parse_value(m.group(1)), "%s: go's %s total vs memtrace's table total" % (run.prog, index), d)
    check_eq(g.total, header_total(rep, index), "%s: go's %s total vs memtrace's header" % (run.prog, index), d)
    got = {k: v for k, v in g.flat.items() if v}
    check_eq(got, text_flats(rep), "%s %s: go's non-zero flat per function vs memtrace's table" % (run.prog, index), d)


def make_pprof_test(p):
    @test("out.pprof." + p.name, needs=needs_for(p))
    def _t():
        go_bin()
        run = live(p.name)
        d = run.details()
        path = run.files["pprof"]
        check(os.path.exists(path), "no --pprof file %s" % path, d)
        t = truth(p)
        bad = []
        for index in METRICS:
            g = go_top(path, index)
            if g.total != getattr(t, index):
                bad.append("%s: go's total %r, %s %d" % (index, g.total, t.source, getattr(t, index)))
            for name, fn in p.funcs.items():
                got = [v for k, v in g.flat.items() if mtlib.same_function(k, name)]
                if sum(got) != getattr(fn, index):
                    bad.append("%s: go's flat of %s %r, expected %d" % (index, name, got, getattr(fn, index)))
        check(not bad, "%s --pprof read by go tool pprof: %s" % (p.name, "; ".join(bad)),
              d + "\n" + mtlib.tail(go_top(path, "inuse_space").text, 20))
        check_go_vs_text(run, "inuse_space", d)
        check_labels(run, d)


def check_labels(run, details):
    """go tool pprof -raw: every sample carries pid:[PID] and comm:[COMM]."""
    out = go_pprof(["-raw"], run.files["pprof"])
    d = details + "\ngo tool pprof -raw:\n" + mtlib.tail(out, 30)
    lines = out.splitlines()
    check("Samples:" in lines, "go tool pprof -raw: no Samples section", d)
    i = lines.index("Samples:") + 2
    samples = []
    while i < len(lines) and lines[i] and not lines[i].startswith("Locations"):
        if re.match(r"^\s*-?\d+(\s+-?\d+)*:", lines[i]):
            samples.append({})
        else:
            m = re.match(r"^\s*(\w+):\[(.*)\]\s*$", lines[i])
            check(m and samples, "go tool pprof -raw: unexpected sample line %r" % lines[i], d)
            samples[-1][m.group(1)] = m.group(2)
        i += 1
    check(samples, "go tool pprof -raw: no samples", d)
    want = {"pid": str(run.rep.target_pid), "comm": BY_NAME[run.prog].name[:15]}
    for s in samples:
        for k, v in want.items():
            check_eq(s.get(k), v, "label %s of a sample" % k, d)


def make_pprof_metric_test(p, metric, cum=False):
    @test("out.pprof_vs_text.%s.%s%s" % (p.name, metric, ".cum" if cum else ""), needs=needs_for(p))
    def _t():
        go_bin()
        run = live(p.name, metric, cum)
        check_go_vs_text(run, metric, run.details("text"))


@test("out.pprof.output_pb_gz", needs=needs_for(BY_NAME["exit7"]))
def _output_pb_gz():
    """-o FILE.pb.gz alone chooses the pprof format."""
    go_bin()
    p = BY_NAME["exit7"]
    path = os.path.join(tempfile.mkdtemp(prefix="out.o.", dir=mtlib.TMPDIR), "exit7.pb.gz")
    res = mtlib.run_memtrace(["-o", path, "--", mtlib.prog_path(p.name)])
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc, mtlib.tail(res.stderr))
    check_eq(res.rc, p.exit_status, "memtrace's exit status (the program's)", d)
    check(os.path.exists(path), "memtrace -o %s wrote nothing there" % path, d)
    with open(path, "rb") as f:
        data = f.read()
    check(data[:2] == b"\x1f\x8b", "-o FILE.pb.gz: the file is not gzip (begins %r)" % data[:16], d)
    try:
        gzip.decompress(data)
    except (OSError, EOFError) as e:
        raise mtlib.Fail("-o FILE.pb.gz: python cannot gunzip it (%s)" % e, d)
    t = truth(p)
    for index in METRICS:
        g = go_top(path, index)
        check_eq(g.total, getattr(t, index), "go's %s total of the -o FILE.pb.gz profile (%s)" % (index, t.source),
                 d + "\n" + mtlib.tail(g.text, 20))


# ---------------------------------------------------------------- --raw

RAW_HEAD_RE = re.compile(r"^raw stacks: (\d+), outstanding blocks: (\d+)$")
RAW_STACK_RE = re.compile(r"^stack (\d+) id 0x([0-9a-f]+) pid (\d+): allocated (\d+) bytes in (\d+) objects, "
                          r"freed (\d+) bytes in (\d+) objects$")
RAW_IP_RE = re.compile(r"^  ip #(\d+)\s+0x([0-9a-f]+)\s+(\S+)\+0x([0-9a-f]+)$")
RAW_FRAME_RE = re.compile(r"^  frame #(\d+)\s+(.+)$")
RawStack = collections.namedtuple("RawStack", "n id pid alloc_b alloc_o freed_b freed_o ips frames head")


def parse_raw(text, details):
    lines = [l for l in text.splitlines() if l.strip()]
    check(lines, "empty --raw output", details)
    m = RAW_HEAD_RE.match(lines[0])
    check(m, "first --raw line %r does not match %s" % (lines[0], RAW_HEAD_RE.pattern), details)
    nstacks, outstanding = int(m.group(1)), int(m.group(2))
    stacks = []
    for line in lines[1:]:
        m = RAW_STACK_RE.match(line)
        if m:
            g = [int(m.group(k)) for k in (1, 3, 4, 5, 6, 7)]
            stacks.append(RawStack(g[0], m.group(2), g[1], g[2], g[3], g[4], g[5], [], [], line))
            continue
        check(stacks, "--raw line %r before the first stack" % line, details)
        m = RAW_IP_RE.match(line)
        if m:
            check(not stacks[-1].frames, "--raw: ip line %r after the frames" % line, details)
            stacks[-1].ips.append((int(m.group(1)), int(m.group(2), 16), m.group(3), int(m.group(4), 16)))
            continue
        m = RAW_FRAME_RE.match(line)
        check(m, "--raw line %r is not a stack, ip or frame line" % line, details)
        stacks[-1].frames.append((int(m.group(1)), mtlib.parse_location(m.group(2))))
    return nstacks, outstanding, stacks


def make_raw_test(p):
    @test("out.raw." + p.name, needs=needs_for(p))
    def _t():
        run = live(p.name)
        d = run.details("raw")
        nstacks, outstanding, stacks = parse_raw(run.read("raw"), d)
        rep = run.rep
        t = truth(p)
        check_eq(nstacks, len(stacks), "'raw stacks: N' vs stacks listed", d)
        check_eq([s.n for s in stacks], list(range(len(stacks))), "stack numbers 0..N-1", d)
        check_eq(len({s.id for s in stacks}), len(stacks), "distinct stack ids", d)
        check_eq(outstanding, t.inuse_objects, "'outstanding blocks' vs %s's blocks in use" % t.source, d)
        sums = tuple(sum(getattr(s, k) for s in stacks) for k in ("alloc_b", "alloc_o", "freed_b", "freed_o"))
        check_eq(sums, (rep.allocated[0], rep.allocated[1], rep.freed[0], rep.freed[1]),
                 "sums over the stacks of (allocated bytes, objects, freed bytes, objects) vs the header", d)
        check_eq(sums, (t.alloc_space, t.alloc_objects, t.alloc_space - t.inuse_space,
                        t.alloc_objects - t.inuse_objects),
                 "sums over the stacks of (allocated bytes, objects, freed bytes, objects) vs %s" % t.source, d)
        bad = []
        for s in stacks:
            if s.pid != rep.target_pid:
                bad.append("stack %d: pid %d, target is %d" % (s.n, s.pid, rep.target_pid))
            if s.freed_b > s.alloc_b or s.freed_o > s.alloc_o:
                bad.append("stack %d frees more than it allocated" % s.n)
            if not s.ips or [i[0] for i in s.ips] != list(range(len(s.ips))):
                bad.append("stack %d: ip lines not numbered 0..N-1" % s.n)
            if [f[0] for f in s.frames] != list(range(len(s.frames))) or len(s.frames) < len(s.ips):
                bad.append("stack %d: %d frames for %d ips, or frames not numbered" % (s.n, len(s.frames), len(s.ips)))
            for _, addr, mod, off in s.ips:
                if (addr - off) % 4096:
                    bad.append("stack %d: ip 0x%x is not at %s+0x%x of a page-aligned mapping" % (s.n, addr, mod, off))
            if s.frames and any(mtlib.same_function(s.frames[0][1].function, f) for f in p.funcs) \
                    and s.ips and s.ips[0][2] != os.path.basename(mtlib.prog_path(p.name)):
                bad.append("stack %d: leaf %s in module %s, expected %s"
                           % (s.n, s.frames[0][1].function, s.ips[0][2], p.name))
        # Known stacks, by call site: allocated - freed = in use.
        for st in p.stacks:
            names = [f.function for f in st.frames]
            line = mtlib.marker_line(p.src, st.frames[0].marker)
            hits = [s for s in stacks if names_match([f[1].function for f in s.frames], names)
                    and s.frames[0][1].line == line]
            got = (sum(s.alloc_b - s.freed_b for s in hits), sum(s.alloc_o - s.freed_o for s in hits))
            if not hits or got != (st.inuse_space, st.inuse_objects):
                bad.append("stacks %s at %s:%d: in use %r (bytes, objects) over %d stacks, expected %r"
                           % (" <- ".join(names), p.src, line, got, len(hits), (st.inuse_space, st.inuse_objects)))
        for st in p.alloc_stacks or []:
            names = [f.function for f in st.frames]
            line = mtlib.marker_line(p.src, st.frames[0].marker)
            hits = [s for s in stacks if names_match([f[1].function for f in s.frames], names)
                    and s.frames[0][1].line == line]
            got = [(s.alloc_b, s.alloc_o) for s in hits]
            if got != [(st.inuse_space, st.inuse_objects)]:
                bad.append("stack %s at %s:%d: allocated %r, expected [%r]"
                           % (" <- ".join(names), p.src, line, got, (st.inuse_space, st.inuse_objects)))
        check(not bad, "%s --raw: %s" % (p.name, "; ".join(bad)), d)


# ---------------------------------------------------------------- several outputs

@test("out.several_outputs_one_run")
def _several():
    """One run, five files: all written, and they agree with each other;
    stdout stays empty, every format having a file."""
    run = live("leaks")
    d = run.details()
    text = run.read("text")
    rep = run.rep
    check_eq(run.res.stdout, "", "stdout (every format has a file; leaks prints nothing)", d)
    lk = parse_leaks(run.read("leaks"), d)
    check_eq(run.read("leaks").splitlines()[1:11], text.splitlines()[1:11],
             "header lines of --leaks vs --text of the same run", d)
    check_eq(lk.bytes, rep.inuse[0], "--leaks 'not freed' bytes vs --text 'in use'", d)
    folded = parse_folded(run.read("folded"), d)
    check_eq(sum(folded.values()), rep.inuse[0], "--folded sum vs --text 'in use'", d)
    _, _, stacks = parse_raw(run.read("raw"), d)
    check_eq({s.pid for s in stacks}, {rep.target_pid}, "pids in --raw vs --text's target", d)
    with open(run.files["pprof"], "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "--pprof file is not gzip", d)


# ---------------------------------------------------------------- memtrace report

@functools.lru_cache(maxsize=None)
def public_dir():
    """A directory nobody (uid 65534) can read: mode 0755, files 0644."""
    d = tempfile.mkdtemp(prefix="memtrace-out-public.")
    atexit.register(shutil.rmtree, d, True)
    os.chmod(d, 0o755)
    return d


def public_copy(src, name):
    dst = os.path.join(public_dir(), name)
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)
    return dst


def report_as_nobody(path, args):
    if not mtlib.which("setpriv"):
        raise mtlib.Skip("setpriv (util-linux) is missing: cannot run memtrace report unprivileged")
    res = mtlib.run(NOBODY + [mtlib.MEMTRACE, "report", path] + list(args), timeout=60)
    d = "command: %s\nexit status: %s\nstderr:\n%s\nstdout:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr), mtlib.tail(res.stdout, 40))
    check_eq(res.rc, 0, "memtrace report as uid 65534: exit status", d)
    check_eq(mtlib.error_lines(res.stderr), [], "memtrace report as uid 65534: stderr", d)
    return res.stdout, d


def from_showing(text):
    lines = text.splitlines()
    idx = [i for i, l in enumerate(lines) if l.startswith("Showing")]
    return lines[idx[0]:] if idx else None


def make_report_test(metric, cum=False, flag=None):
    name = "out.report.%s%s" % (metric, ".cum" if cum else "")

    @test(name, needs=("memtrace", "bpf", "root"))
    def _t():
        run = live("leaks", metric, cum)
        path = public_copy(run.files["pprof"], "leaks.%s%s.pb.gz" % (metric, ".cum" if cum else ""))
        args = ([flag] if flag else []) + ["--metric", metric, "--unit", "B", "-n", "1000"] + (["--cum"] if cum else [])
        out, d = report_as_nobody(path, args)
        live_text = run.read("text")
        d += "\nlive report:\n" + mtlib.tail(live_text, 40)
        want, got = from_showing(live_text), from_showing(out)
        check(want, "the live report has no 'Showing' line", d)
        check(got is not None, "memtrace report %s: no 'Showing' line" % " ".join(args), d)
        diff = [(i, a, b) for i, (a, b) in enumerate(zip(want, got)) if a != b]
        check(want == got, "memtrace report %s vs the live report, from 'Showing' on: %d vs %d lines, first "
              "difference %r" % (" ".join(args), len(got), len(want), diff[0] if diff else "(length)"), d)
        rb = mtlib.parse_report(out)
        check_eq((rb.inuse, rb.allocated, rb.freed), (run.rep.inuse, run.rep.allocated, run.rep.freed),
                 "read-back header (in use, allocated, freed) vs live", d)
        if not cum:
            fout, fd = report_as_nobody(path, ["--folded", "--metric", metric])
            check_eq(sorted(fout.splitlines()), sorted(run.read("folded").splitlines()),
                     "memtrace report --folded --metric %s vs the live --folded (as sets of lines)" % metric,
                     fd + "\nlive:\n" + run.read("folded"))


@test("out.report.leaks", needs=("memtrace", "bpf", "root"))
def _report_leaks():
    """--leaks from the file: the same summary, groups and frames as the
    live --leaks (a profile has no addresses or ages)."""
    p = BY_NAME["leaks"]
    run = live("leaks")
    path = public_copy(run.files["pprof"], "leaks.leaks.pb.gz")
    out, d = report_as_nobody(path, ["--leaks", "--unit", "B", "-n", "1000"])
    rb = parse_leaks(out, d, live_run=False)
    lv = parse_leaks(run.read("leaks"), run.details("leaks"))
    check_eq(rb.summary_line, lv.summary_line, "read-back leak summary vs live", d)
    key = lambda g: (g.bytes, g.blocks, tuple(g.frames))  # noqa: E731
    check_eq(sorted(map(key, rb.groups)), sorted(map(key, lv.groups)),
             "read-back leak groups (bytes, blocks, frames) vs live", d)
    check_leak_groups(p, rb, d, live_run=False)


@test("out.report.top_n", needs=("memtrace", "bpf", "root"))
def _report_top_n():
    run = live("leaks")
    path = public_copy(run.files["pprof"], "leaks.top3.pb.gz")
    out, d = report_as_nobody(path, ["--top", "-n", "3", "--unit", "B"])
    rb = mtlib.parse_report(out)
    lv = run.rep
    check_eq(rb.shown, (3, lv.shown[1]), "'Showing top N of M' with -n 3", d)
    check_eq(rb.rows, lv.rows[:3], "read-back -n 3 rows vs the live report's first 3", d)
    check_eq([(s.value, s.objects, s.frames) for s in rb.stacks], [(s.value, s.objects, s.frames) for s in lv.stacks[:3]],
             "read-back -n 3 stacks vs the live report's first 3", d)


@test("out.report.goheap", needs=("memtrace",))
def _goheap():
    """A real Go heap profile: memtrace report's totals and flat per
    function = go tool pprof's, for the four sample types."""
    go_bin()
    bad = []
    text = ""
    for index in METRICS:
        res = mtlib.run_memtrace(["report", GOHEAP, "--metric", index, "--unit", "B", "-n", "1000"], timeout=60)
        check_eq(res.rc, 0, "memtrace report %s: exit status" % GOHEAP, mtlib.tail(res.stderr))
        text = res.stdout
        # A Go profile names no process and no allocator: give the header
        # parser what it wants there, the numbers are what is checked.
        text = re.sub(r"(?m)^target: .*$", "target: pid 0 (go)", text, count=1)
        text = re.sub(r"(?m)^allocator:\s*$", "allocator: go", text, count=1)
        rep = mtlib.parse_report(text)
        g = go_top(GOHEAP, index)
        m = re.search(r"total (\S+)$", rep.title or "")
        check(m, "no total in %r" % rep.title, mtlib.tail(res.stdout, 30))
        if mtlib.parse_value(m.group(1)) != g.total:
            bad.append("%s: table total %s, go %r" % (index, m.group(1), g.total))
        if header_total(rep, index) != g.total:
            bad.append("%s: header %r, go %r" % (index, header_total(rep, index), g.total))
        got = text_flats(rep)
        want = {k: v for k, v in g.flat.items() if v}
        if got != want:
            bad.append("%s: flat per function %r, go %r" % (index, got, want))
        # Go's own units (no -unit): kB = 1024 B, two decimals.
        auto = go_top(GOHEAP, index, unit=None).total
        if index.endswith("space") and abs(auto - g.total) > 0.01 * 1024 ** 2 / 2:
            bad.append("%s: go's scaled total %r is not %d B with kB = 1024" % (index, auto, g.total))
    check(not bad, "memtrace report vs go tool pprof on %s: %s" % (GOHEAP, "; ".join(bad)), mtlib.tail(text, 30))


# ---------------------------------------------------------------- corrupt input

def check_clean_error(res, what):
    details = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc, mtlib.tail(res.stderr))
    check(0 < res.rc < 128, "%s: exit status %d (a crash or signal is a failure)" % (what, res.rc), details)
    mtlib.check_one_line_error(res, what)


def report_file(data, name):
    d = tempfile.mkdtemp(prefix="corrupt.", dir=mtlib.TMPDIR)
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    res = mtlib.run_memtrace(["report", path, "--unit", "B", "-n", "50"], timeout=15)
    shutil.rmtree(d, ignore_errors=True)
    return res


@functools.lru_cache(maxsize=None)
def goheap_bytes():
    with open(GOHEAP, "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def goheap_report():
    res = report_file(goheap_bytes(), "heap.pb.gz")
    check_eq(res.rc, 0, "memtrace report of the intact %s" % GOHEAP, mtlib.tail(res.stderr))
    return res.stdout


@test("out.corrupt.empty", needs=("memtrace",))
def _empty():
    check_clean_error(report_file(b"", "empty.pb.gz"), "memtrace report on an empty file")


@test("out.corrupt.text", needs=("memtrace",))
def _text():
    data = b"This is not a profile.\nmemtrace 0.1.0 heap profile\n" * 20
    check_clean_error(report_file(data, "notes.txt"), "memtrace report on a text file")


@test("out.corrupt.truncated", needs=("memtrace",))
def _truncated():
    """Cut copies of a real profile: gzip's trailer (CRC, length) is gone,
    so every one of them is corrupt (python's gzip agrees)."""
    data = goheap_bytes()
    n = len(data)
    for length in sorted({1, 2, 10, 11, 64, n // 4, n // 2, 3 * n // 4, n - 8, n - 4, n - 1}):
        cut = data[:length]
        try:
            gzip.decompress(cut)
            raise mtlib.Fail("python's gzip reads the first %d of %d bytes: not a corrupt file" % (length, n))
        except (OSError, EOFError):
            pass
        check_clean_error(report_file(cut, "cut%d.pb.gz" % length), "memtrace report on the first %d of %d "
                          "bytes of %s" % (length, n, os.path.basename(GOHEAP)))


def pb_top_level_ends(buf):
    """Offsets where the top-level protobuf fields of buf end (wire format
    only); ValueError if buf is not a sequence of whole fields."""
    ends, i = [], 0

    def varint(i):
        shift = v = 0
        while True:
            if i >= len(buf) or shift > 63:
                raise ValueError("bad varint at %d" % i)
            b = buf[i]
            v |= (b & 0x7F) << shift
            i += 1
            shift += 7
            if not b & 0x80:
                return v, i

    while i < len(buf):
        key, i = varint(i)
        wt = key & 7
        if key >> 3 == 0:
            raise ValueError("field 0")
        if wt == 0:
            _, i = varint(i)
        elif wt == 1:
            i += 8
        elif wt == 2:
            n, i = varint(i)
            i += n
        elif wt == 5:
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        if i > len(buf):
            raise ValueError("field runs past the end")
        ends.append(i)
    return ends


@test("out.corrupt.payload_truncated", needs=("memtrace",))
def _payload_truncated():
    """The profile's protobuf cut inside a field, then gzipped properly: no
    protobuf decoder can read it."""
    payload = gzip.decompress(goheap_bytes())
    ends = set(pb_top_level_ends(payload))
    rng = random.Random(20240607)
    cuts = sorted({l for l in (rng.randrange(1, len(payload)) for _ in range(40)) if l not in ends})[:12]
    check(len(cuts) >= 8, "too few cut points inside fields")
    for length in cuts:
        try:
            pb_top_level_ends(payload[:length])
            continue  # a whole-field prefix after all: no expectation
        except ValueError:
            pass
        check_clean_error(report_file(gzip.compress(payload[:length], mtime=0), "pcut%d.pb.gz" % length),
                          "memtrace report on the protobuf cut to %d of %d bytes (gzipped)" % (length, len(payload)))


@test("out.corrupt.gzip_altered", needs=("memtrace",))
def _gzip_altered():
    """50 copies of a real profile with 1-3 bytes of the deflate data or
    trailer changed (seeded).  Where python's gzip rejects the copy (bad
    data, CRC or length), memtrace must fail cleanly; where it still
    decodes to the same profile, memtrace must print the same report."""
    data = goheap_bytes()
    payload = gzip.decompress(data)
    want = goheap_report()
    rng = random.Random(1234)
    corrupt = 0
    for k in range(50):
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            j = rng.randrange(10, len(b))
            b[j] = (b[j] + rng.randrange(1, 256)) % 256
        try:
            same = gzip.decompress(bytes(b)) == payload
        except (OSError, EOFError, zlib.error):
            same = None
        res = report_file(bytes(b), "alt%d.pb.gz" % k)
        what = "memtrace report on altered copy #%d of %s" % (k, os.path.basename(GOHEAP))
        if same is None:
            corrupt += 1
            check_clean_error(res, what + " (python's gzip rejects it)")
        elif same:
            check(res.rc == 0 and res.stdout == want, what + ": it gunzips to the same profile, yet the report "
                  "differs (exit status %d)" % res.rc, mtlib.tail(res.stderr))
        else:
            check(res.rc == 0 or (0 < res.rc < 128), what + ": exit status %d" % res.rc, mtlib.tail(res.stderr))
    check(corrupt >= 40, "only %d of 50 altered copies are corrupt: the test alters too little" % corrupt)


@test("out.corrupt.payload_altered", needs=("memtrace",))
def _payload_altered():
    """50 copies whose protobuf has bytes changed, removed or inserted
    (seeded), gzipped properly: a valid-looking profile is either rendered
    (exit 0, nothing on stderr) or refused with one 'memtrace: ' line and
    an exit status below 128; never a crash or a hang.  Copies whose
    top-level fields no longer parse must be refused."""
    payload = gzip.decompress(goheap_bytes())
    rng = random.Random(5678)
    refused = 0
    for k in range(50):
        b = bytearray(payload)
        kind = k % 4
        if kind == 0:
            for _ in range(rng.randint(1, 4)):
                j = rng.randrange(len(b))
                b[j] = rng.randrange(256)
        elif kind == 1:
            j = rng.randrange(len(b))
            del b[j:j + rng.randint(1, 16)]
        elif kind == 2:
            j = rng.randrange(len(b))
            b[j:j] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            j = rng.randrange(len(b))
            b[j] ^= 1 << rng.randrange(8)
        try:
            pb_top_level_ends(bytes(b))
            wire_ok = True
        except ValueError:
            wire_ok = False
        res = report_file(gzip.compress(bytes(b), mtime=0), "palt%d.pb.gz" % k)
        what = "memtrace report on protobuf-altered copy #%d (seed 5678)" % k
        if not wire_ok or res.rc != 0:
            refused += 1
            check_clean_error(res, what + ("" if wire_ok else " (its top-level fields do not parse)"))
        else:
            check_eq(mtlib.error_lines(res.stderr), [], what + ": stderr of a rendered profile")
            check(res.stdout.startswith("memtrace %s heap profile\n" % mtlib.VERSION),
                  what + ": exit 0 but no report on stdout", mtlib.tail(res.stdout))
    check(refused >= 10, "only %d of 50 protobuf-altered copies were refused: the test alters too little" % refused)


# ---------------------------------------------------------------- registration

for _p in PROGRAMS:
    make_leaks_test(_p)
    make_folded_test(_p)
    make_raw_test(_p)
    make_pprof_test(_p)

for _name, _value in BAD_MIN_AGE.items():
    make_bad_min_age_test(_name, _value)

for _m in METRICS:
    if _m != "inuse_space":
        make_folded_metric_test(BY_NAME["leaks"], _m)
    make_pprof_metric_test(BY_NAME["leaks"], _m)
    make_report_test(_m, flag="--top" if _m == "inuse_space" else None)
for _m in ("alloc_space", "alloc_objects"):
    make_folded_metric_test(BY_NAME["realloc"], _m)
make_pprof_metric_test(BY_NAME["leaks"], "inuse_space", cum=True)
make_report_test("inuse_space", cum=True)
