"""--leaks of several processes: `-- sh -c 'leaks; leaks'` leaks the same
stacks twice, once per process.  Every entry names its process (pid and
name), each process's not-freed total is listed, and those totals add up to
what each run of leaks is known to leak (programs.py)."""

import re

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, totals

HEAD_RE = re.compile(r"^#\d+ (\d+) bytes in (\d+) blocks \(\S+\) not freed by pid (\d+) \((.*?)\)[,\n]?")
PROC_RE = re.compile(r"^\s*(\d+)B in (\d+) blocks from (\d+) call sites  pid (\d+) \((.*)\)$")


@test("leaks_procs.shell_running_twice")
def _twice():
    leaks = BY_NAME["leaks"]
    t = totals(leaks)
    prog = mtlib.prog_path("leaks")
    res = mtlib.run_memtrace(["--leaks", "--min-age", "0", "--unit", "B", "-n", "1000",
                              "--", "sh", "-c", '"$0"; "$0"', prog])
    details = "stderr:\n%s\nstdout:\n%s" % (mtlib.tail(res.stderr), mtlib.tail(res.stdout, 80))
    check_eq(res.rc, leaks.exit_status, "memtrace's exit status (leaks')", details)
    lines = res.stdout.splitlines()
    heads = [HEAD_RE.match(l) for l in lines if l.startswith("#")]
    check(heads and all(heads), "an entry's heading does not name its process: %r"
          % [l for l in lines if l.startswith("#")][:3], details)
    by_pid = {}
    for m in heads:
        v = by_pid.setdefault(int(m.group(3)), [m.group(4), 0, 0])
        v[1] += int(m.group(1))
        v[2] += int(m.group(2))
    mine = {pid: v for pid, v in by_pid.items() if v[0] == "leaks"}
    check_eq(len(mine), 2, "processes named leaks among the entries", details)
    for pid, v in mine.items():
        check_eq((v[1], v[2]), (t["inuse_space"], t["inuse_objects"]),
                 "pid %d (leaks): not freed (bytes, blocks) over its entries" % pid, details)
    # The per-process section, promised by the header's "(below)".
    check("Not freed by process:" in lines, "no 'Not freed by process:' section", details)
    i = lines.index("Not freed by process:") + 1
    procs = {}
    while i < len(lines) and lines[i].strip():
        m = PROC_RE.match(lines[i])
        check(m, "line %r of the per-process section" % lines[i], details)
        procs[int(m.group(4))] = (m.group(5), int(m.group(1)), int(m.group(2)))
        i += 1
    for pid, v in by_pid.items():
        check_eq(procs.get(pid), (v[0], v[1], v[2]),
                 "pid %d: (name, bytes, blocks) in the per-process section vs its entries" % pid, details)


@test("leaks_procs.one_process_unnamed")
def _one():
    """One process: the headings stay as they were (no pid), no section."""
    res = mtlib.run_memtrace(["--leaks", "--min-age", "0", "--", mtlib.prog_path("leaks")])
    details = mtlib.tail(res.stdout, 40)
    heads = [l for l in res.stdout.splitlines() if l.startswith("#")]
    check(heads, "no leak entries", details)
    check(not any(" by pid " in l for l in heads), "one process, yet a heading names it", details)
    check("Not freed by process:" not in res.stdout, "one process, yet a per-process section", details)
