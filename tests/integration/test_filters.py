"""--comm and report -p: a glob picks processes as pgrep's pattern does
(`lea*`), a plain name must be equal; a filter that keeps nothing says so on
stderr (one line) and in the report's "shown:" line; a filtered report's
header counts the processes it shows and their totals only."""

import os
import re
import tempfile

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, totals

SHOWN_RE = re.compile(r"^shown: (\d+) of (\d+) processes \((.*)\); events, untracked frees and drops count all (\d+)$",
                      re.M)


def two_runs_profile():
    """A pprof profile of `sh -c 'leaks; leaks'`: sh and two leaks."""
    d = tempfile.mkdtemp(prefix="mt-filters-", dir=mtlib.TMPDIR)
    pb = os.path.join(d, "heap.pb.gz")
    res = mtlib.run_memtrace(["--pprof", pb, "--", "sh", "-c", '"$0"; "$0"', mtlib.prog_path("leaks")])
    check_eq(res.rc, BY_NAME["leaks"].exit_status, "memtrace's exit status", mtlib.tail(res.stderr))
    return pb


def procs_section(text):
    """{pid: comm} of the "Processes by ..." section (several processes)."""
    out = {}
    for m in re.finditer(r"^\s+\S+  pid (\d+) \((.*)\)$", text, re.M):
        out[int(m.group(1))] = m.group(2)
    return out


@test("filters.comm_glob_and_none")
def _glob():
    t = totals(BY_NAME["leaks"])
    pb = two_runs_profile()
    for pattern, want in (("lea*", 2), ("l?aks", 2), ("[kl]eaks", 2), ("leaks", 2), ("lea", 0), ("python*", 0)):
        res = mtlib.run_memtrace(["report", pb, "--comm", pattern, "--unit", "B"])
        details = "--comm %s\nstderr:\n%s\nstdout:\n%s" % (pattern, res.stderr, mtlib.tail(res.stdout, 40))
        check_eq(res.rc, 0, "report --comm %s: exit status" % pattern, details)
        rep = mtlib.parse_report(res.stdout)
        check_eq(rep.inuse, (want * t["inuse_space"], want * t["inuse_objects"]),
                 "report --comm %s: in use (bytes, objects)" % pattern, details)
        if want:
            m = SHOWN_RE.search(res.stdout)
            check(m, "report --comm %s: no 'shown: N of M processes' line" % pattern, details)
            check_eq((int(m.group(1)), int(m.group(2)), m.group(3)), (want, 3, "named '%s'" % pattern),
                     "report --comm %s: shown line (kept, of, what)" % pattern, details)
            check_eq(sorted(procs_section(res.stdout).values()), ["leaks"] * want,
                     "report --comm %s: processes listed" % pattern, details)
            check_eq(mtlib.error_lines(res.stderr), [], "report --comm %s: stderr" % pattern, details)
            m = re.search(r"^peak in use: .*the largest of (\d+) processes'", res.stdout, re.M)
            check(m and int(m.group(1)) == want, "report --comm %s: peak line's process count" % pattern, details)
        else:
            err = mtlib.error_lines(res.stderr)
            check_eq(len(err), 1, "report --comm %s (matches nothing): lines on stderr" % pattern, details)
            check("no process named '%s'" % pattern in err[0],
                  "report --comm %s: stderr does not say it matched nothing: %r" % (pattern, err[0]), details)
            check(re.search(r"^shown: nothing: no process named '%s' among the 3 traced$" % re.escape(pattern),
                            res.stdout, re.M),
                  "report --comm %s: no 'shown: nothing' line in the report" % pattern, details)


@test("filters.report_pid_none")
def _pid():
    pb = two_runs_profile()
    res = mtlib.run_memtrace(["report", pb, "-p", "1"])
    details = "stderr:\n%s\nstdout:\n%s" % (res.stderr, mtlib.tail(res.stdout, 30))
    check_eq(res.rc, 0, "report -p 1: exit status", details)
    err = mtlib.error_lines(res.stderr)
    check(len(err) == 1 and "no process pid 1 among the 3 traced" in err[0],
          "report -p 1 (not in the profile): one line on stderr saying so", details)


@test("filters.live_comm_glob")
def _live():
    """While tracing: --comm 'lea*' of `sh -c 'leaks; leaks'` shows the two
    leaks, exactly, and says it left sh out."""
    t = totals(BY_NAME["leaks"])
    res = mtlib.run_memtrace(["--comm", "lea*", "--unit", "B", "--", "sh", "-c", '"$0"; "$0"',
                              mtlib.prog_path("leaks")])
    details = "stderr:\n%s\nstdout:\n%s" % (res.stderr, mtlib.tail(res.stdout, 40))
    rep = mtlib.parse_report(res.stdout)
    check_eq(rep.inuse, (2 * t["inuse_space"], 2 * t["inuse_objects"]), "--comm 'lea*': in use", details)
    m = SHOWN_RE.search(res.stdout)
    check(m and (int(m.group(1)), int(m.group(2))) == (2, 3), "--comm 'lea*': shown line", details)
