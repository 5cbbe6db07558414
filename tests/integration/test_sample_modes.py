"""Sampling's plumbing, exactly: with -s 1 (a sample point every byte on
average) every block of 16 bytes or more is sampled with p = 1 - e^-16 or
more, and counts for s/p bytes and 1/p objects, which round to s and 1.
So `memtrace -s 1` must reproduce every test program's exact numbers:
the header totals (valgrind's), the per-function values, and one sample
per allocation.  Blocks of 0 bytes are the exception: a sample point
cannot fall in them, so sampling never sees them (as in tcmalloc and Go);
the expected numbers leave them out (the functions whose blocks are all of
0 bytes, like leaks.c's zero_leak).  That checks what the statistical test cannot see: that
the sampled path frees what it recorded, follows realloc, nests operator
new over malloc, and keeps threads apart, in each way of attaching the
probes: uprobe sessions (unsampled calls skip their return probe), one
uprobe_multi link per object, and one perf-event uprobe per function
(MEMTRACE_LINKS caps memtrace at the last two)."""

import os

import mtlib
from mtlib import check, check_eq, test
from programs import PROGRAMS
from test_profiles import details_of, expected_totals

# Link modes: (name, MEMTRACE_LINKS value or None for the default).
MODES = (("session", None), ("multi", "multi"), ("perf", "perf"))
# The header checks all four totals in every run; per function, bytes in
# use and objects allocated in the default mode, one metric in the others.
METRICS_BY_MODE = {
    "session": ("inuse_space", "alloc_objects"),
    "multi": ("alloc_objects",),
    "perf": ("inuse_space",),
}


def trace_sampled(p, metric, links):
    out = os.path.join(mtlib.TMPDIR, "%s.s1.%s.%s.txt" % (p.name, metric, links or "session"))
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ)
    env.pop("MEMTRACE_LINKS", None)
    if links:
        env["MEMTRACE_LINKS"] = links
    res = mtlib.run_memtrace(["-s", "1", "--unit", "B", "-n", "100", "--metric", metric,
                              "-o", out, "--", mtlib.prog_path(p.name)], env=env)
    details = "command: MEMTRACE_LINKS=%s %s\nexit status: %s\nstderr:\n%s" % (
        links or "", " ".join(res.argv), res.rc, mtlib.tail(res.stderr))
    check(res.rc == p.exit_status, "exit status %d, expected %d" % (res.rc, p.exit_status), details)
    check(os.path.exists(out), "no report written to %s" % out, details)
    with open(out, encoding="utf-8", errors="replace") as f:
        return res, mtlib.parse_report(f.read())


def make_test(p, mode, links, metric):
    @test("sample_modes.%s.%s.%s" % (mode, p.name, metric))
    def _t():
        res, rep = trace_sampled(p, metric, links)
        d = details_of(res, rep)
        check(rep.sampling is not None, "no 'sampling:' line in the header", d)
        check_eq(rep.sampling[0], 1, "sampling mean in the header", d)
        check_eq(rep.drops[0], 0, "drops", d)
        source, want = expected_totals(p)
        # Functions that allocate only 0-byte blocks: invisible to sampling.
        zero = [fn for fn in p.funcs.values() if fn.alloc_space == 0]
        z_alloc = sum(fn.alloc_objects for fn in zero)
        z_inuse = sum(fn.inuse_objects for fn in zero)
        want = {"allocated": (want["allocated"][0], want["allocated"][1] - z_alloc),
                "in use": (want["in use"][0], want["in use"][1] - z_inuse),
                "freed objects": want["freed objects"] - (z_alloc - z_inuse),
                "freed bytes": want["freed bytes"]}
        got = {"allocated": rep.allocated, "in use": rep.inuse,
               "freed objects": rep.freed[1], "freed bytes": rep.freed[0]}
        bad = ["%s: %r, %s %r" % (k, got[k], source, want[k]) for k in want if got[k] != want[k]]
        check(not bad, "-s 1 totals differ from %s: %s" % (source, "; ".join(bad)), d)
        check_eq(rep.sampling[1], rep.allocated[1],
                 "allocations sampled (every one, at -s 1)", d)
        bad = []
        for name, fn in p.funcs.items():
            row = rep.row(name)
            value = row.flat if row else 0
            expect = 0 if fn.alloc_space == 0 else getattr(fn, metric)
            if value != expect:
                bad.append("%s: flat %r, expected %d" % (name, value, expect))
        check(not bad, "-s 1 --metric %s: %s" % (metric, "; ".join(bad)), d)


for _p in PROGRAMS:
    for _mode, _links in MODES:
        for _metric in METRICS_BY_MODE[_mode]:
            make_test(_p, _mode, _links, _metric)


def kernel_has_sessions():
    """Whether this kernel has uprobe sessions: its BTF names the kfunc the
    session program calls."""
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            return b"\0bpf_session_is_return\0" in f.read()
    except OSError:
        return False


@test("sample_modes.sessions_used")
def _sessions_used():
    # Sampling is meant to cost one trap per unsampled call: where the kernel
    # has uprobe sessions they must load and attach, not fall back silently
    # to a return probe on every call (a verifier refusal on 6.18 did).
    res = mtlib.run_memtrace(["-v", "-s", "512K", "-o", os.devnull, "--", "/bin/true"])
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc,
                                                      mtlib.tail(res.stderr, 40))
    check_eq(res.rc, 0, "exit status", d)
    modes = [l for l in res.stderr.splitlines() if l.startswith("memtrace: probes attached as ")]
    check_eq(len(modes), 1, "'probes attached as' lines", d)
    want = "uprobe sessions" if kernel_has_sessions() else "uprobe_multi links"
    check(modes[0].endswith(want), "%s, expected %s (kernel %s)" % (modes[0], want, os.uname().release), d)
    res = mtlib.run_memtrace(["-v", "-o", os.devnull, "--", "/bin/true"])
    check(any(l == "memtrace: probes attached as uprobe_multi links" for l in res.stderr.splitlines()),
          "without -s, probes are not uprobe_multi links", "stderr:\n" + mtlib.tail(res.stderr, 40))
