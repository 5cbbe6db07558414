"""The command line: help and version, bad option values, error paths
(no such pid, no privileges, no libc), -- CMD's exit status, -o, -n,
the default unit."""

import ctypes
import os
import re
import shutil
import subprocess
import time

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, WAITER, totals

TRUE = "/bin/true"


@test("cli.version", needs=("memtrace",))
def _version():
    for flag in ("-V", "--version"):
        res = mtlib.run_memtrace([flag])
        check_eq(res.rc, 0, "memtrace %s exit status" % flag, res.stderr)
        check(mtlib.VERSION in res.stdout, "memtrace %s does not print %s: %r" % (flag, mtlib.VERSION, res.stdout))


@test("cli.help", needs=("memtrace",))
def _help():
    for flag in ("-h", "--help"):
        res = mtlib.run_memtrace([flag])
        check_eq(res.rc, 0, "memtrace %s exit status" % flag, res.stderr)
        out = res.stdout + res.stderr
        for opt in ("--pid", "--duration", "--output", "--top", "--metric", "--cum", "--unit",
                    "--max-allocs", "--max-stacks"):
            check(opt in out, "memtrace %s does not mention %s" % (flag, opt), mtlib.tail(out, 30))


BAD_VALUES = {
    "d_abc": ["-d", "abc", "--", TRUE],
    "d_negative": ["-d", "-5", "--", TRUE],
    "metric_foo": ["--metric", "foo", "--", TRUE],
    "n_negative": ["-n", "-3", "--", TRUE],
    "n_abc": ["--top", "abc", "--", TRUE],
    "unit_foo": ["--unit", "XB", "--", TRUE],
    "pid_abc": ["-p", "abc"],
    "pid_negative": ["-p", "-4"],
    "max_allocs_abc": ["--max-allocs", "abc", "--", TRUE],
    "max_stacks_negative": ["--max-stacks", "-1", "--", TRUE],
    "bench_part_foo": ["--bench-part", "foo", "--", TRUE],
}


def make_bad_value_test(name, args):
    @test("cli.bad_value." + name, needs=("memtrace",))
    def _t():
        res = mtlib.run_memtrace(args, timeout=30)
        mtlib.check_one_line_error(res, "memtrace " + " ".join(args))


for _name, _args in BAD_VALUES.items():
    make_bad_value_test(_name, _args)


@test("cli.no_target", needs=("memtrace",))
def _no_target():
    # Without -p or a command memtrace traces every process (test_system.py);
    # "report" without a file is the one-line error.
    res = mtlib.run_memtrace(["report"], timeout=30)
    check(res.rc > 0, "memtrace report without a file: exit status %d, expected non-zero" % res.rc, res.stderr)
    check(res.stderr.startswith("memtrace: "),
          "memtrace report without a file: stderr does not begin with 'memtrace: '", mtlib.tail(res.stderr))


@test("cli.unknown_option", needs=("memtrace",))
def _unknown():
    res = mtlib.run_memtrace(["--bogus-option", "--", TRUE], timeout=30)
    check(res.rc > 0, "memtrace --bogus-option: exit status %d, expected non-zero" % res.rc, res.stderr)
    check("bogus-option" in res.stderr, "memtrace --bogus-option: stderr does not name the option",
          mtlib.tail(res.stderr))


@test("cli.nonexistent_pid", needs=("memtrace",))
def _nopid():
    pid = mtlib.free_pid()
    res = mtlib.run_memtrace(["-p", str(pid), "-d", "1"], timeout=60)
    mtlib.check_one_line_error(res, "memtrace -p %d (no such process)" % pid)


CAPS = ("CAP_BPF", "CAP_PERFMON", "CAP_SYS_ADMIN")
SETPRIV = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]


def cap_eff():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def unprivileged(args):
    """Run memtrace with no privilege: as root through setpriv (uid 65534,
    no capabilities); as another user without capabilities, directly."""
    if os.geteuid() != 0:
        if cap_eff():
            raise mtlib.Skip("not root but with capabilities: cannot drop them without setpriv as root")
        return mtlib.run([mtlib.MEMTRACE] + args, timeout=60)
    if not mtlib.which("setpriv"):
        raise mtlib.Skip("setpriv is not installed (util-linux)")
    # A copy that uid 65534 can run wherever the work tree is (e.g. /root).
    exe = os.path.join(public_dir(), "memtrace")
    if not os.path.exists(exe):
        shutil.copy(mtlib.MEMTRACE, exe)
        os.chmod(exe, 0o755)
    res = mtlib.run(SETPRIV + [exe] + args, timeout=60)
    check(not res.stderr.startswith("setpriv:"), "setpriv failed", res.stderr)
    return res


def public_dir():
    d = os.path.join(mtlib.TMPDIR, "public")
    os.makedirs(d, exist_ok=True)
    os.chmod(mtlib.TMPDIR, 0o755)
    os.chmod(d, 0o755)
    return d


@test("cli.no_privilege.cmd", needs=("memtrace",))
def _noprivs_cmd():
    res = unprivileged(["-d", "5", "--", TRUE])
    mtlib.check_one_line_error(res, "memtrace as uid 65534 without capabilities", mention=CAPS)


@test("cli.no_privilege.pid", needs=("memtrace",))
def _noprivs_pid():
    w = mtlib.start_waiter()
    try:
        res = unprivileged(["-d", "5", "-p", str(w.pid)])
        mtlib.check_one_line_error(res, "memtrace -p as uid 65534 without capabilities", mention=CAPS)
        check(w.alive(), "the target died")
    finally:
        mtlib.kill_quietly(w)


@test("cli.no_libc")
def _nolibc():
    target = subprocess.Popen([mtlib.prog_path("nolibc"), "60"], stdin=subprocess.DEVNULL)
    try:
        res = mtlib.run_memtrace(["-d", "5", "-p", str(target.pid)], timeout=60)
        mtlib.check_one_line_error(res, "memtrace -p on a static program without libc")
        check(target.poll() is None, "the static target died (status %s)" % target.returncode)
    finally:
        if target.poll() is None:
            target.kill()
        target.wait(10)


@test("cli.exit_status")
def _exit_status():
    res, rep = mtlib.trace("exit7", "inuse_space")
    check_eq(res.rc, 7, "exit status of memtrace -- exit7", res.stderr)
    check_eq(rep.inuse, (123, 1), "exit7: in use (bytes, objects)", rep.text)


@test("cli.exit_status.true_false")
def _exit_status_true():
    out = os.path.join(mtlib.TMPDIR, "true.txt")
    res = mtlib.run_memtrace(["-o", out, "--", TRUE])
    check_eq(res.rc, 0, "exit status of memtrace -- /bin/true", res.stderr)
    res = mtlib.run_memtrace(["-o", out, "--", "/bin/false"])
    check_eq(res.rc, 1, "exit status of memtrace -- /bin/false", res.stderr)
    check(os.path.exists(out), "no report written for /bin/false")


@test("cli.verbose_startup")
def _verbose_startup():
    """-v says how long the start took, phase by phase.  The phases on
    memtrace's main thread follow one another within the total, and the
    unwind tables (made on a thread of their own, beside the rest) are done
    before the command runs: none can exceed the total, and with tables
    (--unwind auto) there was something to make, without (fp) nothing."""
    for unwind, tables in (("auto", True), ("fp", False)):
        res = mtlib.run_memtrace(["-v", "--unwind", unwind, "-o", os.devnull, "--", TRUE])
        d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc,
                                                          mtlib.tail(res.stderr, 10))
        check_eq(res.rc, 0, "exit status", d)
        m = re.search(r"^memtrace: started in ([\d.]+) ms \(spawn ([\d.]+), open ([\d.]+), "
                      r"verify ([\d.]+), attach ([\d.]+), unwind tables ([\d.]+), in ms; "
                      r"the tables are made beside the rest\)$", res.stderr, re.M)
        check(m is not None, "no 'started in' line", d)
        total, spawn, opened, verify, attach, made = (float(x) for x in m.groups())
        check(all(x > 0 for x in (spawn, opened, verify, attach)), "a phase of 0 ms", d)
        # Rounded to 0.1 ms each: allow that much per phase.
        check(spawn + opened + verify + attach <= total + 0.4,
              "the main thread's phases add up to more than the total", d)
        check(made <= total + 0.1, "the tables took longer than the whole start", d)
        check((made > 0) == tables, "unwind tables %.1f ms with --unwind %s" % (made, unwind), d)
        lines = res.stderr.splitlines()
        check(lines.index(m.group(0)) < next(i for i, l in enumerate(lines)
                                             if l.startswith("memtrace: tracing pid")),
              "the 'started in' line after the 'tracing' line", d)


@test("cli.verbose_bpf_cost")
def _verbose_bpf_cost():
    """-v says, at the end, how often each BPF program ran and for how long
    (the kernel's run-time statistics, on for the run): every allocator call
    of the report entered the entry program once, each allocation ran the
    return program; without -v, nothing of it."""
    res = mtlib.run_memtrace(["-v", "--no-follow", "--", mtlib.prog_path("leaks")])
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc,
                                                      mtlib.tail(res.stderr, 12))
    check_eq(res.rc, 0, "exit status", d)
    rep = mtlib.parse_report(res.stdout)
    runs = {m.group(1): (int(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^memtrace: BPF (\w+): (\d+) runs, ([\d.]+) ns each, [\d.]+ ms in all$",
                                 res.stderr, re.M)}
    check("uprobe_entry" in runs and "uprobe_return" in runs, "no BPF cost line for the probes", d)
    events = int(re.search(r"^events: (\d+) allocator calls", res.stdout, re.M).group(1))
    # leaks.c makes no call from inside another (no nesting): one entry
    # each, and a return for each allocating call.
    check_eq(runs["uprobe_entry"][0], events, "entry program runs (the report's allocator calls)", d)
    check(runs["uprobe_return"][0] >= rep.allocated[1],
          "%d return runs for %d allocations" % (runs["uprobe_return"][0], rep.allocated[1]), d)
    check(all(ns > 0 for _, ns in runs.values()), "a program ran in 0 ns", d)
    res = mtlib.run_memtrace(["--no-follow", "-o", os.devnull, "--", mtlib.prog_path("leaks")])
    check("memtrace: BPF " not in res.stderr, "BPF cost lines without -v", res.stderr)


@test("cli.capstone_lazy")
def _capstone_lazy():
    """libcapstone (the disassembler that reads operator new/delete) is
    opened only for a file that defines them: memtrace tracing a C
    program never maps it.  (That it is opened when needed,
    unwind.cxx_one_trap shows: libstdc++'s forwarding new is found with
    it.)"""
    mt = mtlib.Bg([mtlib.MEMTRACE, "-o", os.devnull, "--", mtlib.prog_path("waiter")])
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "memtrace did not start tracing waiter", mt.details())
        with open("/proc/%d/maps" % mt.pid) as f:
            maps = f.read()
        check("libcapstone" not in maps, "libcapstone is mapped while tracing a C program",
              "\n".join(l for l in maps.splitlines() if ".so" in l))
        check("libc.so" in maps, "memtrace's maps read wrong: no libc", maps[:2000])
    finally:
        mtlib.kill_quietly(mt)


@test("cli.output_file")
def _output_file():
    res, rep = mtlib.trace("leaks", "inuse_space")
    check_eq(res.stdout, "", "memtrace -o FILE -- leaks: stdout (leaks prints nothing)")
    check(rep.text.startswith("memtrace %s heap profile\n" % mtlib.VERSION), "report file", rep.text)


@test("cli.stdout_report")
def _stdout_report():
    res = mtlib.run_memtrace(["--unit", "B", "--", mtlib.prog_path("leaks")])
    check_eq(res.rc, 0, "exit status", res.stderr)
    rep = mtlib.parse_report(res.stdout)
    check("heap profile" not in res.stderr, "the report went to stderr", res.stderr)
    exp = BY_NAME["leaks"]
    check_eq(rep.inuse, (sum(f.inuse_space for f in exp.funcs.values()),
                         sum(f.inuse_objects for f in exp.funcs.values())), "leaks: in use", rep.text)


@test("cli.top_n")
def _top_n():
    exp = BY_NAME["leaks"]
    res, rep = mtlib.trace("leaks", "inuse_space", top=2)
    check_eq(res.rc, 0, "exit status", res.stderr)
    check_eq(len(rep.rows), 2, "rows with -n 2", rep.text)
    check_eq(rep.shown[0], 2, "'Showing top N' with -n 2", rep.title)
    want = sorted(((f.inuse_space, n) for n, f in exp.funcs.items()), reverse=True)[:2]
    got = [(r.flat, r.function) for r in rep.rows]
    check_eq(got, want, "top 2 functions by inuse_space", rep.text)
    check(rep.shown[1] >= len([f for f in exp.funcs.values() if f.inuse_objects]),
          "'of M functions' counts fewer functions than leak", rep.title)
    check(len(rep.stacks) <= 2, "-n 2 shows %d stacks" % len(rep.stacks), rep.text)


@test("cli.unit_auto")
def _unit_auto():
    exp = BY_NAME["leaks"]
    path = mtlib.prog_path("leaks")
    out = os.path.join(mtlib.TMPDIR, "auto.txt")
    res = mtlib.run_memtrace(["-n", "100", "-o", out, "--", path])
    check_eq(res.rc, 0, "exit status", res.stderr)
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    check(rep.inuse[0] == sum(f.inuse_space for f in exp.funcs.values()), "in use bytes", rep.text)
    check("(3.59KiB)" in rep.header["in use"], "in use line %r lacks (3.59KiB)" % rep.header["in use"], rep.text)
    row = rep.row("leak_three")
    check(row is not None, "no leak_three row", rep.text)
    check(abs(row.flat - 2000) <= 2000 * 0.01, "leak_three flat %r is not about 2000 bytes" % row.flat, rep.text)
    for unit, factor in (("KiB", 1024), ("MiB", 1024 ** 2)):
        out = os.path.join(mtlib.TMPDIR, "unit.%s.txt" % unit)
        res = mtlib.run_memtrace(["-n", "100", "--unit", unit, "-o", out, "--", path])
        check_eq(res.rc, 0, "exit status with --unit %s" % unit, res.stderr)
        with open(out) as f:
            text = f.read()
        rep = mtlib.parse_report(text)
        line = [l for l in text.splitlines() if l.rstrip().endswith(("leak_three", "leaks.c:%d" % mtlib.marker_line(
            "leaks.c", "DEF_LEAK_THREE")))]
        check(line and line[0].split()[0].endswith(unit), "--unit %s: leak_three's flat is not in %s" % (unit, unit),
              text)
        check(abs(rep.row("leak_three").flat - 2000) <= max(2000 * 0.01, factor * 0.01),
              "--unit %s: leak_three flat %r" % (unit, rep.row("leak_three").flat), text)


@test("cli.small_maps_count_drops")
def _small_maps():
    """--max-allocs 4 on leaks (15 blocks live at the end): what does not fit
    is counted as dropped, and the report still comes out."""
    res, rep = mtlib.trace("leaks", "inuse_space", extra=("--max-allocs", "4"))
    details = "%s\n%s" % (mtlib.tail(res.stderr, 5), mtlib.tail(rep.text, 30))
    check_eq(res.rc, 0, "exit status", details)
    total, parts = rep.drops
    check(parts.get("allocs map full", 0) > 0, "no 'allocs map full' drops with --max-allocs 4", details)
    check_eq(total, sum(parts.values()), "drops total vs the sum of its parts", details)
    # Allocated stays exact; a block that did not fit counts as freed, so
    # in use is what the 4 slots still held: a lower bound.
    want = totals(BY_NAME["leaks"])
    check_eq(rep.allocated, (want["alloc_space"], want["alloc_objects"]),
             "allocated (bytes, objects)", details)
    check(rep.inuse[1] <= 4 and rep.inuse[0] <= want["inuse_space"],
          "in use %r: more than 4 blocks, or more than the true %d bytes"
          % (rep.inuse, want["inuse_space"]), details)
    check_eq(rep.freed, (rep.allocated[0] - rep.inuse[0], rep.allocated[1] - rep.inuse[1]),
             "freed = allocated - in use", details)


# ---------------------------------------------------------------- output files

NOBODY = 65534


def sticky_dir(name):
    """A fresh world-writable sticky directory, like /tmp."""
    d = os.path.join(mtlib.TMPDIR, name)
    os.makedirs(d)
    os.chmod(mtlib.TMPDIR, 0o755)
    os.chmod(d, 0o1777)
    return d


OUTPUT_FLAGS = (("-o", "{}"), ("--pprof", "{}"), ("--text={}",), ("--folded={}",),
                ("--timeline", "{}"), ("--timeline-svg", "{}"))


@test("cli.output.foreign_symlink", needs=("memtrace", "root"))
def _foreign_symlink():
    """A symlink another user planted in a sticky directory is not followed:
    each output flag is refused with one line, and its target is intact."""
    d = sticky_dir("planted")
    victim = os.path.join(d, "victim")
    with open(victim, "w") as f:
        f.write("secret\n")
    link = os.path.join(d, "report")
    os.symlink(victim, link)
    os.lchown(link, NOBODY, NOBODY)
    for flag in OUTPUT_FLAGS:
        args = [a.format(link) for a in flag] + ["-d", "1", "--", TRUE]
        res = mtlib.run_memtrace(args, timeout=60)
        mtlib.check_one_line_error(res, "memtrace %s (another user's symlink)" % " ".join(args),
                                   mention=("symbolic link",))
        with open(victim) as f:
            check_eq(f.read(), "secret\n", "the symlink's target after memtrace %s" % " ".join(args))
        check(os.path.islink(link), "the planted symlink is gone")
        check_eq(sorted(os.listdir(d)), ["report", "victim"], "files in the directory")


@test("cli.output.own_symlink", needs=("memtrace", "bpf"))
def _own_symlink():
    """A symlink of memtrace's own user is followed: the report replaces
    its target, and the link stays."""
    d = sticky_dir("ownlink")
    target = os.path.join(d, "target.txt")
    with open(target, "w") as f:
        f.write("old\n")
    link = os.path.join(d, "link.txt")
    os.symlink(target, link)
    res = mtlib.run_memtrace(["-o", link, "--", TRUE])
    check_eq(res.rc, 0, "exit status", res.stderr)
    check(os.path.islink(link), "the symlink was replaced")
    with open(target) as f:
        text = f.read()
    check(text.startswith("memtrace %s heap profile\n" % mtlib.VERSION), "the link's target", text)
    check_eq(sorted(os.listdir(d)), ["link.txt", "target.txt"], "files in the directory")


@test("cli.output.none_on_failure", needs=("memtrace",))
def _none_on_failure():
    """A run that fails (no such process) creates no output file and
    leaves an existing one as it was."""
    d = sticky_dir("failed")
    old = os.path.join(d, "old.txt")
    with open(old, "w") as f:
        f.write("previous report\n")
    pid = mtlib.free_pid()
    for flag in OUTPUT_FLAGS + (("-o", old),):
        path = os.path.join(d, "new.out") if "{}" in "".join(flag) else old
        args = [a.format(path) for a in flag] + ["-d", "1", "-p", str(pid)]
        res = mtlib.run_memtrace(args, timeout=60)
        check(res.rc != 0, "memtrace %s: exit status 0" % " ".join(args), res.stderr)
        check_eq(sorted(os.listdir(d)), ["old.txt"], "files after memtrace %s" % " ".join(args))
        with open(old) as f:
            check_eq(f.read(), "previous report\n", "old.txt after memtrace %s" % " ".join(args))


# ---------------------------------------------------------------- sudo

SUDO_NOBODY = {"SUDO_UID": str(NOBODY), "SUDO_GID": str(NOBODY), "SUDO_USER": "nobody"}


def sudo_env(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    env.update(extra)
    return env


def ids_of(text):
    """uid, gid and groups from `id -u; id -g; id -G` output."""
    lines = text.split("\n")
    return int(lines[0]), int(lines[1]), sorted(int(g) for g in lines[2].split())




def run_ids_under(env, extra=()):
    """memtrace -o FILE [extra] -- /usr/bin/id ..., three times for the three
    questions; returns (uid, gid, groups) of CMD and the report's owner."""
    d = os.path.join(mtlib.TMPDIR, "sudo.%d" % len(os.listdir(mtlib.TMPDIR)))
    os.makedirs(d)
    # The report is written with the invoking user's rights: a directory
    # that user may write, on a path that user may search.
    os.chmod(mtlib.TMPDIR, 0o755)
    if "SUDO_UID" in env and env["SUDO_UID"] != "0":
        os.chown(d, int(env["SUDO_UID"]), int(env["SUDO_GID"]))
    out = os.path.join(d, "report.txt")
    got = []
    for flag in ("-u", "-g", "-G"):
        if os.path.exists(out):
            os.unlink(out)
        res = mtlib.run([mtlib.MEMTRACE, "-o", out] + list(extra) + ["--", "/usr/bin/id", flag],
                        env=env, timeout=60)
        check_eq(res.rc, 0, "memtrace %s -- id %s: exit status" % (" ".join(extra), flag), res.stderr)
        got.append(res.stdout.strip())
    st = os.stat(out)
    return ids_of("\n".join(got)), (st.st_uid, st.st_gid)


@test("cli.sudo.cmd_runs_as_invoking_user")
def _sudo_user():
    """Started through sudo (SUDO_UID/SUDO_GID/SUDO_USER of nobody), CMD
    runs as nobody with nobody's groups, and the report file is nobody's."""
    check_eq(os.geteuid(), 0, "these tests run as root")
    ids, owner = run_ids_under(sudo_env(SUDO_NOBODY))
    want_groups = sorted(set(os.getgrouplist("nobody", NOBODY)))
    check_eq(ids, (NOBODY, NOBODY, want_groups), "CMD's uid, gid and groups under sudo")
    check_eq(owner, (NOBODY, NOBODY), "the report file's owner under sudo")


@test("cli.sudo.as_root")
def _sudo_as_root():
    """--as-root keeps CMD root; the report is still the invoking user's."""
    ids, owner = run_ids_under(sudo_env(SUDO_NOBODY), extra=("--as-root",))
    check_eq(ids[:2], (0, 0), "CMD's uid and gid with --as-root")
    check(0 in ids[2], "CMD's groups with --as-root lack root's: %r" % (ids[2],))
    check_eq(owner, (NOBODY, NOBODY), "the report file's owner with --as-root")


@test("cli.sudo.not_under_sudo")
def _not_sudo():
    """Without SUDO_UID (or with SUDO_UID=0) CMD runs as memtrace's user."""
    for extra in ({}, {"SUDO_UID": "0", "SUDO_GID": "0", "SUDO_USER": "root"}):
        ids, owner = run_ids_under(sudo_env(extra))
        check_eq(ids[:2], (os.geteuid(), os.getegid()), "CMD's uid and gid with %r" % extra)
        check_eq(owner, (os.geteuid(), os.getegid()), "the report file's owner with %r" % extra)


@test("cli.sudo.bad_env", needs=("memtrace", "root"))
def _sudo_bad():
    for bad in ({"SUDO_UID": "abc"}, {"SUDO_UID": "1000", "SUDO_GID": "-1"}):
        res = mtlib.run([mtlib.MEMTRACE, "--", TRUE], env=sudo_env(bad), timeout=60)
        mtlib.check_one_line_error(res, "memtrace with %r" % bad, mention=("SUDO_",))


@test("cli.as_root_needs_cmd", needs=("memtrace",))
def _as_root_needs_cmd():
    res = mtlib.run_memtrace(["--as-root", "-p", "1"], timeout=30)
    mtlib.check_one_line_error(res, "memtrace --as-root -p 1", mention=("--as-root",))


# ---------------------------------------------------------------- edges

@test("cli.target_exits_while_attaching")
def _exits_while_attaching():
    """A target that exits while memtrace attaches (sleep of 0 to 80 ms; the
    attach takes longer) is said to have exited, never to lack malloc."""
    ended_early = 0
    for i in range(10):
        target = subprocess.Popen(["/bin/sleep", "%.3f" % (i * 0.008)])
        try:
            res = mtlib.run_memtrace(["-o", "/dev/null", "-p", str(target.pid)], timeout=60)
        finally:
            target.wait(10)
        what = "memtrace -p PID of a sleep of %d ms" % (i * 8)
        check("defines no" not in res.stderr and "nothing to probe" not in res.stderr,
              "%s: the target's exit reported as a missing allocator" % what, res.stderr)
        if res.rc == 0:
            check("exited" in res.stderr, "%s: exit status 0 without 'exited'" % what, res.stderr)
            continue
        mtlib.check_one_line_error(res, what, mention=("exited", "no such process"))
        ended_early += 1
    check(ended_early > 0, "no target exited before memtrace had attached: the test exercised nothing")


@test("cli.pid_just_execd")
def _pid_just_execd():
    """memtrace -p on a process that has just exec'd, before ld.so has
    mapped its libraries (as `./server & memtrace -p $!` can find it): it
    waits for them and traces, rather than saying there is no malloc.  The
    process is held at its exec (ptrace's stop, before ld.so runs) for
    0.2 s while memtrace reads its mappings: only the executable and ld.so."""
    libc = ctypes.CDLL(None, use_errno=True)
    ptrace_traceme, ptrace_detach = 0, 17
    pid = os.fork()
    if pid == 0:
        try:
            libc.ptrace(ptrace_traceme, 0, None, None)
            os.execv("/bin/sleep", ["sleep", "3"])
        finally:
            os._exit(127)
    try:
        _, status = os.waitpid(pid, 0)
        check(os.WIFSTOPPED(status), "sleep did not stop at its exec: status %#x" % status)
        with open("/proc/%d/maps" % pid) as f:
            libs = [l for l in f.read().splitlines() if "libc.so" in l]
        check_eq(libs, [], "libc mapped at the exec stop (the test holds nothing)")
        mt = mtlib.Bg([mtlib.MEMTRACE, "-p", str(pid), "-d", "1", "-o", os.devnull],
                      stdin=subprocess.DEVNULL)
        time.sleep(0.2)
        check_eq(libc.ptrace(ptrace_detach, pid, None, None), 0, "PTRACE_DETACH")
        rc = mt.wait(60)
        d = mt.details()
        check("nothing to probe" not in d, "the loading process reported as without malloc", d)
        check_eq(rc, 0, "memtrace -p exit status", d)
        check("memtrace: tracing pid %d (sleep)" % pid in d, "no 'tracing pid' line", d)
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def kernel_thread():
    """A kernel thread's pid (kthreadd is 2 outside pid namespaces)."""
    for name in ["2"] + sorted(os.listdir("/proc")):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        flags = int(stat[stat.rindex(")") + 2:].split()[6])
        if flags & 0x00200000:
            return int(name)
    raise mtlib.Skip("no kernel thread visible (a pid namespace)")


@test("cli.kernel_thread", needs=("memtrace", "root"))
def _kthread():
    pid = kernel_thread()
    res = mtlib.run_memtrace(["-d", "1", "-p", str(pid)], timeout=60)
    mtlib.check_one_line_error(res, "memtrace -p %d (a kernel thread)" % pid, mention=("kernel thread",))


@test("cli.zombie", needs=("memtrace", "root"))
def _zombie():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        for _ in range(100):  # until it is a zombie
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            if stat[stat.rindex(")") + 2] == "Z":
                break
            time.sleep(0.01)
        res = mtlib.run_memtrace(["-d", "1", "-p", str(pid)], timeout=60)
        mtlib.check_one_line_error(res, "memtrace -p %d (a zombie)" % pid, mention=("zombie",))
    finally:
        os.waitpid(pid, 0)


@test("cli.option_value_is_double_dash", needs=("memtrace",))
def _double_dash_value():
    """`--pprof -- ./prog` does not write a file named '--'."""
    for args in (["--pprof", "--", TRUE], ["-o", "--", TRUE], ["--comm", "--", TRUE]):
        res = mtlib.run_memtrace(args, timeout=30)
        mtlib.check_one_line_error(res, "memtrace " + " ".join(args), mention=(args[0],))
        check(not os.path.exists("--"), "memtrace %s wrote a file named '--'" % " ".join(args))


@test("cli.cmd_not_executable", needs=("memtrace", "root"))
def _not_executable():
    plain = os.path.join(mtlib.TMPDIR, "plain.txt")
    with open(plain, "w") as f:
        f.write("not a program\n")
    os.chmod(plain, 0o644)
    for path, words in ((plain, ("not an executable",)), ("/etc/passwd", ("not an executable",)),
                        (mtlib.TMPDIR, ("is a directory",)),
                        (os.path.join(mtlib.TMPDIR, "missing"), ("no such file",))):
        res = mtlib.run_memtrace(["-d", "1", "--", path], timeout=60)
        line = mtlib.check_one_line_error(res, "memtrace -- %s" % path, mention=words)
        check(path in line, "the message does not name %s: %r" % (path, line))


@test("cli.max_allocs_too_large", needs=("memtrace",))
def _max_allocs_too_large():
    """The largest hash map the kernel makes has 2^27 entries (its bucket
    array must stay under 4 GiB): more is refused up front, saying what fits."""
    res = mtlib.run_memtrace(["--max-allocs", str(1 << 28), "-d", "1", "--", TRUE], timeout=60)
    mtlib.check_one_line_error(res, "memtrace --max-allocs 2^28", mention=(str(1 << 27),))


@test("cli.no_stdout_when_all_outputs_have_files")
def _no_stdout_report():
    d = os.path.join(mtlib.TMPDIR, "allfiles")
    os.makedirs(d)
    for outs in ([("--pprof", os.path.join(d, "p.pb.gz")), ("--text=" + os.path.join(d, "t.txt"),)],
                 [("--leaks=" + os.path.join(d, "l.txt"),)],
                 [("--folded=" + os.path.join(d, "f.txt"),), ("--pprof", os.path.join(d, "q.pb.gz"))]):
        args = [a for o in outs for a in o]
        res = mtlib.run_memtrace(args + ["--", mtlib.prog_path("leaks")])
        check_eq(res.rc, 0, "memtrace %s: exit status" % " ".join(args), res.stderr)
        check_eq(res.stdout, "", "memtrace %s -- leaks: stdout (leaks prints nothing)" % " ".join(args))
        for o in outs:
            path = o[-1].split("=", 1)[-1]
            check(os.path.getsize(path) > 0, "%s is empty" % path)


@test("cli.min_age_longer_than_duration", needs=("memtrace", "root"))
def _min_age_warning():
    """--leaks with --min-age not shorter than -d can list nothing: warned;
    with a shorter --min-age, no warning."""
    w = mtlib.start_waiter()
    try:
        for args, warned in ((["--leaks", "--min-age", "30s", "-d", "1"], True),
                             (["--leaks", "-d", "1"], True),  # the default 5 s
                             (["--leaks", "--min-age", "500ms", "-d", "1"], False),
                             (["--min-age", "30s", "-d", "1"], False)):  # no --leaks
            res = mtlib.run_memtrace(args + ["-o", "/dev/null", "-p", str(w.pid)], timeout=60)
            check_eq(res.rc, 0, "memtrace %s: exit status" % " ".join(args), res.stderr)
            got = [l for l in res.stderr.splitlines() if "min-age" in l and "warning" in l]
            check_eq(bool(got), warned, "memtrace %s warns about --min-age" % " ".join(args), res.stderr)
    finally:
        mtlib.kill_quietly(w)


# ---------------------------------------------------------------- keys

def wait_file(path, text, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                if text in f.read():
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def wait_child(pid, timeout):
    """The exit status of child PID, or None (killed) after TIMEOUT."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def make_key_test(key, name):
    @test("cli.keys.%s_stops_pipeline" % name)
    def _t():
        """README's `memtrace --folded | flamegraph.pl > out.svg` typed in a
        terminal (a pty; sh runs the pipeline in the terminal's foreground
        process group, as a shell does): the key stops memtrace alone, the
        reader of the pipe gets the whole report, and the terminal gets its
        settings back."""
        import pty
        import termios
        w = mtlib.start_waiter()
        d = os.path.join(mtlib.TMPDIR, "keys.%s" % name)
        os.makedirs(d)
        err, out = os.path.join(d, "stderr"), os.path.join(d, "out.folded")
        pid, master = pty.fork()
        if pid == 0:
            try:
                os.execv("/bin/sh", ["sh", "-c", '"$0" --folded -p "$1" 2>"$2" | cat > "$3"',
                                     mtlib.MEMTRACE, str(w.pid), err, out])
            finally:
                os._exit(127)
        try:
            before = termios.tcgetattr(master)
            check(wait_file(err, "memtrace: tracing", 60), "memtrace did not start tracing",
                  open(err).read() if os.path.exists(err) else "")
            w.send("go\n")
            check(w.out.wait_for(lambda l: l.startswith("done"), 30) is not None, "waiter did not finish")
            os.write(master, key)
            status = wait_child(pid, 30)
            pid = 0
            with open(err) as f:
                stderr = f.read()
            check(status is not None, "the pipeline did not end within 30 s of the key", stderr)
            check_eq(status, 0, "the pipeline's exit status", stderr)
            check("q or Enter" in stderr, "memtrace did not say that q or Enter stops it", stderr)
            with open(out) as f:
                folded = f.read()
            exp = WAITER
            leakers = [n for n, fn in exp.funcs.items() if fn.inuse_space]
            for fn in leakers:
                check(any(fn in line.split(" ")[0].split(";") for line in folded.splitlines()),
                      "%s is not in the folded stacks the pipe got" % fn, folded)
            check_eq(termios.tcgetattr(master)[3] & (termios.ICANON | termios.ECHO),
                     before[3] & (termios.ICANON | termios.ECHO),
                     "the terminal's ICANON and ECHO after memtrace")
        finally:
            if pid:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            os.close(master)
            mtlib.kill_quietly(w)


make_key_test(b"q", "q")
make_key_test(b"\r", "enter")


@test("cli.keys.not_without_terminal")
def _keys_no_tty():
    """Without a terminal on stdin (a pipe), nothing is read from it: a
    line on it does not stop memtrace, and no q is promised."""
    w = mtlib.start_waiter()
    try:
        mt = mtlib.Bg([mtlib.MEMTRACE, "-o", "/dev/null", "-d", "3", "-p", str(w.pid)])
        check(mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60) is not None,
              "memtrace did not start", mt.details())
        start = time.monotonic()
        mt.send("q\n")
        check_eq(mt.wait(30), 0, "memtrace's exit status", mt.details())
        check(time.monotonic() - start > 2, "a q on a pipe stopped memtrace", mt.details())
        check("q or Enter" not in mt.err.text(), "q promised without a terminal", mt.details())
    finally:
        mtlib.kill_quietly(w)


# ---------------------------------------------------------------- exit status

@test("cli.exit_codes")
def _exit_codes():
    """The exit statuses --help and the README document: 2 for a bad
    command line, 1 when memtrace fails, 128+N for a CMD killed by signal N."""
    out = os.path.join(mtlib.TMPDIR, "codes.txt")
    for args, want in ((["--bogus-option", "--", TRUE], 2),
                       (["-d", "abc", "--", TRUE], 2),
                       (["--pprof", "--", TRUE], 2),
                       (["-d", "1", "-p", str(mtlib.free_pid())], 1),
                       (["-d", "1", "--", "/etc/passwd"], 1),
                       (["-o", out, "--", "/usr/bin/python3", "-c", "import os; os.kill(os.getpid(), 15)"],
                        128 + 15)):
        res = mtlib.run_memtrace(args, timeout=60)
        check_eq(res.rc, want, "exit status of memtrace %s" % " ".join(args), res.stderr)
    res = mtlib.run_memtrace(["--help"])
    for words in ("Exit status", "CMD's exit status", "2 (bad command line)", "leaves CMD running",
                  "q or Enter", "--as-root"):
        check(words in res.stdout, "--help does not say %r" % words, res.stdout)


@test("cli.sigint_to_memtrace_leaves_cmd_running")
def _sigint_leaves_cmd():
    """SIGINT to memtrace alone (not to CMD's process group) stops tracing
    and reports; CMD keeps running; memtrace exits 0 and says so."""
    import signal
    out = os.path.join(mtlib.TMPDIR, "left.txt")
    mt = mtlib.Bg([mtlib.MEMTRACE, "-o", out, "--", "/bin/sleep", "60"])
    line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing pid"), 60)
    check(line is not None, "memtrace did not start", mt.details())
    child = int(line.split()[3])
    try:
        mt.signal(signal.SIGINT)
        check_eq(mt.wait(30), 0, "memtrace's exit status", mt.details())
        check("left running" in mt.err.text(), "memtrace did not say CMD was left running", mt.details())
        check(os.path.getsize(out) > 0, "no report written", mt.details())
        os.kill(child, 0)  # raises if the sleep is gone
        with open("/proc/%d/stat" % child) as f:
            check(f.read().split(")")[1].split()[0] != "Z", "CMD exited")
    finally:
        try:
            os.kill(child, 9)
        except OSError:
            pass
        mt.kill()
