"""--bench-part, the benchmark's instrument (scripts/bench_real.sh): each
part does less of the work, and what it does must still be right, or the
cost it measures is not the cost of that part.  On leaks.c (programs.py):

  bench_part.traps    --probe-only's programs return at once: no call is
                      counted, nothing is recorded
  bench_part.blocks   every block and its size, no stack: the totals are
                      the program's, every stack has no frame, no stack
                      error is counted (none was taken)
  bench_part.caller   one frame, the allocator's caller: the totals and
                      the flat bytes of each function are the program's,
                      every stack has exactly one address
"""

import os

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, totals

PROG = BY_NAME["leaks"]


def run_part(part):
    """memtrace --bench-part PART --raw=FILE -o FILE -- leaks: (report, raw
    stacks, details)."""
    base = os.path.join(mtlib.TMPDIR, "bench_part.%s" % part)
    txt, raw = base + ".txt", base + ".raw"
    for f in (txt, raw):
        if os.path.exists(f):
            os.unlink(f)
    res = mtlib.run_memtrace(["--bench-part", part, "--unit", "B", "-n", "100", "-o", txt,
                              "--raw=" + raw, "--", mtlib.prog_path(PROG.name)], timeout=120)
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc, mtlib.tail(res.stderr))
    check_eq(res.rc, 0, "memtrace --bench-part %s: exit status (the program's)" % part, d)
    check(os.path.exists(txt) and os.path.exists(raw), "no report written", d)
    with open(txt, encoding="utf-8", errors="replace") as f:
        rep = mtlib.parse_report(f.read())
    with open(raw, encoding="utf-8", errors="replace") as f:
        stacks = mtlib.parse_raw(f.read(), d)
    return rep, stacks, d + "\nreport:\n" + mtlib.tail(rep.text, 40)


def check_totals(rep, part, d):
    t = totals(PROG)
    check_eq(rep.inuse, (t["inuse_space"], t["inuse_objects"]), "--bench-part %s: in use" % part, d)
    check_eq(rep.allocated, (t["alloc_space"], t["alloc_objects"]), "--bench-part %s: allocated" % part, d)
    check_eq(rep.events, (PROG.calls, 0), "--bench-part %s: allocator calls" % part, d)
    check_eq(rep.drops[0], 0, "--bench-part %s: drops" % part, d)


@test("bench_part.traps")
def _traps():
    rep, stacks, d = run_part("traps")
    check_eq(rep.events, (0, 0), "--bench-part traps: allocator calls counted", d)
    check_eq(rep.allocated, (0, 0), "--bench-part traps: allocated", d)
    check_eq(len(stacks), 0, "--bench-part traps: stacks", d)


@test("bench_part.blocks")
def _blocks():
    rep, stacks, d = run_part("blocks")
    check_totals(rep, "blocks", d)
    check(stacks, "--bench-part blocks: no stack in --raw", d)
    check_eq([len(s.ips) for s in stacks], [0] * len(stacks), "--bench-part blocks: addresses per stack", d)
    check_eq(rep.drops[1].get("stack errors"), 0, "--bench-part blocks: stack errors", d)


@test("bench_part.caller")
def _caller():
    rep, stacks, d = run_part("caller")
    check_totals(rep, "caller", d)
    check_eq(sorted(len(s.ips) for s in stacks), [1] * len(stacks), "--bench-part caller: addresses per stack", d)
    for name, fn in PROG.funcs.items():
        row = rep.row(name)
        check_eq(row.flat if row else 0, fn.inuse_space, "--bench-part caller: flat in-use bytes of %s" % name, d)
