"""Sampling accuracy (-s N): memtrace's estimates against the exact
allocations of tests/progs/sampled.c, about 1.7 GB in 504,000 blocks of
16 B to 64 KiB from two threads; leak_small and leak_large keep theirs,
churn_small and churn_large free theirs.

The truth is recomputed here from the program's own generator (PLAN and
splitmix64 below, kept in step with sampled.c), and checked against
valgrind.  The tolerances are the issue's: total allocated bytes within
5%, each leaking function's bytes in use within 10% (and, beyond it, each
function's allocated bytes within 10%, the allocations sampled within 5%).

Each sampled block stands for X = s/p with probability p = 1 - e^(-s/N),
else 0, independently of every other block (the sample points are a
Poisson process), so every checked figure is a sum of independent terms
whose variance the sizes give exactly.  Bernstein's inequality then bounds
the chance that a correct estimator misses each tolerance; the test first
checks that these bounds add up to less than one in a million, so a
failure here is a fault, not bad luck."""

import math
import os

import mtlib
from mtlib import check, check_eq, test

PROG = "sampled"
THREADS = 2
# Per thread: function -> (lowest band, band after the highest, blocks);
# a size is 2^b + uniform(2^b), b uniform in [lo, hi).  As in sampled.c.
PLAN = {
    "churn_small": (4, 12, 100000),
    "churn_large": (12, 16, 30000),
    "leak_small": (4, 10, 120000),
    "leak_large": (13, 16, 2000),
}
LEAKS = ("leak_small", "leak_large")
MEAN = 16384            # -s: mean bytes between sample points
MAX_FAILURE = 1e-6      # chance that a correct estimator fails any check
M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def sizes():
    """function -> every size it allocates, over all threads."""
    out = {}
    for t in range(THREADS):
        for f, (name, (lo, hi, n)) in enumerate(PLAN.items()):
            state = ((t + 1) << 8) | f
            got = out.setdefault(name, [])
            for _ in range(n):
                state, r = splitmix64(state)
                b = lo + r % (hi - lo)
                state, r = splitmix64(state)
                got.append((1 << b) + r % (1 << b))
    return out


class Sum:
    """A sum of independent sampled terms: its exact mean and variance,
    the largest deviation of one term, and the bytes themselves."""

    def __init__(self):
        self.mean = self.var = self.dev = 0.0
        self.bytes = 0

    def add_block(self, s):
        """A block of s bytes, estimated by s/p bytes when sampled."""
        p = -math.expm1(-s / MEAN)
        self.bytes += s
        self.mean += s
        self.var += s * s * (1 - p) / p
        self.dev = max(self.dev, s / p)

    def add_count(self, s):
        """A block of s bytes, counted 1 when sampled."""
        p = -math.expm1(-s / MEAN)
        self.mean += p
        self.var += p * (1 - p)
        self.dev = max(self.dev, 1.0)

    def failure_bound(self, rel):
        """Bernstein: P(|estimate - mean| >= rel * mean)."""
        t = rel * self.mean
        return min(1.0, 2 * math.exp(-t * t / (2 * (self.var + self.dev * t / 3))))


def expectations():
    """[(what, Sum, relative tolerance)] for every check."""
    by_fn = sizes()
    total, samples, checks = Sum(), Sum(), []
    for name, szs in by_fn.items():
        fn = Sum()
        for s in szs:
            fn.add_block(s)
            total.add_block(s)
            samples.add_count(s)
        checks.append(("%s alloc_space" % name, fn, 0.10))
        if name in LEAKS:
            checks.append(("%s inuse_space" % name, fn, 0.10))
    checks.append(("allocated bytes", total, 0.05))
    checks.append(("allocations sampled", samples, 0.05))
    return checks


_CHECKS = []


def checks():
    if not _CHECKS:
        _CHECKS.extend(expectations())
    return _CHECKS


@test("sampling.design", needs=())
def _design():
    """The volumes make a correct estimator fail less than once in 1e6 runs."""
    total = next(s for what, s, _ in checks() if what == "allocated bytes")
    check(total.bytes >= 1 << 30, "the program allocates %d bytes, less than 1 GiB" % total.bytes)
    bounds = ["%s: %.2e" % (what, s.failure_bound(rel)) for what, s, rel in checks()]
    worst = sum(s.failure_bound(rel) for _, s, rel in checks())
    check(worst < MAX_FAILURE, "a correct estimator would fail with probability up to %.2e "
          "(more than %g): %s" % (worst, MAX_FAILURE, "; ".join(bounds)))


@test("sampling.truth_is_valgrinds", needs=("valgrind",))
def _truth():
    """The generator here makes what sampled.c makes (glibc adds a calloc per thread)."""
    vg = mtlib.valgrind(PROG)
    by_fn = sizes()
    want_allocs = sum(len(v) for v in by_fn.values())
    want_bytes = sum(sum(v) for v in by_fn.values())
    check_eq(vg.allocs - THREADS, want_allocs, "valgrind's allocs less one per thread")
    check(0 <= vg.bytes - want_bytes < 1024 * THREADS,
          "valgrind counts %d bytes allocated, the generator %d (glibc's own: a few hundred a thread)"
          % (vg.bytes, want_bytes))


@test("sampling.accuracy")
def _accuracy():
    text = os.path.join(mtlib.TMPDIR, "sampled.txt")
    prof = os.path.join(mtlib.TMPDIR, "sampled.pb.gz")
    res = mtlib.run_memtrace(["-s", str(MEAN), "--unit", "B", "-n", "50", "--text=" + text,
                              "--pprof", prof, "--", mtlib.prog_path(PROG)])
    details = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc,
                                                            mtlib.tail(res.stderr))
    check_eq(res.rc, 0, "memtrace's exit status", details)
    with open(text, encoding="utf-8") as f:
        inuse = mtlib.parse_report(f.read())
    alloc_res = mtlib.run_memtrace(["report", prof, "--metric", "alloc_space", "--unit", "B",
                                    "-n", "50"])
    check_eq(alloc_res.rc, 0, "exit status of memtrace report --metric alloc_space",
             alloc_res.stderr)
    alloc = mtlib.parse_report(alloc_res.stdout)
    details += "\nreport:\n" + inuse.text
    check_eq(inuse.sampling and inuse.sampling[0], MEAN, "the header's sampling mean", details)
    check_eq(inuse.drops[0], 0, "drops", details)

    def flat(rep, name):
        row = rep.row(name)
        return row.flat if row else 0

    got = {"allocated bytes": inuse.allocated[0], "allocations sampled": inuse.sampling[1]}
    for name in PLAN:
        got["%s alloc_space" % name] = flat(alloc, name)
        got["%s inuse_space" % name] = flat(inuse, name)
    bad = []
    for what, s, rel in checks():
        err = (got[what] - s.mean) / s.mean
        if abs(err) > rel:
            bad.append("%s: %d, truth %.0f (%+.2f%%, allowed %g%%)" % (
                what, got[what], s.mean, 100 * err, 100 * rel))
    # What churn_* allocated was all freed: their estimates cancel exactly.
    for name in PLAN:
        if name not in LEAKS and got["%s inuse_space" % name] != 0:
            bad.append("%s inuse_space: %d, expected 0 (it frees every block)"
                       % (name, got["%s inuse_space" % name]))
    check(not bad, "estimates off: " + "; ".join(bad), details)
