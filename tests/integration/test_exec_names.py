"""The names of followed processes that exec without having allocated:
memtrace's scan of /proc may read such a child's name between its fork
and its exec (the parent's), and nothing it allocated tells the new one.
The exec itself must (the BPF program records the exec of every followed
process, not only of those that allocated).

  exec_later   8 children, each seen by a scan under the parent's name
               (they wait 1.5 s in read(), without allocating), then
               exec'ing /bin/true (which allocates nothing): all "true"
  sh loop      a shell running /bin/true 40 times: every child "true"
               (before, 2 of 2,000 were once named "sh")"""

import re

import mtlib
from mtlib import check, check_eq, test

PROC_RE = re.compile(r"^\s*\S+\s+pid (\d+) \((.*)\)$")


def processes(text):
    """[(pid, name)] of the report's "Processes by" section."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("Processes by "):
            inside = True
        elif inside:
            m = PROC_RE.match(line)
            if not m:
                break
            out.append((int(m.group(1)), m.group(2)))
    return out


def names_of_children(argv, what):
    res = mtlib.run_memtrace(["-n", "200"] + argv)
    details = "command: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr), mtlib.tail(res.stdout, 40))
    check_eq(res.rc, 0, "%s: exit status" % what, details)
    rep = mtlib.parse_report(res.stdout)
    procs = processes(res.stdout)
    check(procs, "%s: no process list in the report" % what, details)
    children = [(pid, name) for pid, name in procs if pid != rep.target_pid]
    return rep, children, details


@test("exec_names.exec_later")
def _exec_later():
    rep, children, details = names_of_children(["--", mtlib.prog_path("exec_later"), "8"],
                                               "exec_later 8")
    check_eq(rep.started, 8, "processes started (the report's target line)", details)
    check_eq(len(children), 8, "children listed", details)
    wrong = [c for c in children if c[1] != "true"]
    check(not wrong, "children not named true: %s" % wrong, details)


@test("exec_names.sh_loop")
def _sh_loop():
    rep, children, details = names_of_children(
        ["--", "/bin/sh", "-c", "i=0; while [ $i -lt 40 ]; do /bin/true; i=$((i+1)); done"],
        "sh loop of /bin/true")
    check_eq(rep.started, 40, "processes started (the report's target line)", details)
    wrong = [c for c in children if c[1] != "true"]
    check(not wrong, "children not named true: %s" % wrong, details)
