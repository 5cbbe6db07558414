"""Following exec: a process that execs takes its new name, and the blocks
its old image held (gone with its address space) are released.

  system-wide: waiter started by bash (bash forks, its child allocates a
    little, then execs waiter) is filed under "waiter" (--comm waiter
    keeps it, in the live run and in the saved profile) with waiter's own
    blocks in use, no more;
  -- CMD where CMD execs: `bash -c 'exec leaks'` is reported as leaks,
    with exactly leaks' blocks in use (bash's are released)."""

import os
import re
import signal
import subprocess
import tempfile
import time

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, WAITER, totals


@test("exec.system_shell_child")
def _system_shell_child():
    t = totals(WAITER)
    d = tempfile.mkdtemp(prefix="mt-exec-")
    folded, pb = os.path.join(d, "folded.txt"), os.path.join(d, "heap.pb.gz")
    # --comm waiter: only processes named waiter are symbolised and written.
    mt = mtlib.Bg([mtlib.MEMTRACE, "--comm", "waiter", "--folded=" + folded, "--pprof", pb],
                  stdin=subprocess.DEVNULL)
    sh = None
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "system-wide memtrace did not start tracing", mt.details())
        # bash runs waiter as a child (fork, then exec), as from a shell prompt.
        sh = mtlib.Bg(["bash", "-c", '"$0"; exit $?', mtlib.prog_path("waiter")])
        ready = sh.out.wait_for(lambda l: l.startswith("ready "), 30)
        check(ready is not None, "waiter under bash did not say ready", sh.details())
        pid = int(ready.split()[1])
        check(pid != sh.pid, "bash exec'd waiter instead of forking it", sh.details())
        sh.send("\n")
        check(sh.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "waiter did not say done", sh.details())
        sh.send("\n")
        check_eq(sh.wait(30), 0, "bash's exit status", sh.details())
        time.sleep(1.5)  # a scan notices the exit
        mt.signal(signal.SIGINT)
        check_eq(mt.wait(120), 0, "memtrace exit status", mt.details())
    finally:
        if sh:
            mtlib.kill_quietly(sh)
        mtlib.kill_quietly(mt)
    with open(folded) as f:
        folded_text = f.read()
    # (System-wide, a stack can be cut short while its file's unwind table
    # is made: the leaf frame is there in any case.)
    check(re.search(r"(^|;)waiter_leak \d+$", folded_text, re.M),
          "no folded stack ends in waiter_leak (--comm waiter)",
          mtlib.tail(folded_text, 20) + "\n" + mt.details())
    res = mtlib.run_memtrace(["report", pb, "-p", str(pid), "--comm", "waiter", "--unit", "B"])
    rep = mtlib.parse_report(res.stdout)
    details = mtlib.tail(res.stdout + res.stderr, 30)
    # Started after memtrace: its PRE blocks are traced too, and freed.
    check_eq(rep.inuse, (t["inuse_space"], t["inuse_objects"]),
             "report -p %d --comm waiter: in use (bytes, objects)" % pid, details)
    check(rep.row("waiter_leak") is not None and rep.row("waiter_leak").flat == t["inuse_space"],
          "waiter_leak's flat in use", details)


@test("exec.cmd_execs")
def _cmd_execs():
    leaks = BY_NAME["leaks"]
    t = totals(leaks)
    out = os.path.join(mtlib.TMPDIR, "exec.cmd.txt")
    res = mtlib.run_memtrace(["--unit", "B", "-n", "100", "-o", out, "--",
                              "bash", "-c", 'exec "$0"', mtlib.prog_path("leaks")])
    details = "exit status %s\nstderr:\n%s" % (res.rc, mtlib.tail(res.stderr))
    check_eq(res.rc, leaks.exit_status, "memtrace's exit status (leaks')", details)
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    details += "\n" + mtlib.tail(rep.text, 40)
    check_eq(rep.target_comm, "leaks", "target name", details)
    check_eq(rep.inuse, (t["inuse_space"], t["inuse_objects"]), "in use (bytes, objects)", details)
    for name, fn in leaks.funcs.items():
        row = rep.row(name)
        check_eq(row.flat if row else 0, fn.inuse_space, "flat inuse_space of %s" % name, details)
