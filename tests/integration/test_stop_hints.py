"""How memtrace says to stop it, and what it says when its reader is gone.

  stop_hints.pipeline_in_terminal  `memtrace -p PID --folded | cat > F` in a
      terminal (a pty): one hint, the key (q or Enter), and no "Ctrl-C"
      (it would stop cat too, before the report reaches it); the key gives
      the whole report
  stop_hints.pipe_without_terminal  stdout a pipe, stdin not a terminal: the
      hint is a SIGINT to memtrace alone, not Ctrl-C
  stop_hints.reader_gone  the reader of the pipe exits before the report:
      one clear line saying so (not "Broken pipe"), exit status 1
"""

import os

import mtlib
from mtlib import check, check_eq, test
from test_cli import wait_child, wait_file


def hint_lines(stderr):
    return [l for l in stderr.splitlines() if "to stop" in l or "q or Enter" in l or "Ctrl-C" in l]


@test("stop_hints.pipeline_in_terminal")
def _pty():
    import pty
    w = mtlib.start_waiter()
    d = os.path.join(mtlib.TMPDIR, "stop_hints.pty")
    os.makedirs(d, exist_ok=True)
    err, out = os.path.join(d, "stderr"), os.path.join(d, "out.folded")
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execv("/bin/sh", ["sh", "-c", '"$0" --folded -p "$1" 2>"$2" | cat > "$3"',
                                 mtlib.MEMTRACE, str(w.pid), err, out])
        finally:
            os._exit(127)
    try:
        check(wait_file(err, "memtrace: tracing", 60), "memtrace did not start tracing",
              open(err).read() if os.path.exists(err) else "")
        w.send("go\n")
        check(w.out.wait_for(lambda l: l.startswith("done"), 30) is not None, "waiter did not finish")
        os.write(master, b"q")
        status = wait_child(pid, 30)
        pid = 0
        with open(err) as f:
            stderr = f.read()
        check_eq(status, 0, "the pipeline's exit status", stderr)
        hints = hint_lines(stderr)
        check_eq(len(hints), 1, "lines saying how to stop", stderr)
        check("q or Enter" in hints[0], "the hint is not the key: %r" % hints[0], stderr)
        check("Ctrl-C" not in stderr, "Ctrl-C suggested where it would stop the pipeline's reader", stderr)
        check(os.path.getsize(out) > 0, "the pipe's reader got no report", stderr)
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(master)
        mtlib.kill_quietly(w)


@test("stop_hints.pipe_without_terminal")
def _pipe():
    res = mtlib.run(["sh", "-c", '"$0" --folded -- "$1" | cat > /dev/null', mtlib.MEMTRACE,
                     mtlib.prog_path("leaks")])
    hints = hint_lines(res.stderr)
    check_eq(len(hints), 1, "lines saying how to stop", res.stderr)
    check("kill -INT" in hints[0], "the hint is not a SIGINT to memtrace alone: %r" % hints[0], res.stderr)
    check("Ctrl-C to stop" not in res.stderr, "'Ctrl-C to stop' with standard output a pipe", res.stderr)


@test("stop_hints.reader_gone")
def _epipe():
    res = mtlib.run(["sh", "-c", '"$0" --folded -- "$1" | true; exit "${PIPESTATUS:-0}"', mtlib.MEMTRACE,
                     mtlib.prog_path("leaks")])
    errs = [l for l in mtlib.error_lines(res.stderr) if not l.startswith("memtrace: tracing")]
    check_eq(len(errs), 1, "error lines when the reader is gone", res.stderr)
    check("Broken pipe" not in errs[0] and "reading standard output has exited" in errs[0],
          "the message does not say the reader exited: %r" % errs[0], res.stderr)
