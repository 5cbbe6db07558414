"""`memtrace report FILE FILE... --growth` on interval profiles of
tests/progs/grower.c, one per round N = 1..4 (`memtrace --pprof
heap.000N.pb.gz -- grower N`): a stack that grows steadily, one that stays
flat, one that shrinks and one that jumps at the last round.  Expected
values come from the model of grower.c below (its comments), never from
memtrace:

  growth.text.METRIC  the stacks that grew from the first profile to the
                      last (last less first), largest first, nothing else,
                      each with its value in every profile
  growth.reversed     the files in the other order: what shrank grows
  growth.folded       --folded of the growth
  growth.pprof        --pprof of the growth, read back by memtrace report
  growth.many         9 files: 8 values shown, the first, the last and
                      evenly between, "(8 of 9 profiles)"
  growth.errors       several files without --growth, one file with it,
                      --growth with --base or while tracing, a missing
                      file: one line, non-zero exit
"""

import functools
import os
import re

import mtlib
from mtlib import check, check_eq, test

SRC = "grower.c"
ROUNDS = (1, 2, 3, 4)
METRIC_INDEX = {"alloc_objects": 0, "alloc_space": 1, "inuse_objects": 2, "inuse_space": 3}


def model(n):
    """grower.c N: function -> (alloc_objects, alloc_space, inuse_objects,
    inuse_space), from its source."""
    shrink = max(0, 5 - n)
    return {
        "grow_steady": (n, 1000 * n, n, 1000 * n),
        "flat_keep": (4, 2000, 4, 2000),
        "shrink": (shrink, 300 * shrink, shrink, 300 * shrink),
        "jump": (1, 8192, 1, 8192) if n >= 4 else (0, 0, 0, 0),
        "churn": (n, 64 * n, 0, 0),
    }


def expected(rounds, metric):
    """[(function, growth, other value's growth, series)] of the functions
    that grew from the first round to the last, largest first."""
    k = METRIC_INDEX[metric]
    other = k ^ 1  # bytes <-> objects
    first, last = model(rounds[0]), model(rounds[-1])
    rows = []
    for fn in first:
        grew = last[fn][k] - first[fn][k]
        if grew > 0:
            rows.append((fn, grew, last[fn][other] - first[fn][other],
                         [model(n)[fn][k] for n in rounds]))
    return sorted(rows, key=lambda r: -r[1])


@functools.lru_cache(maxsize=None)
def profiles():
    """heap.000N.pb.gz of grower N for every round, made once."""
    d = os.path.join(mtlib.TMPDIR, "growth")
    os.makedirs(d, exist_ok=True)
    paths = {}
    for n in ROUNDS:
        path = os.path.join(d, "heap.%04d.pb.gz" % n)
        res = mtlib.run_memtrace(["--pprof", path, "--", mtlib.prog_path("grower"), str(n)])
        check_eq(res.rc, 0, "memtrace -- grower %d: exit status" % n, mtlib.tail(res.stderr))
        check(os.path.exists(path), "no profile %s" % path, mtlib.tail(res.stderr))
        paths[n] = path
    return paths


def report(args, what):
    res = mtlib.run_memtrace(["report"] + args)
    d = "command: %s\nexit status: %s\nstderr:\n%s\nstdout:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr), mtlib.tail(res.stdout, 60))
    check_eq(res.rc, 0, "%s: exit status" % what, d)
    return res.stdout, d


SERIES_RE = re.compile(r"; in each profile: (.*?)(?: \((\d+) of (\d+) profiles\))?$")


def series_of(stack, d):
    m = SERIES_RE.search(stack.head)
    check(m, "no series in the stack heading %r" % stack.head, d)
    values = [mtlib.parse_value(v) for v in m.group(1).split(" -> ")]
    shown = (int(m.group(2)), int(m.group(3))) if m.group(2) else None
    return values, shown


def check_growth(rounds, metric, extra=()):
    paths = profiles()
    text, d = report([paths[n] for n in rounds] + ["--growth", "--unit", "B", "--metric", metric]
                     + list(extra), "report --growth")
    rep = mtlib.parse_report(text)
    want = expected(rounds, metric)
    got = [(s.frames[0].function if s.frames else "?", s.value, s.objects) for s in rep.stacks]
    bytes_metric = metric.endswith("_space")
    values = [v for _, v, _ in got]
    check_eq(values, sorted(values, reverse=True), "stacks largest first", d)
    # Equal values in either order.  "#1 3000B in 3 objects" (bytes),
    # "#1 3 objects (3000B)" (objects).
    check_eq(sorted(got, key=lambda g: (-g[1], g[0])),
             sorted([(fn, v, o if bytes_metric else None) for fn, v, o, _ in want],
                    key=lambda g: (-g[1], g[0])),
             "stacks that grew (leaf, %s, other value)" % metric, d)
    series = {fn: s for fn, _, _, s in want}
    for s, (fn, _, _) in zip(rep.stacks, got):
        values, shown = series_of(s, d)
        check_eq(values, series[fn], "%s: %s in each profile" % (fn, metric), d)
        check_eq(shown, None, "%s: every profile shown" % fn, d)
    # The table: what grew, nothing of what did not.
    for fn in model(1):
        row = rep.row(fn)
        grew = [w for w in want if w[0] == fn]
        check_eq(row.flat if row else 0, grew[0][1] if grew else 0, "flat %s of %s" % (metric, fn), d)
    return rep, d


def make_text_test(metric):
    @test("growth.text." + metric)
    def _t():
        check_growth(ROUNDS, metric)


for _m in METRIC_INDEX:
    make_text_test(_m)


@test("growth.reversed")
def _reversed():
    rounds = tuple(reversed(ROUNDS))
    check_eq([w[0] for w in expected(rounds, "inuse_space")], ["shrink"], "the model's growth", "")
    check_growth(rounds, "inuse_space")


@test("growth.folded")
def _folded():
    paths = profiles()
    text, d = report([paths[n] for n in ROUNDS] + ["--growth", "--folded"], "report --growth --folded")
    got = {}
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        got[stack.split(";")[-1]] = got.get(stack.split(";")[-1], 0) + int(value)
    want = {fn: v for fn, v, _, _ in expected(ROUNDS, "inuse_space")}
    check_eq(got, want, "folded leaves and values of the growth", d)
    for line in text.splitlines():
        check(line.startswith("_start;") and ";main;" in line, "folded line not from main: %r" % line, d)


@test("growth.pprof")
def _pprof():
    paths = profiles()
    out = os.path.join(mtlib.TMPDIR, "growth", "growth.pb.gz")
    _, d = report([paths[n] for n in ROUNDS] + ["--growth", "--pprof", out], "report --growth --pprof")
    check(os.path.exists(out), "no --pprof file written", d)
    text, d = report([out, "--unit", "B"], "report of the growth profile")
    rep = mtlib.parse_report(text)
    want = expected(ROUNDS, "inuse_space")
    got = [(s.frames[0].function if s.frames else "?", s.value, s.objects) for s in rep.stacks]
    check_eq(got, [(fn, v, o) for fn, v, o, _ in want], "stacks of the growth read back", d)
    check(all("; in each profile" not in s.head for s in rep.stacks), "a series in a single profile's report", d)


@test("growth.many")
def _many():
    paths = profiles()
    rounds = ROUNDS + (4,) * 5  # 9 files, the last one five more times
    text, d = report([paths[n] for n in rounds] + ["--growth", "--unit", "B"], "report --growth of 9 files")
    rep = mtlib.parse_report(text)
    want = expected(rounds, "inuse_space")
    check_eq([s.frames[0].function for s in rep.stacks], [w[0] for w in want], "stacks that grew", d)
    for s, (fn, _, _, series) in zip(rep.stacks, want):
        values, shown = series_of(s, d)
        check_eq(shown, (8, 9), "%s: profiles shown" % fn, d)
        # The first, the last and evenly between: round(k * 8 / 7).
        check_eq(values, [series[(k * 8 * 2 + 7) // 14] for k in range(8)], "%s: series shown" % fn, d)


@test("growth.errors")
def _errors():
    paths = profiles()
    a, b = paths[1], paths[2]
    for args, what, mention in (
            ([a, b], "two files without --growth", ("--growth",)),
            ([a, "--growth"], "--growth of one file", ("two",)),
            ([a, b, "--growth", "--base", a], "--growth with --base", ("--base",)),
            ([a, os.path.join(mtlib.TMPDIR, "growth", "missing.pb.gz"), b, "--growth"],
             "a missing file among them", ("missing.pb.gz",))):
        res = mtlib.run_memtrace(["report"] + args, timeout=60)
        mtlib.check_one_line_error(res, what, mention)
    res = mtlib.run_memtrace(["--growth", "--", "true"], timeout=60)
    mtlib.check_one_line_error(res, "--growth while tracing", ("report",))
    check_eq(res.rc, 2, "--growth while tracing: exit status", res.stderr)
