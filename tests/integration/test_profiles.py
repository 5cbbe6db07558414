"""memtrace -- PROG on every test program: header totals against valgrind,
per-function numbers for the four metrics, stacks with their lines, cum,
and the definition lines in the table."""

import os

import mtlib
from mtlib import check, check_eq, test
from programs import METRICS, PROGRAMS, totals

TOTAL_OF = {
    "inuse_space": lambda r: r.inuse[0],
    "inuse_objects": lambda r: r.inuse[1],
    "alloc_space": lambda r: r.allocated[0],
    "alloc_objects": lambda r: r.allocated[1],
}


def expected_totals(p):
    """(what, {key: value}) the header must show: valgrind's numbers, or
    the program's own when valgrind cannot run it."""
    if p.valgrind is None:
        vg = mtlib.valgrind(p.name)
        return "valgrind", {
            "allocated": (vg.bytes, vg.allocs),
            "in use": (vg.inuse_bytes, vg.inuse_blocks),
            "freed objects": vg.frees,
            "freed bytes": vg.bytes - vg.inuse_bytes,
        }
    t = totals(p)
    return "the program (%s)" % p.valgrind, {
        "allocated": (t["alloc_space"], t["alloc_objects"]),
        "in use": (t["inuse_space"], t["inuse_objects"]),
        "freed objects": t["alloc_objects"] - t["inuse_objects"],
        "freed bytes": t["alloc_space"] - t["inuse_space"],
    }


def details_of(res, rep):
    return "command: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 8), mtlib.tail(rep.text, 60))


def check_clean(p, res, rep):
    """What every report of a -- CMD run must say regardless of metric."""
    d = details_of(res, rep)
    check_eq(res.rc, p.exit_status, "%s: memtrace's exit status (the program's)" % p.name, d)
    check_eq(rep.version, mtlib.VERSION, "version in the report", d)
    check_eq(rep.target_comm, p.name[:15], "target comm", d)
    check(rep.allocator.startswith("glibc ") and "libc.so" in rep.allocator,
          "allocator line %r does not name glibc's libc.so" % rep.allocator, d)
    check_eq(rep.drops[0], 0, "%s: drops" % p.name, d)
    check(all(v == 0 for v in rep.drops[1].values()), "%s: drops %r" % (p.name, rep.drops[1]), d)


def make_header_test(p):
    @test("header." + p.name)
    def _t():
        res, rep = mtlib.trace(p.name, "inuse_space")
        check_clean(p, res, rep)
        d = details_of(res, rep)
        source, want = expected_totals(p)
        got = {
            "allocated": rep.allocated,
            "in use": rep.inuse,
            "freed objects": rep.freed[1],
            "freed bytes": rep.freed[0],
        }
        bad = ["%s: memtrace %r, %s %r" % (k, got[k], source, want[k]) for k in want if got[k] != want[k]]
        check(not bad, "%s: header disagrees with %s: %s" % (p.name, source, "; ".join(bad)), d)
        check_eq(rep.events[1], p.failed, "%s: failed allocator calls" % p.name, d)
        if rep.untracked != p.untracked:
            why = " (cause: %s)" % p.untracked_hint if p.untracked_hint else ""
            raise mtlib.Fail("%s: untracked frees: expected %d (nothing was allocated before memtrace "
                             "attached), got %d%s" % (p.name, p.untracked, rep.untracked, why), d)
        if p.calls is not None:
            check_eq(rep.events[0], p.calls, "%s: allocator calls" % p.name, d)
        else:
            low = rep.allocated[1] + rep.events[1]
            check(rep.events[0] >= low, "%s: %d allocator calls, fewer than allocations + failures (%d)"
                  % (p.name, rep.events[0], low), d)


def find_row(rep, name):
    return rep.row(name)


def make_metric_test(p, metric):
    @test("metric.%s.%s" % (p.name, metric))
    def _t():
        res, rep = mtlib.trace(p.name, metric)
        check_clean(p, res, rep)
        d = details_of(res, rep)
        check(rep.title and metric in rep.title and "flat" in rep.title,
              "table title %r does not say 'flat %s'" % (rep.title, metric), d)
        bad = []
        for name, fn in p.funcs.items():
            want = getattr(fn, metric)
            row = find_row(rep, name)
            if row is None:
                if want != 0:
                    bad.append("%s: no row, expected flat %d" % (name, want))
            elif row.flat != want:
                bad.append("%s: flat %r, expected %d" % (name, row.flat, want))
        check(not bad, "%s --metric %s: %s" % (p.name, metric, "; ".join(bad)), d)
        flats = [r.flat for r in rep.rows]
        check(all(isinstance(v, int) for v in flats), "--unit B values are not exact integers", d)
        check(flats == sorted(flats, reverse=True), "rows are not sorted by flat, descending", d)
        if rep.shown and rep.shown[1] <= rep.shown[0]:
            check_eq(len(rep.rows), rep.shown[1], "rows in a table that shows all functions", d)
            total = TOTAL_OF[metric](rep)
            check_eq(sum(flats), total, "sum of flat over all functions vs header total of %s" % metric, d)
            if total:
                check(abs(rep.rows[-1].sum_pct - 100.0) < 0.02,
                      "sum%% of the last row is %.2f, not 100" % rep.rows[-1].sum_pct, d)


def stack_matches(st, frames):
    """st begins with the functions of frames."""
    if len(st.frames) < len(frames):
        return False
    return all(mtlib.same_function(st.frames[i].function, f.function) for i, f in enumerate(frames))


def frames_by_line(st, frames, src):
    """st's first frames are at the call-site lines of frames."""
    return all(st.frames[i].line == mtlib.marker_line(src, f.marker) for i, f in enumerate(frames))


def make_stacks_test(p, metric, stacks, name):
    @test(name)
    def _t():
        res, rep = mtlib.trace(p.name, metric)
        d = details_of(res, rep)
        check(rep.stacks_title and metric in rep.stacks_title,
              "no 'Top N stacks by %s:' section" % metric, d)
        bad = []
        for exp in stacks:
            names = " <- ".join(f.function for f in exp.frames)
            found = [s for s in rep.stacks if stack_matches(s, exp.frames)]
            if len(found) > 1:
                # Same functions, other call sites: pick the one of this line.
                found = [s for s in found if frames_by_line(s, exp.frames, p.src)] or found
            if not found:
                if exp.inuse_space == 0:
                    continue  # a stack of 0 bytes need not be listed by *_space
                bad.append("no stack %s" % names)
                continue
            if len(found) > 1:
                bad.append("%d stacks %s, expected one" % (len(found), names))
                continue
            st = found[0]
            if st.value != exp.inuse_space or (st.objects is not None and st.objects != exp.inuse_objects):
                bad.append("stack %s: %r B in %r objects, expected %d B in %d objects"
                           % (names, st.value, st.objects, exp.inuse_space, exp.inuse_objects))
            for fr, got in zip(exp.frames, st.frames):
                line = mtlib.marker_line(p.src, fr.marker)
                where = "%s:%d" % (p.src, line)
                gwhere = "%s:%s" % (os.path.basename(got.file or "?"), got.line)
                if gwhere != where:
                    bad.append("frame %s at %s, expected %s" % (fr.function, gwhere, where))
                if got.inlined != fr.inlined:
                    bad.append("frame %s %s (inlined)" % (fr.function, "lacks" if fr.inlined else "has"))
        check(not bad, "%s: %s" % (p.name, "; ".join(bad)), d)


def make_cum_test(p):
    @test("cum." + p.name)
    def _t():
        res, rep = mtlib.trace(p.name, "inuse_space", cum=True)
        check_clean(p, res, rep)
        d = details_of(res, rep)
        check(rep.title and "cum" in rep.title, "table title %r does not say cum" % rep.title, d)
        cums = [r.cum for r in rep.rows]
        check(cums == sorted(cums, reverse=True), "--cum rows are not sorted by cum, descending", d)
        check(all(r.cum >= r.flat for r in rep.rows), "a row has cum < flat", d)
        want = {}
        for st in p.stacks:
            for name in {f.function for f in st.frames}:
                want[name] = want.get(name, 0) + st.inuse_space
        bad = []
        for name, value in sorted(want.items()):
            row = find_row(rep, name)
            if row is None:
                if value:
                    bad.append("%s: no row, expected cum %d" % (name, value))
                continue
            if row.cum != value:
                bad.append("%s: cum %r, expected %d" % (name, row.cum, value))
            if name in p.funcs and row.flat != p.funcs[name].inuse_space:
                bad.append("%s: flat %r, expected %d" % (name, row.flat, p.funcs[name].inuse_space))
        check(not bad, "%s --cum: %s" % (p.name, "; ".join(bad)), d)


def make_deflines_test(p):
    @test("deflines." + p.name)
    def _t():
        res, rep = mtlib.trace(p.name, "alloc_objects")
        _, cum = mtlib.trace(p.name, "inuse_space", cum=True)
        d = details_of(res, rep)
        bad = []
        for name, fn in p.funcs.items():
            row = find_row(rep, name) or find_row(cum, name)
            if row is None:
                bad.append("%s: not in the table" % name)
                continue
            want = "%s:%d" % (p.src, mtlib.marker_line(p.src, fn.def_marker))
            got = "%s:%s" % (os.path.basename(row.file or "?"), row.line)
            if got != want:
                bad.append("%s defined at %s, table says %s" % (name, want, got))
        check(not bad, "%s: %s" % (p.name, "; ".join(bad)), d)


for _p in PROGRAMS:
    make_header_test(_p)
    for _m in METRICS:
        make_metric_test(_p, _m)
    make_stacks_test(_p, "inuse_space", _p.stacks, "stacks." + _p.name)
    if _p.alloc_stacks:
        make_stacks_test(_p, "alloc_space", _p.alloc_stacks, "stacks_alloc." + _p.name)
    make_cum_test(_p)
    make_deflines_test(_p)

