"""The allocator a program gets with its exec, and programs in a chroot.

`memtrace -- env LD_PRELOAD=libjemalloc.so.2 PROG` (and `sh -c
'LD_PRELOAD=... exec PROG'`): the allocator arrives with PROG's exec, in
PROG's environment, not memtrace's.  memtrace holds the process at ld.so's
debugger hook until the libraries are mapped, then probes what it really
maps: every allocation per function exact, the allocator line naming it.

A chroot holding its own copies of libc and ld.so: `-- chroot DIR /prog`
and `-p` on the chrooted process, exact per function.
"""
import os
import re
import shutil
import subprocess

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, WAITER
import test_allocators as ta

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
METRICS = ("inuse_space", "inuse_objects", "alloc_space", "alloc_objects")


def run_report(cmd, metric, env=None, tag="x"):
    out = os.path.join(mtlib.TMPDIR, "exec_alloc.%s.%s.txt" % (tag, metric))
    if os.path.exists(out):
        os.unlink(out)
    args = ["--unit", "B", "-n", "100", "--metric", metric, "-o", out, "--"] + cmd
    res = mtlib.run_memtrace(args, env=env)
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc, mtlib.tail(res.stderr, 8))
    check_eq(res.rc, 0, "memtrace -- %s: exit status" % " ".join(cmd), d)
    check(os.path.exists(out), "no report from memtrace -- %s" % " ".join(cmd), d)
    with open(out, encoding="utf-8", errors="replace") as f:
        rep = mtlib.parse_report(f.read())
    return res, rep, d + "\nreport:\n" + mtlib.tail(rep.text, 60)


def check_flats(what, rep, funcs, metric, d):
    bad = []
    for name, fn in funcs.items():
        want, got = getattr(fn, metric), ta.flat(rep, name)
        if got != want:
            bad.append("%s: flat %r, expected %d" % (name, got, want))
    check(not bad, "%s --metric %s: %s" % (what, metric, "; ".join(bad)), d)


def check_twice(what, rep, funcs, d):
    """Every function of FUNCS called twice its one run's alloc_objects."""
    bad = []
    for name, fn in funcs.items():
        got = ta.flat(rep, name)
        if got != 2 * fn.alloc_objects:
            bad.append("%s: %r, expected %d" % (name, got, 2 * fn.alloc_objects))
    check(not bad, "%s: %s" % (what, "; ".join(bad)), d)


def check_allocator(what, rep, kind, lib, d):
    main_part = rep.allocator.split(";")[0]
    check(main_part.startswith(kind + " ") and lib in main_part,
          "%s: allocator line %r, expected %s in %s" % (what, rep.allocator, kind, lib), d)


def preload_case(cmd_of, tag, metrics=METRICS):
    prog = mtlib.prog_path("alloc_jemalloc")
    check(os.path.exists(JEMALLOC), "%s is missing (libjemalloc-dev)" % JEMALLOC)
    for metric in metrics:
        cmd = cmd_of(JEMALLOC, prog)
        res, rep, d = run_report(cmd, metric, tag=tag)
        what = "memtrace -- %s" % " ".join(cmd)
        check_allocator(what, rep, "jemalloc", "libjemalloc", d)
        check_eq(rep.target_comm, "alloc_jemalloc", "%s: target" % what, d)
        check_flats(what, rep, ta.JEMALLOC_FUNCS, metric, d)
        check_eq(rep.drops[0], 0, "%s: drops" % what, d)


@test("exec_alloc.jemalloc_env")
def _jemalloc_env():
    """-- env LD_PRELOAD=libjemalloc PROG: jemalloc's every call, exact."""
    preload_case(lambda lib, prog: ["env", "LD_PRELOAD=" + lib, prog], "env")


@test("exec_alloc.jemalloc_sh_exec")
def _jemalloc_sh_exec():
    """-- sh -c 'LD_PRELOAD=libjemalloc exec PROG': the same."""
    preload_case(lambda lib, prog: ["sh", "-c", "LD_PRELOAD=%s exec %s" % (lib, prog)], "sh",
                 metrics=("inuse_space", "alloc_objects"))


@test("exec_alloc.tcmalloc_env")
def _tcmalloc_env():
    """-- env LD_PRELOAD=libtcmalloc_minimal leaks: leaks' functions exact,
    the allocator line says tcmalloc."""
    check(os.path.exists(TCMALLOC), "%s is missing (libgoogle-perftools-dev)" % TCMALLOC)
    p = BY_NAME["leaks"]
    for metric in ("inuse_space", "alloc_objects"):
        cmd = ["env", "LD_PRELOAD=" + TCMALLOC, mtlib.prog_path("leaks")]
        res, rep, d = run_report(cmd, metric, tag="tc")
        what = "memtrace -- %s" % " ".join(cmd)
        check_allocator(what, rep, "tcmalloc", "libtcmalloc_minimal", d)
        check_flats(what, rep, p.funcs, metric, d)


@test("exec_alloc.allocator_per_process")
def _allocator_per_process():
    """-- sh -c 'LD_PRELOAD=libtcmalloc leaks; leaks': two images of one
    program on two allocators.  The allocator line names each with the
    processes that used it (sh's glibc first, as the command's), and both
    runs' calls are counted, each function twice its one run."""
    check(os.path.exists(TCMALLOC), "%s is missing (libgoogle-perftools-dev)" % TCMALLOC)
    p = BY_NAME["leaks"]
    leaks = mtlib.prog_path("leaks")
    cmd = ["sh", "-c", "LD_PRELOAD=%s %s; %s" % (TCMALLOC, leaks, leaks)]
    res, rep, d = run_report(cmd, "alloc_objects", tag="mixed")
    groups = [g.strip() for g in rep.allocator.split(";")
              if not g.strip().startswith("C++ new/delete in ")]
    check_eq(len(groups), 2, "allocator line's allocators", d)
    glibc, tc = groups
    check(glibc.startswith("glibc ") and "libc.so.6" in glibc,
          "first allocator %r, expected the command's glibc" % glibc, d)
    check(tc.startswith("tcmalloc ") and "libtcmalloc_minimal" in tc,
          "second allocator %r, expected tcmalloc" % tc, d)
    check_eq(glibc.count("pid "), 2, "processes named with glibc (sh, the second leaks)", d)
    check_eq(tc.count("pid "), 1, "processes named with tcmalloc (the first leaks)", d)
    check(" leaks)" in tc and " sh," in glibc and " leaks)" in glibc,
          "process names on the allocator line", d)
    check_twice("both runs' calls", rep, p.funcs, d)


def make_chroot(name):
    """A directory holding copies of leaks and waiter, libc and ld.so (other
    files than the system's: the probes must go on these)."""
    root = os.path.join(mtlib.TMPDIR, name)
    libdir = os.path.join(root, "lib/x86_64-linux-gnu")
    os.makedirs(libdir)
    os.makedirs(os.path.join(root, "lib64"))
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy2("/lib/x86_64-linux-gnu/libc.so.6", libdir)
    shutil.copy2("/lib64/ld-linux-x86-64.so.2", os.path.join(root, "lib64"))
    for prog in ("leaks", "waiter"):
        shutil.copy2(mtlib.prog_path(prog), os.path.join(root, "bin"))
    return root


def waiter_pid(argv, tag, env=None, before=None):
    """Run waiter as ARGV (ENV), BEFORE() once it is ready (its pid given),
    then `memtrace -p` on it through its traced part: (report, details)."""
    w = mtlib.Bg(argv, env=env)
    mt = None
    out = os.path.join(mtlib.TMPDIR, "exec_alloc.%s.txt" % tag)
    try:
        line = w.out.wait_for(lambda l: l.startswith("ready "), 30)
        check(line is not None, "waiter (%s) did not say ready" % tag, w.details())
        if before:
            before(w.pid)
        mt = mtlib.start_memtrace_pid(w.pid, ["--unit", "B", "-n", "100", "-o", out, "-d", "600"])
        w.send("\n")
        check(w.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "waiter (%s) did not say done" % tag, w.details())
        w.send("\n")
        check_eq(w.wait(30), 0, "waiter's exit status", w.details())
        check_eq(mt.wait(60), 0, "memtrace -p (%s): exit status" % tag, mt.details())
        with open(out) as f:
            rep = mtlib.parse_report(f.read())
        return rep, "%s\nreport:\n%s" % (mt.details(), mtlib.tail(rep.text, 60))
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)


@test("exec_alloc.chroot_cmd")
def _chroot_cmd():
    """-- chroot DIR /bin/leaks, with the chroot's own libc: exact, and the
    allocator line names the chroot's libc."""
    root = make_chroot("chroot-cmd")
    p = BY_NAME["leaks"]
    for metric in ("inuse_space", "alloc_space", "inuse_objects"):
        cmd = ["chroot", root, "/bin/leaks"]
        res, rep, d = run_report(cmd, metric, tag="chroot")
        what = "memtrace -- %s" % " ".join(cmd)
        check_allocator(what, rep, "glibc", root, d)
        check_flats(what, rep, p.funcs, metric, d)


@test("exec_alloc.chroot_pid")
def _chroot_pid():
    """-p of a process in a chroot with its own libc: attaches to the
    chroot's libc (its maps name it by its path outside the chroot), and
    waiter's traced part is exact."""
    root = make_chroot("chroot-pid")
    rep, d = waiter_pid(["chroot", root, "/bin/waiter"], "chroot_pid")
    check_allocator("memtrace -p (chroot)", rep, "glibc", root, d)
    check_flats("memtrace -p (chroot)", rep, WAITER.funcs, "inuse_space", d)


@test("exec_alloc.unshare_bind_mount")
def _unshare_bind_mount():
    """-- unshare -m sh -c 'mount --bind DIR /lib/x86_64-linux-gnu && exec
    leaks': in its own mount namespace, leaks loads a copy of libc bound over
    the system's library directory; that copy is probed, and leaks is exact."""
    root = make_chroot("unshare")
    libdir = os.path.join(root, "lib/x86_64-linux-gnu")
    # /lib64/ld-linux-x86-64.so.2 leads into the directory bound over.
    shutil.copy2("/lib64/ld-linux-x86-64.so.2", libdir)
    script = "mount --bind %s /lib/x86_64-linux-gnu && exec %s" % (libdir, os.path.join(root, "bin/leaks"))
    p = BY_NAME["leaks"]
    for metric in ("inuse_space", "alloc_objects"):
        cmd = ["unshare", "-m", "sh", "-c", script]
        res, rep, d = run_report(cmd, metric, tag="unshare")
        what = "memtrace -- %s" % " ".join(cmd)
        check_eq(rep.target_comm, "leaks", "%s: target" % what, d)
        check_flats(what, rep, p.funcs, metric, d)


@test("exec_alloc.deleted_files_pid")
def _deleted_files_pid():
    """-p of a process whose executable and libc were deleted since it
    mapped them (a library an upgrade replaced while a daemon runs): maps
    says "(deleted)", the files are reached through map_files, probed and
    read for symbols.  waiter's traced part is exact, its functions named,
    and the allocator line names the file without the kernel's tag."""
    root = make_chroot("deleted")
    libdir = os.path.join(root, "lib/x86_64-linux-gnu")
    exe = os.path.join(root, "bin/waiter")

    def delete(pid):
        os.unlink(os.path.join(libdir, "libc.so.6"))
        os.unlink(exe)
        with open("/proc/%d/maps" % pid) as f:
            maps = f.read()
        check("libc.so.6 (deleted)" in maps and "waiter (deleted)" in maps,
              "the deleted files are not marked so in maps", maps)

    rep, d = waiter_pid([exe], "deleted_files_pid", dict(os.environ, LD_LIBRARY_PATH=libdir), delete)
    check_allocator("memtrace -p (deleted files)", rep, "glibc", libdir, d)
    check("(deleted)" not in rep.allocator, "allocator line %r" % rep.allocator, d)
    check_flats("memtrace -p (deleted files)", rep, WAITER.funcs, "inuse_space", d)


def overlay_root(name):
    """An overlayfs mount (a container's root is one) whose lower layer
    holds waiter and leaks with a copy of libc: the mapped files are the
    layer's inodes, while /proc and stat() show the overlay's."""
    base = os.path.join(mtlib.TMPDIR, name)
    lower = make_chroot(name + "-lower")
    for d in ("upper", "work", "merged"):
        os.makedirs(os.path.join(base, d))
    merged = os.path.join(base, "merged")
    r = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        "lowerdir=%s,upperdir=%s/upper,workdir=%s/work" % (lower, base, base), merged],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check_eq(r.returncode, 0, "mount -t overlay", r.stdout)
    return merged


def check_whole_stacks(what, rep, d):
    m = re.search(r"^truncated stacks: (\d+)", rep.text, re.M)
    check(m is not None, "%s: no 'truncated stacks:' line" % what, d)
    check_eq(int(m.group(1)), 0, "%s: truncated stacks" % what, d)
    st = [s for s in rep.stacks if s.frames and s.frames[0].function == "waiter_leak"]
    check(st and any(f.function == "main" for f in st[0].frames),
          "%s: waiter_leak's stack does not reach main" % what, d)


@test("exec_alloc.overlayfs_pid")
def _overlayfs_pid():
    """-p of a process running from an overlayfs mount, libc there too:
    exact per function, and every stack whole from the first allocation
    (the unwind tables are made under the kernel's identity of each
    mapping, not stat()'s; before, the first 13 stacks were cut to one
    frame while tables were made again on first use)."""
    merged = overlay_root("ovl-pid")
    try:
        libdir = os.path.join(merged, "lib/x86_64-linux-gnu")
        rep, d = waiter_pid([os.path.join(merged, "bin/waiter")], "overlayfs_pid",
                            dict(os.environ, LD_LIBRARY_PATH=libdir))
        check_allocator("memtrace -p (overlayfs)", rep, "glibc", merged, d)
        check_flats("memtrace -p (overlayfs)", rep, WAITER.funcs, "inuse_space", d)
        check_whole_stacks("memtrace -p (overlayfs)", rep, d)
    finally:
        subprocess.run(["umount", "-l", merged])


@test("exec_alloc.overlayfs_chroot_cmd")
def _overlayfs_chroot_cmd():
    """-- chroot OVERLAY /bin/leaks, a container's shape: exact per
    function, and no stack cut short."""
    merged = overlay_root("ovl-cmd")
    try:
        p = BY_NAME["leaks"]
        cmd = ["chroot", merged, "/bin/leaks"]
        res, rep, d = run_report(cmd, "alloc_objects", tag="ovl")
        what = "memtrace -- %s" % " ".join(cmd)
        check_flats(what, rep, p.funcs, "alloc_objects", d)
        m = re.search(r"^truncated stacks: (\d+)", rep.text, re.M)
        check(m is not None and int(m.group(1)) == 0, "%s: truncated stacks" % what, d)
    finally:
        subprocess.run(["umount", "-l", merged])


@test("exec_alloc.exec_chain_children")
def _exec_chain_children():
    """A launcher script as pyenv's, rbenv's and nvm's shims are: `#!/usr/bin/env
    bash`, a `$(readlink ...)`, then `exec env bash -c 'leaks; leaks'`.
    The command's image changes three times (env, bash, bash) with libc at
    new addresses each time; the processes the last one forks get its
    probes all the same (before: 'cannot probe pid N (forked by M)', every
    child untraced).  Both runs of leaks exact, per function."""
    leaks = mtlib.prog_path("leaks")
    shim = os.path.join(mtlib.TMPDIR, "exec_chain_shim")
    with open(shim, "w") as f:
        f.write('#!/usr/bin/env bash\nx=$(readlink -f "$0")\n'
                'exec env bash -c "%s >/dev/null; %s >/dev/null; true"\n' % (leaks, leaks))
    os.chmod(shim, 0o755)
    p = BY_NAME["leaks"]
    res, rep, d = run_report([shim], "alloc_objects", tag="chain")
    check("cannot probe" not in res.stderr, "a process not probed", d)
    check_twice("both runs of leaks", rep, p.funcs, d)
