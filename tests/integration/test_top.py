"""memtrace top: the live view (src/loader/outputs/top.c) on top_grow.c.

  top.batch_exact   `memtrace top -b -p PID` on `top_grow steps`, driven a
      step at a time: the frame after each step shows the process's in use
      and its growth over the interval exactly (GROW_N x GROW_SIZE, then
      -FREE_N x GROW_SIZE), the frames between steps 0, the top stack by
      growth is grow_heap's; SIGINT then leaves the normal report after
      the frames
  top.sort_keys     `-- sh -c 'top_grow hold N & top_grow steady ...'`:
      --sort inuse puts the holder first, --sort growth and --sort alloc
      the grower, --sort peak the holder; --count stops after N frames
  top.terminal      on a pty: the alternate screen, keys g (sort by
      growth), j and Enter (the stacks of the selected process), q; the
      screen left, the terminal's settings as before, the report after
  top.terminal_sigterm  on a pty, SIGTERM: the same terminal restored,
      the report written
  top.terminal_ctrl_c  on a pty, Ctrl-C (a key in raw mode): the same, and
      the target not signalled
  top.terminal_gone  the pty hung up under the view: memtrace ends
  top.cmd_stdin     on a pty with -- CMD: CMD reads /dev/null, not the
      terminal whose keys are the view's
  top.bad_options   -b and --sort without top, a bad --sort: one line,
      status 2
"""

import os
import re
import select
import signal
import subprocess
import termios
import time

import mtlib
from mtlib import check, check_eq, test

SRC = "top_grow.c"
ALT_ON = b"\x1b[?1049h"
ALT_OFF = b"\x1b[?1049l"


def define(name):
    path = os.path.join(mtlib.ROOT, "tests", "progs", SRC)
    with open(path) as f:
        m = re.search(r"^#define %s (\d+)$" % name, f.read(), re.M)
    check(m is not None, "no #define %s in %s" % (name, SRC))
    return int(m.group(1))


def num(tok):
    check(tok.endswith("B"), "not a number of bytes (--unit B): %r" % tok)
    return int(tok[:-1])


def parse_frames(text):
    """The batch frames of TEXT: dicts with procs {pid: row} (rows in the
    table's order in 'order') and stacks [(growth, inuse, pid, names)]."""
    frames = []
    cur = None
    part = None
    for line in text.splitlines():
        if line.startswith("memtrace top - "):
            cur = {"head": line, "procs": {}, "order": [], "stacks": []}
            frames.append(cur)
            part = None
            continue
        if cur is None:
            continue
        if line.startswith("    PID COMM"):
            part = "procs"
            continue
        if line.strip().startswith("GROWTH ") and "STACK" in line:
            part = "stacks"
            continue
        if not line.strip():
            if part == "stacks":
                cur = None
            part = None
            continue
        if part == "procs":
            f = line.split()
            if len(f) < 7:
                continue
            row = {"pid": int(f[0]), "comm": f[1], "inuse": num(f[2]), "growth": num(f[3]),
                   "peak": num(f[5]), "alloc_s": num(f[6])}
            cur["procs"][row["pid"]] = row
            cur["order"].append(row["pid"])
        elif part == "stacks":
            f = line.split(None, 4)
            if len(f) == 5 and f[3].isdigit():
                cur["stacks"].append((num(f[0]), num(f[2]), int(f[3]), f[4]))
    return frames


def frame_count(lines):
    return sum(1 for l in lines if l.startswith("memtrace top - "))


@test("top.batch_exact")
def _batch_exact():
    grow = define("GROW_N") * define("GROW_SIZE")
    shrink = define("FREE_N") * define("GROW_SIZE")
    prog = mtlib.Bg([mtlib.prog_path("top_grow"), "steps"])
    mt = None
    try:
        line = prog.out.wait_for(lambda l: l.startswith("ready "), 30)
        check(line is not None, "top_grow did not say ready", prog.details())
        mt = mtlib.start_memtrace_pid(prog.pid, ["top", "-b", "-i", "0.5", "--unit", "B", "-n", "5"])
        for step in ("g", "f"):
            # After a frame, a step; then two frames more: the step's
            # frame and one with nothing new.
            seen = frame_count(mt.out.lines)
            check(mt.out.wait_for(lambda l: l.startswith("memtrace top - "), 30) is not None
                  or frame_count(mt.out.lines) > seen, "no frame", mt.details())
            prog.send(step + "\n")
            check(prog.out.wait_for(lambda l: l.startswith("ok"), 30) is not None,
                  "top_grow did not do step %s" % step, prog.details())
            for _ in range(2):
                check(mt.out.wait_for(lambda l: l.startswith("memtrace top - "), 30) is not None,
                      "no frame after step %s" % step, mt.details())
        mt.signal(signal.SIGINT)
        status = mt.wait(60)
        out = mt.out.text()
        check_eq(status, 0, "memtrace's exit status", mt.details())
        frames = [f for f in parse_frames(out) if prog.pid in f["procs"]]
        check(len(frames) >= 4, "fewer than 4 frames with the process", out)
        rows = [f["procs"][prog.pid] for f in frames]
        # In use goes 0 -> grow -> grow - shrink; each change exactly in
        # one frame's growth, the others 0; growth is the difference.
        want_levels = [0, grow, grow - shrink]
        levels = []
        prev = 0
        for r in rows:
            check_eq(r["growth"], r["inuse"] - prev, "growth = in use now - one frame ago", out)
            if not levels or levels[-1] != r["inuse"]:
                levels.append(r["inuse"])
            prev = r["inuse"]
        if levels[0] != 0:
            levels.insert(0, 0)
        check_eq(levels, want_levels, "the process's in use, frame after frame", out)
        check(any(r["growth"] == grow for r in rows), "no frame grew by %d" % grow, out)
        check(any(r["growth"] == -shrink for r in rows), "no frame shrank by %d" % shrink, out)
        check_eq(max(r["peak"] for r in rows), grow, "the peak", out)
        check_eq(rows[-1]["peak"], grow, "the peak after the free", out)
        # The frame that grew: its top stack is grow_heap's, by as much.
        fg = next(f for f in frames if f["procs"][prog.pid]["growth"] == grow)
        check(fg["stacks"], "no stacks in the frame that grew", out)
        g, inuse, pid, names = fg["stacks"][0]
        check_eq((g, inuse, pid), (grow, grow, prog.pid), "the top stack's growth, in use, pid", out)
        check(names.startswith("grow_heap < steps < main"), "the top stack is not grow_heap's: %r" % names, out)
        fs = next(f for f in frames if f["procs"][prog.pid]["growth"] == -shrink)
        st = [s for s in fs["stacks"] if s[3].startswith("grow_heap")]
        check(st and st[0][0] == -shrink and st[0][1] == grow - shrink,
              "grow_heap's stack after shrink_heap freed: %r" % st, out)
        # The normal report follows the frames.
        tail = out[out.rindex("memtrace top - "):]
        check("grow_heap" in tail.split("Top stacks by growth", 1)[1].split("\n\n", 1)[1],
              "no report after the last frame", out)
    finally:
        mtlib.kill_quietly(mt) if mt else None
        mtlib.kill_quietly(prog)


@test("top.sort_keys")
def _sort_keys():
    hold = 4000000
    prog = mtlib.prog_path("top_grow")
    script = '"$0" hold %d & "$0" steady 20000 25; wait' % hold
    firsts = {}
    for key in ("inuse", "growth", "alloc", "peak"):
        res = mtlib.run([mtlib.MEMTRACE, "top", "-b", "-i", "0.5", "--count", "4", "--unit", "B",
                         "--sort", key, "--", "sh", "-c", script, prog], timeout=120)
        check_eq(res.rc, 0, "exit status with --sort %s" % key, res.stderr)
        frames = parse_frames(res.stdout)
        check_eq(len(frames), 4, "frames with --count 4", res.stdout)
        # The last frame: both programs have started, the grower grows.
        f = frames[-1]
        holders = [p for p, r in f["procs"].items() if r["comm"] == "top_grow" and r["inuse"] >= hold]
        growers = [p for p, r in f["procs"].items() if r["comm"] == "top_grow" and r["inuse"] < hold
                   and r["growth"] > 0]
        check(len(holders) == 1 and len(growers) == 1,
              "not one holder and one grower in the last frame (--sort %s)" % key, res.stdout)
        firsts[key] = "holder" if f["order"][0] == holders[0] else \
                      "grower" if f["order"][0] == growers[0] else f["procs"][f["order"][0]]["comm"]
        if key == "growth":
            check(f["stacks"][0][3].startswith("grow_heap_steady"),
                  "the top stack by growth is not grow_heap_steady's", res.stdout)
    check_eq(firsts, {"inuse": "holder", "growth": "grower", "alloc": "grower", "peak": "holder"},
             "the first row for each --sort")


def read_until(fd, buf, pred, timeout):
    deadline = time.monotonic() + timeout
    while not pred(buf):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return pred(buf)
            if not data:
                return pred(buf)
            buf.extend(data)
    return True


def pty_run(args, drive):
    """memtrace ARGS with stdin, stdout and stderr a pty; DRIVE(master,
    buf, proc) sends keys; returns (status, output, modes before, after)."""
    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    buf = bytearray()
    p = subprocess.Popen([mtlib.MEMTRACE] + args, stdin=slave, stdout=slave, stderr=slave,
                         close_fds=True)
    try:
        drive(master, buf, p)
        for _ in range(600):
            if p.poll() is not None:
                break
            read_until(master, buf, lambda b: False, 0.1)
        status = p.poll()
        read_until(master, buf, lambda b: False, 0.3)
        after = termios.tcgetattr(slave)
        return status, bytes(buf), before, after
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
        os.close(slave)


def grow_step(prog, master, buf):
    """Once memtrace draws, top_grow grows; returns after a frame shows it."""
    ok = read_until(master, buf, lambda b: b.count(b"memtrace top - ") >= 1, 60)
    check(ok, "no frame on the terminal", bytes(buf).decode("utf-8", "replace")[-2000:])
    prog.send("g\n")
    check(prog.out.wait_for(lambda l: l.startswith("ok"), 30) is not None,
          "top_grow did not grow", prog.details())
    n = buf.count(b"memtrace top - ")
    ok = read_until(master, buf, lambda b: b.count(b"memtrace top - ") >= n + 2, 30)
    check(ok, "no frame after the growth", bytes(buf).decode("utf-8", "replace")[-2000:])


def check_restored(status, out, before, after):
    text = out.decode("utf-8", "replace")
    check_eq(status, 0, "memtrace's exit status", text[-3000:])
    check(ALT_ON in out, "the alternate screen was never used", text[-3000:])
    check(out.rindex(ALT_OFF) > out.rindex(ALT_ON), "the alternate screen was not left", text[-3000:])
    check_eq(after[3] & (termios.ECHO | termios.ICANON | termios.ISIG),
             before[3] & (termios.ECHO | termios.ICANON | termios.ISIG),
             "the terminal's ECHO, ICANON, ISIG after memtrace")
    check_eq(after, before, "the terminal's settings after memtrace")
    report = out[out.rindex(ALT_OFF):].decode("utf-8", "replace")
    check("grow_heap" in report, "no report after the view", report[-3000:])
    return report


@test("top.terminal")
def _terminal():
    prog = mtlib.Bg([mtlib.prog_path("top_grow"), "steps"])
    try:
        check(prog.out.wait_for(lambda l: l.startswith("ready "), 30) is not None,
              "top_grow did not say ready", prog.details())
        seen = {}

        def drive(master, buf, p):
            grow_step(prog, master, buf)
            os.write(master, b"g")
            ok = read_until(master, buf, lambda b: b"sorted by growth" in b, 10)
            check(ok, "g did not sort by growth", bytes(buf).decode("utf-8", "replace")[-2000:])
            os.write(master, b"j\r")
            ok = read_until(master, buf, lambda b: b"Top stacks by growth, pid %d" % prog.pid in b, 10)
            check(ok, "Enter did not focus on the selected process",
                  bytes(buf).decode("utf-8", "replace")[-2000:])
            seen["reverse"] = b"\x1b[7m" in buf
            os.write(master, b"q")

        status, out, before, after = pty_run(["top", "-i", "0.3", "-p", str(prog.pid)], drive)
        check(seen.get("reverse"), "no row highlighted")
        check_restored(status, out, before, after)
    finally:
        mtlib.kill_quietly(prog)


@test("top.terminal_sigterm")
def _terminal_sigterm():
    prog = mtlib.Bg([mtlib.prog_path("top_grow"), "steps"])
    try:
        check(prog.out.wait_for(lambda l: l.startswith("ready "), 30) is not None,
              "top_grow did not say ready", prog.details())

        def drive(master, buf, p):
            grow_step(prog, master, buf)
            p.send_signal(signal.SIGTERM)

        status, out, before, after = pty_run(["top", "-i", "0.3", "-p", str(prog.pid)], drive)
        check_restored(status, out, before, after)
    finally:
        mtlib.kill_quietly(prog)


@test("top.terminal_ctrl_c")
def _terminal_ctrl_c():
    prog = mtlib.Bg([mtlib.prog_path("top_grow"), "steps"])
    try:
        check(prog.out.wait_for(lambda l: l.startswith("ready "), 30) is not None,
              "top_grow did not say ready", prog.details())

        def drive(master, buf, p):
            grow_step(prog, master, buf)
            os.write(master, b"\x03")  # Ctrl-C: a key in the view's raw mode

        status, out, before, after = pty_run(["top", "-i", "0.3", "-p", str(prog.pid)], drive)
        check_restored(status, out, before, after)
        check(prog.alive(), "Ctrl-C in the view reached the target")
    finally:
        mtlib.kill_quietly(prog)


@test("top.cmd_stdin")
def _cmd_stdin():
    # With -- CMD, the keys are the view's: CMD reads /dev/null.
    script = 'if [ -t 0 ]; then echo "CMD-STDIN: terminal"; else echo "CMD-STDIN: other"; fi; ' \
             'read x; echo "CMD-READ: [$x]"; "$0" hold 1000 2>/dev/null'

    def drive(master, buf, p):
        ok = read_until(master, buf, lambda b: b"CMD-READ" in b and b.count(b"memtrace top - ") >= 1, 60)
        check(ok, "no frame, or CMD did not read", bytes(buf).decode("utf-8", "replace")[-2000:])
        os.write(master, b"q")

    status, out, before, after = pty_run(["top", "-i", "0.3", "--", "sh", "-c", script,
                                          mtlib.prog_path("top_grow")], drive)
    text = out.decode("utf-8", "replace")
    check("CMD-STDIN: other" in text and "CMD-READ: []" in text,
          "CMD read the terminal under the view", text[-3000:])
    check(out.rindex(ALT_OFF) > out.rindex(ALT_ON), "the alternate screen was not left", text[-3000:])
    check_eq(after, before, "the terminal's settings after memtrace")


@test("top.terminal_gone")
def _terminal_gone():
    # The terminal hung up (its master closed): no more keys can come and
    # nothing can be seen; the view ends rather than polling for ever.
    prog = mtlib.Bg([mtlib.prog_path("top_grow"), "steps"])
    master = slave = -1
    p = None
    try:
        check(prog.out.wait_for(lambda l: l.startswith("ready "), 30) is not None,
              "top_grow did not say ready", prog.details())
        master, slave = os.openpty()
        err = os.path.join(mtlib.TMPDIR, "top.terminal_gone.stderr")
        with open(err, "w") as ef:
            p = subprocess.Popen([mtlib.MEMTRACE, "top", "-i", "0.3", "-p", str(prog.pid)],
                                 stdin=slave, stdout=slave, stderr=ef, close_fds=True)
        buf = bytearray()
        ok = read_until(master, buf, lambda b: b.count(b"memtrace top - ") >= 1, 60)
        check(ok, "no frame on the terminal", bytes(buf).decode("utf-8", "replace")[-2000:])
        os.close(slave)
        slave = -1
        os.close(master)
        master = -1
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            raise mtlib.Fail("memtrace top still runs 30 s after its terminal hung up")
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()
        for fd in (master, slave):
            if fd >= 0:
                os.close(fd)
        mtlib.kill_quietly(prog)


@test("top.bad_options", needs=("memtrace",))
def _bad():
    for args, mention in ((["-b", "--", "true"], ("top",)),
                          (["--sort", "growth", "--", "true"], ("top",)),
                          (["top", "--sort", "size", "--", "true"], ("--sort",))):
        res = mtlib.run([mtlib.MEMTRACE] + args)
        check_eq(res.rc, 2, "exit status of memtrace %s" % " ".join(args), res.stderr)
        mtlib.check_one_line_error(res, " ".join(args), mention)
