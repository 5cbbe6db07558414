"""Output files under sudo and as plain root, with users made here.

Started through sudo (SUDO_UID/SUDO_GID/SUDO_USER of a user made by the
test), every file memtrace writes (-o and the other outputs, --record, the
timeline, numbered and rotated files) is created with that user's rights:
whatever the user could not write, memtrace refuses with one line and
leaves as it was.  As plain root, a symbolic link of another user anywhere
on the path is refused, and so is another user's FIFO; a FIFO with no
reader is an error, not a hang.
"""
import os
import pwd
import stat
import subprocess
import threading

import mtlib
from mtlib import check, check_eq, test

TRUE = "/bin/true"
NOBODY = 65534

OUTPUT_FLAGS = (("-o", "{}"), ("--pprof", "{}"), ("--text={}",), ("--folded={}",),
                ("--timeline", "{}"), ("--timeline-svg", "{}"))

_user = {}


def test_user():
    """(uid, gid, name) of a user made for these tests (removed at exit)."""
    if not _user:
        name = "mtsudo%d" % (os.getpid() % 100000)
        res = mtlib.run(["useradd", "--system", "--no-create-home", "--user-group",
                         "--shell", "/usr/sbin/nologin", name], timeout=60)
        check_eq(res.rc, 0, "useradd %s" % name, res.stderr)
        import atexit
        atexit.register(lambda: subprocess.run(["userdel", name], stderr=subprocess.DEVNULL))
        pw = pwd.getpwnam(name)
        _user.update(uid=pw.pw_uid, gid=pw.pw_gid, name=name)
    return _user["uid"], _user["gid"], _user["name"]


def sudo_env():
    uid, gid, name = test_user()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}
    env.update(SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER=name)
    return env


def root_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("SUDO_")}


def fresh_dir(name, mode=0o755, owner=None):
    """A new directory below the tests' one (which others may search)."""
    os.chmod(mtlib.TMPDIR, 0o755)
    d = os.path.join(mtlib.TMPDIR, name)
    os.makedirs(d)
    os.chmod(d, mode)
    if owner is not None:
        os.chown(d, owner[0], owner[1])
    return d


def put(path, text, mode=0o644, owner=(0, 0)):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    os.chown(path, owner[0], owner[1])


def get(path):
    with open(path) as f:
        return f.read()


def refused(args, env, what, mention=None, timeout=60):
    res = mtlib.run_memtrace(args, env=env, timeout=timeout)
    return mtlib.check_one_line_error(res, what, mention=mention)


def flagged(flag, path):
    return [a.format(path) for a in flag]


@test("sudo_outputs.root_directory", needs=("memtrace", "root"))
def _root_directory():
    """Under sudo, no output is created in root's 0755 directory (as
    /etc/ld.so.preload would be): one line, nothing there afterwards."""
    d = fresh_dir("rootdir")
    env = sudo_env()
    for flag in OUTPUT_FLAGS:
        path = os.path.join(d, "ld.so.preload")
        args = flagged(flag, path) + ["--", TRUE]
        refused(args, env, "sudo memtrace %s" % " ".join(args), mention=("permission",))
        check_eq(os.listdir(d), [], "root's directory after sudo memtrace %s" % " ".join(args))
    for args in (["--record", os.path.join(d, "rec"), "--", TRUE],
                 ["-i", "1", "-o", os.path.join(d, "heap.txt"), "--", TRUE]):
        refused(args, env, "sudo memtrace %s" % " ".join(args))
        check_eq(os.listdir(d), [], "root's directory after sudo memtrace %s" % " ".join(args))


@test("sudo_outputs.root_files", needs=("memtrace", "root"))
def _root_files():
    """Under sudo, root's 0644 file in root's directory, and root's 0600
    file in a 0700 directory reached through the user's own symbolic link,
    are left as they were."""
    uid, gid, _ = test_user()
    d = fresh_dir("rootfiles")
    plain = os.path.join(d, "config")
    put(plain, "root's\n", 0o644)
    secret_dir = fresh_dir("rootfiles/private", 0o700)
    secret = os.path.join(secret_dir, "shadow")
    put(secret, "root's secret\n", 0o600)
    mine = fresh_dir("rootfiles-user", 0o755, (uid, gid))
    link = os.path.join(mine, "report.txt")
    os.symlink(secret, link)
    os.lchown(link, uid, gid)
    env = sudo_env()
    for flag in OUTPUT_FLAGS:
        for path, victim, text in ((plain, plain, "root's\n"), (link, secret, "root's secret\n")):
            args = flagged(flag, path) + ["--", TRUE]
            refused(args, env, "sudo memtrace %s" % " ".join(args))
            check_eq(get(victim), text, "%s after sudo memtrace %s" % (victim, " ".join(args)))
            st = os.stat(victim)
            check_eq((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o644 if victim == plain else 0o600),
                     "owner and mode of %s" % victim)
    check_eq(sorted(os.listdir(d)), ["config", "private"], "root's directory")
    check_eq(os.listdir(secret_dir), ["shadow"], "root's private directory")
    check_eq(os.listdir(mine), ["report.txt"], "the user's directory")


@test("sudo_outputs.directory_links", needs=("memtrace", "root"))
def _directory_links():
    """A symbolic link to a directory, on the way to the output: another
    user's in a sticky directory is refused under sudo and as plain root
    (--folded=sticky/dirlink/heap.txt); the target directory stays empty."""
    uid, gid, _ = test_user()
    target = fresh_dir("dirlinks-target")
    sticky = fresh_dir("dirlinks-sticky", 0o1777)
    for env, owner, who in ((sudo_env(), (NOBODY, NOBODY), "sudo"),
                            (root_env(), (uid, gid), "root")):
        link = os.path.join(sticky, "dirlink-" + who)
        os.symlink(target, link)
        os.lchown(link, *owner)
        for flag in OUTPUT_FLAGS:
            args = flagged(flag, os.path.join(link, "heap.txt")) + ["--", TRUE]
            refused(args, env, "%s memtrace %s" % (who, " ".join(args)), mention=("symbolic link",))
            check_eq(os.listdir(target), [], "the linked directory after %s memtrace %s"
                     % (who, " ".join(args)))


@test("sudo_outputs.written_as_user", needs=("memtrace", "bpf"))
def _written_as_user():
    """Under sudo, into the user's own directory: every file (outputs,
    numbered reports, the recording and its timeline) is the user's."""
    uid, gid, _ = test_user()
    d = fresh_dir("asuser", 0o755, (uid, gid))
    out = os.path.join(d, "heap.txt")
    rec = os.path.join(d, "rec")
    res = mtlib.run_memtrace(["-o", out, "--pprof", os.path.join(d, "heap.pb.gz"),
                              "--timeline", os.path.join(d, "t.csv"), "--record", rec,
                              "-i", "0.2", "--", "/bin/sleep", "0.7"], env=sudo_env())
    check_eq(res.rc, 0, "sudo memtrace into the user's directory: exit status", res.stderr)
    files = []
    for top, dirs, names in os.walk(d):
        files += [os.path.join(top, n) for n in dirs + names]
    check(any(f.startswith(rec + "/heap.") for f in files), "no profile in the recording: %r" % files)
    check(any(".0001." in f for f in files), "no numbered report: %r" % files)
    for f in files:
        st = os.lstat(f)
        check_eq((st.st_uid, st.st_gid), (uid, gid), "owner of %s" % f)


def fifo_reader(path, got):
    """Read PATH (a FIFO) to its end in a thread, into got."""
    def run():
        with open(path, "rb") as f:
            got.append(f.read())
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@test("sudo_outputs.foreign_fifo", needs=("memtrace", "root"))
def _foreign_fifo():
    """As plain root, another user's FIFO in a sticky directory is not
    written into, even while the user reads it: one line, nothing sent."""
    uid, gid, _ = test_user()
    sticky = fresh_dir("fifo-sticky", 0o1777)
    fifo = os.path.join(sticky, "report")
    os.mkfifo(fifo, 0o622)
    os.chown(fifo, uid, gid)
    for flag in OUTPUT_FLAGS:
        got = []
        reader = fifo_reader(fifo, got)
        args = flagged(flag, fifo) + ["--", TRUE]
        refused(args, root_env(), "memtrace %s (another user's FIFO)" % " ".join(args),
                mention=("another user",))
        # Let the reader go: open for writing ourselves, send nothing.
        with open(fifo, "wb"):
            pass
        reader.join(10)
        check_eq(got, [b""], "what the FIFO's reader received")


@test("sudo_outputs.fifo_without_reader", needs=("memtrace", "bpf"))
def _fifo_without_reader():
    """A FIFO with no reader is a one-line error, not a wait in open()
    that SIGINT and SIGTERM cannot end."""
    d = fresh_dir("fifo-none")
    fifo = os.path.join(d, "report")
    os.mkfifo(fifo, 0o600)
    args = ["-o", fifo, "--", TRUE]
    # Found when the report is written (opening a FIFO to look would end
    # a reader's input): exit 1, the last line says why.
    res = mtlib.run_memtrace(args, env=root_env(), timeout=30)
    check_eq(res.rc, 1, "memtrace %s (no reader): exit status" % " ".join(args), res.stderr)
    last = mtlib.error_lines(res.stderr)[-1:]
    check(last and last[0].startswith("memtrace: ") and "no reader" in last[0],
          "memtrace %s (no reader): last line %r" % (" ".join(args), last))
    # With a reader, it is written in place.
    got = []
    reader = fifo_reader(fifo, got)
    res = mtlib.run_memtrace(args, env=root_env(), timeout=60)
    if res.rc != 0:
        with open(fifo, "wb"):
            pass
    reader.join(30)
    check_eq(res.rc, 0, "memtrace -o FIFO with a reader: exit status", res.stderr)
    check(got and got[0].startswith(b"memtrace "), "the FIFO's reader got %r" % (got[:1],))
