"""memtrace -- CMD follows the processes CMD starts (fork, vfork, clone,
exec), and theirs, by default; each is reported apart, with exact numbers:

  a shell wrapper   sh -c 'leaks; ...': sh and leaks (leaks as in programs.py)
  a forking server  family fork 3: the server and its three workers
  vfork + exec      family spawn: posix_spawn of `family leaf`
  a tree            family tree: three processes, three deep (and with
                    --follow, which asks for the default)
  an exec loop      sh runs `family leaf` EXEC_RUNS times: each run exact,
                    and each exec of a program seen before holds it less
                    than EXEC_HOLD_MS (its libc's links stay, its files and
                    plans are known: under a millisecond; at least 40 ms
                    when the links were detached and attached again)
  another allocator sh (glibc) runs alloc_tcmalloc twice: libc's probes
                    change (no malloc family there now), tcmalloc's come;
                    each run's own allocations exact (test_allocators.py)
  --no-follow       family tree: the first process alone
  an outsider       a process outside the family, started before, is not
                    touched: no breakpoint in its malloc or free (while a
                    followed process has them), its allocations not counted

Every process of tests/progs/family.c leaks one block of a size that
says its role and allocates and frees one of CHURN bytes (read from the
source's #defines); each prints its role and pid."""

import collections
import os
import re
import subprocess

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, WAITER, WAITER_PRE, WAITER_PRE_SIZE, totals
from test_allocators import TCMALLOC_FUNCS, prog_totals
from test_system import per_pid

ResultRaw = collections.namedtuple("ResultRaw", mtlib.Result._fields + ("raw",))
PROC_LINE = re.compile(r"^\s*\S+\s+pid (\d+) \((.*)\)$")


def family_defines():
    with open(os.path.join(mtlib.PROGS_SRC, "family.c")) as f:
        return {m.group(1): int(m.group(2))
                for m in re.finditer(r"^#define (\w+) (\d+)", f.read(), re.M)}


def expected(leak, churn):
    """[alloc bytes, alloc objects, freed bytes, freed objects] of one process."""
    return [leak + churn, 2, churn, 1]


def run_followed(name, cmd, extra=()):
    """memtrace [extra] --raw=R -o T -- CMD: (result, report, {pid: raw
    totals}, {pid: comm} of the report's process table, CMD's stdout)."""
    raw = os.path.join(mtlib.TMPDIR, "follow.%s.raw" % name)
    out = os.path.join(mtlib.TMPDIR, "follow.%s.txt" % name)
    res = mtlib.run_memtrace(["--unit", "B", "-n", "100", "--raw=" + raw, "-o", out]
                             + list(extra) + ["--"] + cmd)
    details = "command: %s\nexit status %s\nstderr:\n%s" % (" ".join(res.argv), res.rc,
                                                             mtlib.tail(res.stderr))
    check(os.path.exists(out), "no report", details)
    with open(out) as f:
        text = f.read()
    rep = mtlib.parse_report(text)
    with open(raw) as f:
        pids = per_pid(f.read())
    comms = {}
    for line in text.splitlines():
        m = PROC_LINE.match(line)
        if m:
            comms[int(m.group(1))] = m.group(2)
    return ResultRaw(*res, raw=raw), rep, pids, comms, details + "\n" + mtlib.tail(text, 60)


RAW_STACK = re.compile(r"^stack \d+ id 0x[0-9a-f]+ pid (\d+): allocated (\d+) bytes in (\d+) objects, "
                       r"freed (\d+) bytes in (\d+) objects$")
RAW_IP0 = re.compile(r"^\s+ip #0\s+0x[0-9a-f]+\s+(\S+?)\+0x[0-9a-f]+$")


def raw_stacks(text):
    """[(pid, module of the leaf frame or None, [alloc bytes, alloc objects,
    freed bytes, freed objects])] of a --raw profile."""
    out = []
    for line in text.splitlines():
        m = RAW_STACK.match(line)
        if m:
            out.append([int(m.group(1)), None, [int(m.group(k)) for k in range(2, 6)]])
            continue
        m = RAW_IP0.match(line)
        if m and out and out[-1][1] is None:
            out[-1][1] = m.group(1)
    return out


def raw_text(res):
    with open(res.raw) as f:
        return f.read()


def roles(stdout):
    """{role: pid} from family's "ROLE PID" lines."""
    return {l.split()[0]: int(l.split()[1]) for l in stdout.splitlines() if len(l.split()) == 2}


def check_family(name, args, want_roles, leak_of, extra=()):
    d = family_defines()
    res, rep, pids, comms, details = run_followed(name, [mtlib.prog_path("family")] + args,
                                                  extra)
    check_eq(res.rc, 0, "memtrace's exit status (family's)", details)
    r = roles(res.stdout)
    check_eq(sorted(r), sorted(want_roles), "roles printed by family", details + "\n" + res.stdout)
    check_eq(rep.target_pid, r[want_roles[0]], "target pid", details)
    check_eq(rep.started, len(want_roles) - 1, "processes it started (target line)", details)
    check_eq(sorted(pids), sorted(r.values()), "pids in the raw profile", details)
    for role, pid in r.items():
        check_eq(pids[pid], expected(leak_of(role, d), d["CHURN"]),
                 "%s (pid %d): allocated/freed bytes and objects" % (role, pid), details)
        check_eq(comms.get(pid), "family", "name of %s (pid %d) in the process table" % (role, pid),
                 details)
    total_leak = sum(leak_of(role, d) for role in r)
    check_eq(rep.inuse, (total_leak, len(r)), "in use (bytes, objects), all processes", details)
    check_eq(rep.untracked, 0, "untracked frees", details)
    row = rep.row("live")
    check(row is not None and row.flat == total_leak, "flat in use of live(): %r" % (row,), details)


@test("follow.shell_wrapper")
def _shell_wrapper():
    leaks = BY_NAME["leaks"]
    t = totals(leaks)
    res, rep, pids, comms, details = run_followed(
        "shell", ["sh", "-c", '"$0"; exit $?', mtlib.prog_path("leaks")])
    check_eq(res.rc, leaks.exit_status, "memtrace's exit status (leaks')", details)
    check_eq(rep.target_comm, "sh", "target name", details)
    check_eq(rep.started, 1, "processes it started (target line)", details)
    lpids = [p for p, c in comms.items() if c == "leaks"]
    check_eq(len(lpids), 1, "processes named leaks in the process table", details)
    want = [t["alloc_space"], t["alloc_objects"],
            t["alloc_space"] - t["inuse_space"], t["alloc_objects"] - t["inuse_objects"]]
    # The shell's child may allocate before it execs leaks: that stays with
    # its pid, all of it freed at the exec.  The rest is leaks' own.
    shell = os.path.basename(os.path.realpath("/bin/sh"))
    own, pre = [0, 0, 0, 0], [0, 0, 0, 0]
    for pid, module, v in raw_stacks(raw_text(res)):
        if pid == lpids[0]:
            acc = pre if module == shell else own
            for k in range(4):
                acc[k] += v[k]
    check_eq(own, want, "leaks (pid %d), its own stacks: allocated/freed bytes and objects" % lpids[0],
             details)
    check_eq(pre[:2], pre[2:], "leaks (pid %d), the shell's stacks before the exec: all freed" % lpids[0],
             details)
    check_eq(comms.get(rep.target_pid), "sh", "name of the shell in the process table", details)


@test("follow.forking_server")
def _forking_server():
    check_family("fork", ["fork", "3"], ["server0", "worker0", "worker1", "worker2"],
                 lambda role, d: d["LEAK_SERVER"] if role == "server0"
                 else d["LEAK_WORKER"] + int(role[len("worker"):]))


@test("follow.vfork_exec")
def _vfork_exec():
    check_family("spawn", ["spawn"], ["spawner0", "leaf0"],
                 lambda role, d: d["LEAK_SPAWNER"] if role == "spawner0" else d["LEAK_LEAF"])


def tree_leak(role, d):
    return d["LEAK_TREE"] + d["TREE_STEP"] * int(role[len("tree"):])


@test("follow.tree_three_deep")
def _tree():
    check_family("tree", ["tree"], ["tree0", "tree1", "tree2"], tree_leak)


EXEC_RUNS = 5
EXEC_HOLD_MS = 20
EXEC_HELD = re.compile(r"^memtrace: exec of (\S+) by pid (\d+) held it ([\d.]+) ms")


def check_leaf_runs(res, pids_leaf, details):
    """Each pid in PIDS_LEAF is one run of `family leaf`: its own stacks
    (leaf frame in family) exact, any other (its parent's image before the
    exec) all freed."""
    d = family_defines()
    stacks = raw_stacks(raw_text(res))
    for pid in pids_leaf:
        own, pre = [0, 0, 0, 0], [0, 0, 0, 0]
        for spid, module, v in stacks:
            if spid == pid:
                acc = own if module == "family" else pre
                for k in range(4):
                    acc[k] += v[k]
        check_eq(own, expected(d["LEAK_LEAF"], d["CHURN"]),
                 "leaf (pid %d), its own stacks: allocated/freed bytes and objects" % pid, details)
        check_eq(pre[:2], pre[2:], "leaf (pid %d), stacks before its exec: all freed" % pid,
                 details)


@test("follow.exec_loop")
def _exec_loop():
    family = mtlib.prog_path("family")
    res, rep, pids, comms, details = run_followed(
        "exec_loop", ["sh", "-c", 'for i in $(seq %d); do "$0" leaf || exit 1; done' % EXEC_RUNS,
                      family], ["-v"])
    details += "\n" + "\n".join(l for l in res.stderr.splitlines() if EXEC_HELD.match(l))
    check_eq(res.rc, 0, "memtrace's exit status (sh's)", details)
    leaf = [int(l.split()[1]) for l in res.stdout.splitlines() if l.startswith("leaf0 ")]
    check_eq(len(leaf), EXEC_RUNS, "runs of family leaf", details + "\n" + res.stdout)
    check_eq(len(set(leaf)), EXEC_RUNS, "distinct pids of the runs", details + "\n" + res.stdout)
    for pid in leaf:
        check_eq(comms.get(pid), "family", "name of run pid %d in the process table" % pid, details)
    check_leaf_runs(res, leaf, details)
    d = family_defines()
    check_eq(rep.inuse[0] >= EXEC_RUNS * d["LEAK_LEAF"], True,
             "in use covers the runs' leaks (%d bytes)" % (EXEC_RUNS * d["LEAK_LEAF"]), details)
    held = {}
    for line in res.stderr.splitlines():
        m = EXEC_HELD.match(line)
        if m and os.path.realpath(m.group(1)) == os.path.realpath(family):
            held[int(m.group(2))] = float(m.group(3))
    check_eq(sorted(held), sorted(leaf), "pids whose exec of family -v timed", details)
    again = sorted(held[pid] for pid in leaf[1:])
    median = again[len(again) // 2]
    check(median < EXEC_HOLD_MS,
          "median hold of the execs after the first: %.1f ms, not under %d ms" % (median, EXEC_HOLD_MS),
          details)


@test("follow.exec_other_allocator")
def _exec_other_allocator():
    t = prog_totals(TCMALLOC_FUNCS)
    want = [t["alloc_space"], t["alloc_objects"],
            t["alloc_space"] - t["inuse_space"], t["alloc_objects"] - t["inuse_objects"]]
    prog = mtlib.prog_path("alloc_tcmalloc")
    res, rep, pids, comms, details = run_followed(
        "exec_other_allocator", ["sh", "-c", '"$0" && "$0"', prog])
    check_eq(res.rc, 0, "memtrace's exit status (sh's)", details)
    runs = sorted(p for p, c in comms.items() if c == "alloc_tcmalloc")
    check_eq(len(runs), 2, "processes named alloc_tcmalloc in the process table", details)
    stacks = raw_stacks(raw_text(res))
    for pid in runs:
        own = [0, 0, 0, 0]
        for spid, module, v in stacks:
            if spid == pid and module == "alloc_tcmalloc":
                for k in range(4):
                    own[k] += v[k]
        check_eq(own, want, "alloc_tcmalloc (pid %d), its own stacks: allocated/freed bytes and "
                 "objects" % pid, details)


@test("follow.follow_option")
def _follow_option():
    """--follow, the default, is still accepted."""
    check_family("tree_follow", ["tree"], ["tree0", "tree1", "tree2"], tree_leak, ["--follow"])


@test("follow.no_follow")
def _no_follow():
    d = family_defines()
    res, rep, pids, comms, details = run_followed("no_follow", [mtlib.prog_path("family"), "tree"],
                                                  ["--no-follow"])
    check_eq(res.rc, 0, "memtrace's exit status (family's)", details)
    r = roles(res.stdout)
    check_eq(sorted(r), ["tree0", "tree1", "tree2"], "roles printed by family", details)
    check_eq(rep.started, 0, "processes it started (target line)", details)
    check_eq(sorted(pids), [r["tree0"]], "pids in the raw profile", details)
    check_eq(pids[r["tree0"]], expected(d["LEAK_TREE"], d["CHURN"]), "tree0: allocated/freed",
             details)


@test("follow.no_follow_needs_cmd", needs=("memtrace",))
def _no_follow_needs_cmd():
    for args in (["--no-follow", "-p", "1"], ["--no-follow", "-d", "1"], ["--follow", "-d", "1"]):
        res = mtlib.run_memtrace(args)
        mtlib.check_one_line_error(res, " ".join(args), mention=["--follow"])


def libc_path(pid):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and os.path.basename(fields[5]).startswith("libc.so"):
                return fields[5]
    raise mtlib.Fail("pid %d maps no libc" % pid)


def breakpoints(pid, funcs=("malloc", "free")):
    """{function: [offsets of int3 (0xcc) in process PID's code of libc's
    FUNCTION where libc's file has another byte]}: the kernel's uprobe
    breakpoints (not always at a function's first byte: memtrace may put
    a probe further in)."""
    path = libc_path(pid)
    res = mtlib.run(["nm", "-D", "-S", "--defined-only", path])
    check_eq(res.rc, 0, "nm's exit status on " + path, res.stderr)
    syms = {}
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) == 4:
            syms.setdefault(f[3].split("@")[0], (int(f[0], 16), int(f[1], 16)))
    maps = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == path:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                maps.append((start, end, int(fields[2], 16)))
    base = min(start - off for start, end, off in maps if off == 0)
    out = {}
    with open("/proc/%d/mem" % pid, "rb") as mem, open(path, "rb") as lib:
        for fn in funcs:
            value, size = syms[fn]
            addr = base + value
            start, end, off = next(m for m in maps if m[0] <= addr < m[1])
            mem.seek(addr)
            got = mem.read(size)
            lib.seek(addr - start + off)
            want = lib.read(size)
            check_eq(len(got), size, "bytes of %s read from pid %d" % (fn, pid))
            out[fn] = [i for i in range(size) if got[i] == 0xCC and want[i] != 0xCC]
    return out


@test("follow.outsider_untouched")
def _outsider_untouched():
    """A waiter started before memtrace, outside the family, allocates while
    memtrace -- sh -c waiter follows sh's child (another waiter): the
    outsider's malloc and free have no breakpoint, the follower's have, and
    the profile has the follower's allocations, exact, not the outsider's."""
    raw = os.path.join(mtlib.TMPDIR, "follow.outsider.raw")
    outsider = mtlib.start_waiter()
    mt = None
    try:
        mt = mtlib.Bg([mtlib.MEMTRACE, "--unit", "B", "--raw=" + raw, "-o", os.devnull, "--",
                       "sh", "-c", '"$0"; exit $?', mtlib.prog_path("waiter")])
        ready = mt.out.wait_for(lambda l: l.startswith("ready "), 60)
        check(ready is not None, "the followed waiter did not say ready", mt.details())
        child = int(ready.split()[1])
        check(child != mt.pid, "sh exec'd waiter instead of forking it", mt.details())
        # The outsider allocates and frees while memtrace follows sh's family.
        outsider.send("\n")
        check(outsider.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "the outsider did not say done", outsider.details())
        inside, outside = breakpoints(child), breakpoints(outsider.pid)
        for fn in ("malloc", "free"):
            check(inside[fn], "no breakpoint in %s of the followed waiter (pid %d): %r"
                  % (fn, child, inside), mt.details())
            check_eq(outside[fn], [], "breakpoints in %s of the outsider (pid %d)"
                     % (fn, outsider.pid), mt.details())
        mt.send("\n")
        check(mt.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "the followed waiter did not say done", mt.details())
        mt.send("\n")
        check_eq(mt.wait(60), 0, "memtrace's exit status (sh's)", mt.details())
        outsider.send("\n")
        check_eq(outsider.wait(30), 0, "the outsider's exit status", outsider.details())
    finally:
        mtlib.kill_quietly(outsider)
        if mt:
            mtlib.kill_quietly(mt)
    with open(raw) as f:
        text = f.read()
    details = mt.details() + "\n" + mtlib.tail(text, 40)
    pids = per_pid(text)
    check(outsider.pid not in pids, "the outsider (pid %d) is in the profile" % outsider.pid,
          details)
    check(child in pids, "the followed waiter (pid %d) is not in the profile" % child, details)
    # The followed waiter, traced from its exec: its PRE blocks too (allocated
    # and freed), then what programs.py has; the shell's stacks before the
    # exec aside (all freed at the exec: test shell_wrapper).
    t = totals(WAITER)
    pre = WAITER_PRE * WAITER_PRE_SIZE
    want = [t["alloc_space"] + pre, t["alloc_objects"] + WAITER_PRE,
            t["alloc_space"] - t["inuse_space"] + pre,
            t["alloc_objects"] - t["inuse_objects"] + WAITER_PRE]
    shell = os.path.basename(os.path.realpath("/bin/sh"))
    own = [0, 0, 0, 0]
    for pid, module, v in raw_stacks(text):
        if pid == child and module != shell:
            own = [a + b for a, b in zip(own, v)]
    check_eq(own, want, "followed waiter (pid %d): allocated/freed bytes and objects" % child,
             details)


@test("follow.peak_names")
def _peak_names():
    """The timeline's "Peak in use by process" names every process, also
    those gone before the timeline's first sample could read their name
    (a child that runs a few milliseconds)."""
    leaks, served = mtlib.prog_path("leaks"), mtlib.prog_path("served")
    res = mtlib.run_memtrace(["--", "sh", "-c", "%s >/dev/null; %s </dev/null >/dev/null; %s >/dev/null"
                              % (leaks, served, leaks)])
    check_eq(res.rc, 0, "memtrace's exit status", mtlib.tail(res.stderr))
    m = re.search(r"^Peak in use by process.*\n((?:  .*\n)+)", res.stdout, re.M)
    check(m, "no 'Peak in use by process' section", res.stdout[:3000])
    names = sorted(re.search(r"pid \d+ \((.*?)\)", l).group(1) for l in m.group(1).splitlines())
    check_eq(names, ["leaks", "leaks", "served", "sh"], "the processes' names", m.group(0))
