"""Sampling accuracy (-s N): memtrace's estimates against the exact
allocations of tests/progs/sampled.c, made by two threads through four
functions: leak_small and leak_large keep their blocks, churn_small and
churn_large free theirs.  Two plans:
  fine, at -s 16384: about 1.7 GB in 504,000 blocks of 16 B to 64 KiB;
  coarse, at -s 524288 (a production rate): about 10 GB in 59,600 blocks
  of 1 KiB to 4 MiB (a leak needs gigabytes to be estimated within 10%
  at that rate, so the blocks are large; only their address space is).

The truth is recomputed here from the program's own generator (PLANS and
splitmix64 below, kept in step with sampled.c), and checked against
valgrind for the fine plan (the same generator makes both).  The tolerances are the issue's: total allocated bytes within
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
# plan -> (program arguments, -s mean, per thread: function -> (lowest
# band, band after the highest, blocks)); a size is 2^b + uniform(2^b),
# b uniform in [lo, hi).  As in sampled.c.
PLANS = {
    "fine": ([], 16384, {
        "churn_small": (4, 12, 100000),
        "churn_large": (12, 16, 30000),
        "leak_small": (4, 10, 120000),
        "leak_large": (13, 16, 2000),
    }),
    "coarse": (["coarse"], 524288, {
        "churn_small": (10, 18, 20000),
        "churn_large": (18, 22, 1000),
        "leak_small": (12, 19, 8000),
        "leak_large": (19, 22, 800),
    }),
}
LEAKS = ("leak_small", "leak_large")
MAX_FAILURE = 1e-6      # chance that a correct estimator fails any check of a run
M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def sizes(plan):
    """function -> every size it allocates, over all threads."""
    out = {}
    for t in range(THREADS):
        for f, (name, (lo, hi, n)) in enumerate(plan.items()):
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

    def __init__(self, mean):
        self.n = mean       # -s: mean bytes between sample points
        self.mean = self.var = self.dev = 0.0
        self.bytes = 0

    def add_block(self, s):
        """A block of s bytes, estimated by s/p bytes when sampled."""
        p = -math.expm1(-s / self.n)
        self.bytes += s
        self.mean += s
        self.var += s * s * (1 - p) / p
        self.dev = max(self.dev, s / p)

    def add_count(self, s):
        """A block of s bytes, counted 1 when sampled."""
        p = -math.expm1(-s / self.n)
        self.mean += p
        self.var += p * (1 - p)
        self.dev = max(self.dev, 1.0)

    def failure_bound(self, rel):
        """Bernstein: P(|estimate - mean| >= rel * mean)."""
        t = rel * self.mean
        return min(1.0, 2 * math.exp(-t * t / (2 * (self.var + self.dev * t / 3))))


def expectations(name):
    """[(what, Sum, relative tolerance)] for every check of plan NAME."""
    _, mean, plan = PLANS[name]
    total, samples, checks = Sum(mean), Sum(mean), []
    for fn_name, szs in sizes(plan).items():
        fn = Sum(mean)
        for s in szs:
            fn.add_block(s)
            total.add_block(s)
            samples.add_count(s)
        checks.append(("%s alloc_space" % fn_name, fn, 0.10))
        if fn_name in LEAKS:
            checks.append(("%s inuse_space" % fn_name, fn, 0.10))
    checks.append(("allocated bytes", total, 0.05))
    checks.append(("allocations sampled", samples, 0.05))
    return checks


_CHECKS = {}


def checks(name):
    if name not in _CHECKS:
        _CHECKS[name] = expectations(name)
    return _CHECKS[name]


def make_design_test(name):
    @test("sampling.%s.design" % name, needs=())
    def _design():
        """The volumes make a correct estimator fail less than once in 1e6 runs."""
        cs = checks(name)
        total = next(s for what, s, _ in cs if what == "allocated bytes")
        check(total.bytes >= 1 << 30, "the program allocates %d bytes, less than 1 GiB" % total.bytes)
        bounds = ["%s: %.2e" % (what, s.failure_bound(rel)) for what, s, rel in cs]
        worst = sum(s.failure_bound(rel) for _, s, rel in cs)
        check(worst < MAX_FAILURE, "a correct estimator would fail with probability up to %.2e "
              "(more than %g): %s" % (worst, MAX_FAILURE, "; ".join(bounds)))


@test("sampling.truth_is_valgrinds", needs=("valgrind",))
def _truth():
    """The generator here makes what sampled.c makes (glibc adds a calloc per thread)."""
    vg = mtlib.valgrind(PROG)
    by_fn = sizes(PLANS["fine"][2])
    want_allocs = sum(len(v) for v in by_fn.values())
    want_bytes = sum(sum(v) for v in by_fn.values())
    check_eq(vg.allocs - THREADS, want_allocs, "valgrind's allocs less one per thread")
    check(0 <= vg.bytes - want_bytes < 1024 * THREADS,
          "valgrind counts %d bytes allocated, the generator %d (glibc's own: a few hundred a thread)"
          % (vg.bytes, want_bytes))


def make_accuracy_test(name):
    @test("sampling.%s.accuracy" % name)
    def _accuracy():
        args, mean, plan = PLANS[name]
        text = os.path.join(mtlib.TMPDIR, "sampled.%s.txt" % name)
        prof = os.path.join(mtlib.TMPDIR, "sampled.%s.pb.gz" % name)
        res = mtlib.run_memtrace(["-s", str(mean), "--unit", "B", "-n", "50", "--text=" + text,
                                  "--pprof", prof, "--", mtlib.prog_path(PROG)] + args)
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
        check_eq(inuse.sampling and inuse.sampling[0], mean, "the header's sampling mean", details)
        check_eq(inuse.drops[0], 0, "drops", details)

        def flat(rep, fn_name):
            row = rep.row(fn_name)
            return row.flat if row else 0

        got = {"allocated bytes": inuse.allocated[0], "allocations sampled": inuse.sampling[1]}
        for fn_name in plan:
            got["%s alloc_space" % fn_name] = flat(alloc, fn_name)
            got["%s inuse_space" % fn_name] = flat(inuse, fn_name)
        bad = []
        for what, s, rel in checks(name):
            err = (got[what] - s.mean) / s.mean
            if abs(err) > rel:
                bad.append("%s: %d, truth %.0f (%+.2f%%, allowed %g%%)" % (
                    what, got[what], s.mean, 100 * err, 100 * rel))
        # What churn_* allocated was all freed: their estimates cancel exactly.
        for fn_name in plan:
            if fn_name not in LEAKS and got["%s inuse_space" % fn_name] != 0:
                bad.append("%s inuse_space: %d, expected 0 (it frees every block)"
                           % (fn_name, got["%s inuse_space" % fn_name]))
        check(not bad, "estimates off: " + "; ".join(bad), details)


for _name in PLANS:
    make_design_test(_name)
    make_accuracy_test(_name)
