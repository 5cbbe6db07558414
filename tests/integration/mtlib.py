"""mtlib: the integration-test harness of memtrace (python3 stdlib only).

  run_memtrace(args)        run ./memtrace, time-limited
  trace(prog, metric, ...)  memtrace -- build/tests/progs/PROG, report parsed
  parse_report(text)        header, table rows and stacks of a text report
  valgrind(prog)            valgrind's "total heap usage" / "in use at exit"
  parse_raw(text, details)  the stacks of a --raw report: ips and frames
  marker_line(src, marker)  line of the /* MARKER */ comment in a program
  @test(name, ...)          register a test; run.py runs them and prints
                            PASS name / FAIL name: reason / SKIP name: reason

Environment:
  MEMTRACE               the binary to test (default: ./memtrace at the root)
  MEMTRACE_REQUIRE_BPF   set: a test that cannot run for lack of BPF fails
  MEMTRACE_TEST_TIMEOUT  seconds allowed to one memtrace/valgrind run (120)
  MEMTRACE_UNWIND_CACHE  set here for every run: a private unwind table cache
"""

import atexit
import collections
import functools
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGS_SRC = os.path.join(ROOT, "tests", "progs")
PROGS_BIN = os.path.join(ROOT, "build", "tests", "progs")
MEMTRACE = os.environ.get("MEMTRACE") or os.path.join(ROOT, "memtrace")
TIMEOUT = float(os.environ.get("MEMTRACE_TEST_TIMEOUT") or 120)


def _version():
    """VERSION of the top Makefile (what memtrace -V and reports say)."""
    try:
        with open(os.path.join(ROOT, "Makefile")) as f:
            for line in f:
                m = re.match(r"^VERSION\s*:?=\s*(\S+)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return "0.1.0"


VERSION = _version()

# Files of this run (reports written with -o) live here, removed at exit.
TMPDIR = tempfile.mkdtemp(prefix="memtrace-tests.")
atexit.register(shutil.rmtree, TMPDIR, True)

# Every memtrace of this run keeps its unwind tables in a cache of the
# run's own (MEMTRACE_UNWIND_CACHE, doc/usage.md): the machine's cache is
# neither read (a table there cannot change a result) nor written.
os.environ["MEMTRACE_UNWIND_CACHE"] = os.path.join(TMPDIR, "unwind-cache")


# ---------------------------------------------------------------- outcomes

class Skip(Exception):
    """The test cannot run here (reason in the message)."""


class Fail(AssertionError):
    """The test ran and found something wrong (reason in the message)."""

    def __init__(self, reason, details=None):
        super().__init__(reason)
        self.details = details or ""


def check(cond, reason, details=None):
    if not cond:
        raise Fail(reason, details)


def check_eq(got, want, what, details=None):
    if got != want:
        raise Fail("%s: expected %r, got %r" % (what, want, got), details)


# ---------------------------------------------------------------- registry

Test = collections.namedtuple("Test", "name func needs")
TESTS = []


def test(name, needs=("memtrace", "bpf")):
    """Register a test.  needs: what it cannot do without, among
    "memtrace" (the binary is built), "bpf" (root and kernel BTF), "root",
    "valgrind"."""

    def deco(func):
        TESTS.append(Test(name, func, tuple(needs)))
        return func

    return deco


def bpf_problem():
    """Why BPF programs cannot be loaded here, or None."""
    if os.geteuid() != 0:
        return "not root (memtrace needs CAP_BPF and CAP_PERFMON)"
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        return "no kernel BTF (/sys/kernel/btf/vmlinux is missing)"
    return None


def require_bpf():
    return bool(os.environ.get("MEMTRACE_REQUIRE_BPF"))


def missing(needs):
    """(kind, reason) for the first unmet need, or None.  kind is "skip"
    or "fail"."""
    for need in needs:
        if need == "memtrace" and not os.access(MEMTRACE, os.X_OK):
            return ("fail", "%s is not built (make memtrace)" % MEMTRACE)
        if need == "bpf":
            why = bpf_problem()
            if why:
                return ("fail" if require_bpf() else "skip", "BPF unavailable: " + why)
        if need == "root" and os.geteuid() != 0:
            return ("fail" if require_bpf() else "skip", "needs root")
        if need == "valgrind" and not which("valgrind"):
            return ("fail", "valgrind is not installed (scripts/install-deps.sh)")
    return None


def which(cmd):
    for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        p = os.path.join(d, cmd)
        if os.access(p, os.X_OK):
            return p
    return None


# ---------------------------------------------------------------- programs

def prog_path(name):
    path = os.path.join(PROGS_BIN, name)
    if not os.access(path, os.X_OK):
        raise Fail("%s is not built (make tests-progs)" % path)
    return path


@functools.lru_cache(maxsize=None)
def _source_lines(src):
    with open(os.path.join(PROGS_SRC, src), encoding="utf-8") as f:
        return f.read().splitlines()


def marker_line(src, marker):
    """Line number (1-based) of the unique line of tests/progs/SRC that
    holds the comment /* MARKER */."""
    tag = "/* %s */" % marker
    hits = [i + 1 for i, line in enumerate(_source_lines(src)) if tag in line]
    if len(hits) != 1:
        raise Fail("marker %s found %d times in %s" % (tag, len(hits), src))
    return hits[0]


# ---------------------------------------------------------------- processes

Result = collections.namedtuple("Result", "rc stdout stderr argv")


def run(argv, timeout=None, stdin=subprocess.DEVNULL, input_text=None, env=None):
    """Run argv to completion (killed after timeout seconds)."""
    timeout = timeout or TIMEOUT
    kw = {"input": input_text} if input_text is not None else {"stdin": stdin}
    try:
        p = subprocess.run(argv, **kw,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env, text=True, errors="replace")
    except subprocess.TimeoutExpired as e:
        raise Fail("timed out after %gs: %s" % (timeout, " ".join(argv)),
                   tail(_text(e.stderr)))
    return Result(p.returncode, p.stdout, p.stderr, argv)


def build_fresh(pieces):
    """Build each (PATH, C_TEXT, EXTRA_FLAGS) of PIECES with gcc -O2 -g,
    without frame pointers and with a build id: programs and libraries
    made in a test, so their files (and build ids) are new to memtrace
    and its table cache.  PATH.c is written beside PATH."""
    for path, text, extra in pieces:
        with open(path + ".c", "w", encoding="utf-8") as f:
            f.write(text)
        res = run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-Wl,--build-id", "-o", path,
                   path + ".c"] + list(extra))
        check_eq(res.rc, 0, "gcc %s.c" % os.path.basename(path), res.stderr)


def _text(b):
    if b is None:
        return ""
    if isinstance(b, bytes):
        return b.decode("utf-8", "replace")
    return b


def tail(text, n=15):
    lines = (text or "").rstrip("\n").splitlines()
    return "\n".join(lines[-n:])


def run_memtrace(args, **kw):
    return run([MEMTRACE] + list(args), **kw)


def error_lines(stderr):
    return [l for l in stderr.splitlines() if l.strip()]


def check_one_line_error(res, what, mention=None):
    """memtrace failed as the contract says: non-zero exit status and one
    line on stderr beginning "memtrace: " (optionally mentioning one of the
    words in mention)."""
    lines = error_lines(res.stderr)
    details = "command: %s\nexit status: %s\nstderr:\n%s\nstdout:\n%s" % (
        " ".join(res.argv), res.rc, tail(res.stderr), tail(res.stdout, 5))
    check(res.rc != 0, "%s: exit status 0, expected non-zero" % what, details)
    check(res.rc > 0, "%s: memtrace died of signal %d" % (what, -res.rc), details)
    check(len(lines) == 1, "%s: expected one line on stderr, got %d" % (what, len(lines)), details)
    check(lines[0].startswith("memtrace: "),
          "%s: stderr does not begin with 'memtrace: ': %r" % (what, lines[0]), details)
    if mention:
        low = lines[0].lower()
        check(any(m.lower() in low for m in mention),
              "%s: message does not mention any of %s: %r" % (what, "/".join(mention), lines[0]),
              details)
    return lines[0]


class LineReader:
    """Reads a pipe line by line in a thread, so that a test can wait for
    one line with a time limit and still get the whole text later."""

    def __init__(self, pipe):
        self.q = queue.Queue()
        self.lines = []
        self.t = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self.t.start()

    def _run(self, pipe):
        for line in iter(pipe.readline, ""):
            self.lines.append(line)
            self.q.put(line)
        self.q.put(None)

    def wait_for(self, pred, timeout):
        """First line for which pred(line) is true; None at EOF/timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                self.q.put(None)
                return None
            if pred(line):
                return line

    def text(self, join_timeout=5):
        self.t.join(join_timeout)
        return "".join(self.lines)


class Bg:
    """A process started in the background with its stdout and stderr read
    by LineReaders (stdin a pipe unless stdin= is given)."""

    def __init__(self, argv, stdin=subprocess.PIPE, env=None):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, errors="replace",
                                  bufsize=1, env=env)
        self.out = LineReader(self.p.stdout)
        self.err = LineReader(self.p.stderr)

    @property
    def pid(self):
        return self.p.pid

    def send(self, text):
        self.p.stdin.write(text)
        self.p.stdin.flush()

    def alive(self):
        return self.p.poll() is None

    def wait(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def signal(self, sig):
        if self.alive():
            self.p.send_signal(sig)

    def kill(self):
        if self.alive():
            self.p.kill()
            self.p.wait(10)

    def details(self):
        return "command: %s\nexit status: %s\nstderr:\n%s" % (
            " ".join(self.argv), self.p.returncode, tail(self.err.text(1)))


def start_memtrace_pid(pid, args=(), ready_timeout=60):
    """memtrace -p PID in the background; returns once it has printed
    "memtrace: tracing" (the probes are attached)."""
    mt = Bg([MEMTRACE] + list(args) + ["-p", str(pid)], stdin=subprocess.DEVNULL)
    line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), ready_timeout)
    if line is None:
        if mt.alive():
            mt.kill()
            raise Fail("memtrace -p %d did not print 'memtrace: tracing' within %ds"
                       % (pid, ready_timeout), mt.details())
        mt.wait(10)
        raise Fail("memtrace -p %d exited with status %s before tracing"
                   % (pid, mt.p.returncode), mt.details())
    return mt


def start_waiter():
    """build/tests/progs/waiter, once it has said "ready PID"."""
    w = Bg([prog_path("waiter")])
    line = w.out.wait_for(lambda l: l.startswith("ready "), 30)
    if line is None:
        w.kill()
        raise Fail("waiter did not say ready", w.details())
    check_eq(int(line.split()[1]), w.pid, "pid printed by waiter")
    return w


def free_pid():
    """A pid that no process or thread has now."""
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            pid_max = int(f.read())
    except OSError:
        pid_max = 32768
    for pid in range(pid_max - 1, 300, -1):
        if not os.path.exists("/proc/%d" % pid):
            return pid
    raise Fail("no free pid")


# ---------------------------------------------------------------- reports

Row = collections.namedtuple("Row", "flat flat_pct sum_pct cum cum_pct function file line")
SFrame = collections.namedtuple("SFrame", "function file line inlined")
SStack = collections.namedtuple("SStack", "value objects frames head")


class Report:
    def __init__(self, text):
        self.text = text
        self.version = None
        self.header = {}     # raw "key: value" lines of the header
        self.target_pid = None
        self.target_comm = None
        self.started = 0         # -- CMD: processes it started (followed)
        self.allocator = None
        self.duration = None
        self.inuse = None        # (bytes, objects)
        self.allocated = None
        self.freed = None
        self.events = None       # (calls, failed)
        self.untracked = None    # None when sampling (-s)
        self.sampling = None     # -s: (mean bytes, allocations sampled or None)
        self.drops = None        # (total, {name: n})
        self.peak = None         # (bytes, seconds); None: not recorded
        self.title = None        # "Showing top ..." line
        self.shown = None        # (N shown at most, M functions)
        self.rows = []
        self.stacks_title = None
        self.stacks = []
        # The size histogram: {"[64,128)": (objects, bytes)} of the classes
        # shown, NOT_RECORDED, or None when the report has no such section;
        # mmap_sizes the same for --mmap's.
        self.sizes = None
        self.mmap_sizes = None

    def row(self, function):
        """The table row of function (C++ names match without their
        parameter list), or None."""
        for r in self.rows:
            if same_function(r.function, function):
                return r
        return None


def same_function(got, want):
    if got == want:
        return True
    return got.startswith(want + "(") and got.endswith(")")


VALUE_RE = re.compile(r"^(-?\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB)?$")
UNIT = {None: 1, "B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}


def parse_value(tok):
    m = VALUE_RE.match(tok)
    if not m:
        raise ValueError("not a value: %r" % tok)
    v = float(m.group(1)) * UNIT[m.group(2)]
    return int(v) if v == int(v) else v


def parse_pct(tok):
    if not tok.endswith("%"):
        raise ValueError("not a percentage: %r" % tok)
    return float(tok[:-1])


LOC_RE = re.compile(r"^(\S+):(\d+)$")


def parse_location(text):
    """'function [file:line] [(inlined)]' -> SFrame."""
    s = text.strip()
    inlined = False
    if s.endswith("(inlined)"):
        inlined = True
        s = s[: -len("(inlined)")].rstrip()
    parts = s.rsplit(None, 1)
    if len(parts) == 2:
        m = LOC_RE.match(parts[1])
        if m:
            return SFrame(parts[0].strip(), m.group(1), int(m.group(2)), inlined)
    return SFrame(s, None, None, inlined)


NOT_RECORDED = "not recorded"


def parse_report(text):
    """Parse a text report; raises Fail when its layout is not the one of
    the contract."""
    rep = Report(text)
    lines = text.splitlines()
    details = tail(text, 40)
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    check(i < len(lines), "empty report")
    m = re.match(r"^memtrace (\S+) heap profile$", lines[i])
    check(m, "first line of report is not 'memtrace VERSION heap profile': %r" % lines[i], details)
    rep.version = m.group(1)
    i += 1
    while i < len(lines) and lines[i].strip():
        key, sep, val = lines[i].partition(": ")
        check(sep, "header line without 'key: value': %r" % lines[i], details)
        rep.header[key.strip()] = val.strip()
        i += 1
    h = rep.header

    def need(key, regex):
        check(key in h, "report header has no '%s:' line" % key, details)
        mm = re.match(regex, h[key])
        check(mm, "report header line '%s: %s' does not match %s" % (key, h[key], regex), details)
        return mm

    # report --base: "TARGET less base FILE".
    mm = need("target", r"^(?:pid (\d+) \((.*?)\)(?: and (\d+) process(?:es)? it started)?|"
                        r"system-wide, \d+ processes|profile .+)(?: less base .+)?$")
    rep.target = h["target"]
    if mm.group(1):
        rep.target_pid, rep.target_comm = int(mm.group(1)), mm.group(2)
        rep.started = int(mm.group(3) or 0)  # -- CMD: processes it started
    # A saved profile may lack facts: "not recorded" reads as None.
    def recorded(key):
        return h.get(key) != NOT_RECORDED

    rep.allocator = need("allocator", r"^(.+)$").group(1) if recorded("allocator") else None
    rep.duration = float(need("duration", r"^(\d+(?:\.\d+)?) s$").group(1)) if recorded("duration") else None
    for key, attr in (("in use", "inuse"), ("allocated", "allocated"), ("freed", "freed")):
        # A difference (--base, --growth) may be negative.
        mm = need(key, r"^(-?\d+) bytes in (-?\d+) objects")
        setattr(rep, attr, (int(mm.group(1)), int(mm.group(2))))
    # The timeline's peak: "B bytes at T s (U)[, pid ...]" or not recorded.
    if recorded("peak in use"):
        mm = need("peak in use", r"^(\d+) bytes at (\d+(?:\.\d+)?) s \(")
        rep.peak = (int(mm.group(1)), float(mm.group(2)))
    rep.events = rep.untracked = rep.drops = None
    if recorded("events"):
        mm = need("events", r"^(\d+) allocator calls, (\d+) failed$")
        rep.events = (int(mm.group(1)), int(mm.group(2)))
    # Sampling (-s): a "sampling:" line, and no "untracked frees:" one.
    rep.sampling = None
    if "sampling" in h:
        mm = need("sampling", r"^one allocation per (\d+) bytes on average \(Poisson\); "
                              r"(?:(\d+) allocations sampled; )?figures are estimates$")
        rep.sampling = (int(mm.group(1)), int(mm.group(2)) if mm.group(2) else None)
        check("untracked frees" not in h, "a sampled report has an 'untracked frees:' line", details)
        rep.untracked = None
    elif recorded("untracked frees"):
        rep.untracked = int(need("untracked frees", r"^(\d+)$").group(1))
    else:
        check(rep.events is None, "untracked frees not recorded, events are", details)
    if recorded("drops"):
        mm = need("drops", r"^(\d+) \((.*)\)$")
        parts = {}
        for part in mm.group(2).split(","):
            pm = re.match(r"^\s*(.*\S)\s+(\d+)\s*$", part)
            check(pm, "cannot parse drops part %r" % part, details)
            parts[pm.group(1)] = int(pm.group(2))
        rep.drops = (int(mm.group(1)), parts)
    else:
        check(rep.events is None, "drops not recorded, events are", details)

    # The table.
    while i < len(lines) and not lines[i].strip():
        i += 1
    # Per-process totals and peaks, shown when several processes were traced.
    for section in ("Processes by", "Peak in use by process"):
        if i < len(lines) and lines[i].startswith(section):
            while i < len(lines) and lines[i].strip():
                i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
    if i < len(lines) and lines[i].startswith("Showing"):
        rep.title = lines[i]
        mm = re.match(r"^Showing top (\d+) of (\d+) functions", lines[i])
        check(mm, "cannot parse table title %r" % lines[i], details)
        rep.shown = (int(mm.group(1)), int(mm.group(2)))
        i += 1
        check(i < len(lines) and lines[i].split()[:5] == ["flat", "flat%", "sum%", "cum", "cum%"],
              "no column header after the table title", details)
        i += 1
        while i < len(lines) and lines[i].strip():
            toks = lines[i].split()
            try:
                check(len(toks) >= 6, "short table row")
                loc = parse_location(" ".join(toks[5:]))
                rep.rows.append(Row(parse_value(toks[0]), parse_pct(toks[1]), parse_pct(toks[2]),
                                    parse_value(toks[3]), parse_pct(toks[4]),
                                    loc.function, loc.file, loc.line))
            except (ValueError, Fail) as e:
                raise Fail("cannot parse table row %r (%s)" % (lines[i], e), details)
            i += 1

    # The stacks.
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and lines[i].startswith("Top"):
        rep.stacks_title = lines[i]
        i += 1
        cur = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if line.startswith("#"):
                mm = re.match(r"^#\d+\s+(\S+)(?:\s+in\s+(\d+)\s+objects?)?", line)
                check(mm, "cannot parse stack line %r" % line, details)
                try:
                    value = parse_value(mm.group(1))
                except ValueError:
                    raise Fail("cannot parse stack value in %r" % line, details)
                objs = int(mm.group(2)) if mm.group(2) else None
                cur = SStack(value, objs, [], line)
                rep.stacks.append(cur)
            elif line[:1].isspace() and cur is not None:
                cur.frames.append(parse_location(line))
            else:
                break
            i += 1

    # The size histograms.
    for title, attr in (("Allocated by size class", "sizes"), ("Mapped by size class (--mmap)", "mmap_sizes")):
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines) or not lines[i].startswith(title + ":"):
            continue
        rest = lines[i][len(title) + 1:].strip()
        i += 1
        if rest in (NOT_RECORDED, "none"):
            setattr(rep, attr, NOT_RECORDED if rest == NOT_RECORDED else {})
            continue
        check(rest == "", "cannot parse size histogram title %r" % lines[i - 1], details)
        check(i < len(lines) and lines[i].split() == ["size", "objects", "bytes", "share"],
              "no column header after %r" % title, details)
        i += 1
        classes = {}
        while i < len(lines) and re.match(r"^\s+\[", lines[i]):
            toks = lines[i].split()
            try:
                check(len(toks) in (4, 5), "size class row of %d fields" % len(toks))
                classes[toks[0]] = (int(toks[1]), parse_value(toks[2]))
                parse_pct(toks[3])
            except (ValueError, Fail) as e:
                raise Fail("cannot parse size class row %r (%s)" % (lines[i], e), details)
            i += 1
        setattr(rep, attr, classes)
    return rep


def size_class(size):
    """The size histogram's class of SIZE, as the report labels it: its
    bit length (0 for 0), at most that of 2^30 (1 GiB and more)."""
    k = min(size.bit_length(), 31)
    lo = (1 << (k - 1)) if k else 0

    def name(v):
        for suffix in ("", "K", "M", "G"):
            if v < 1024 or v % 1024:
                return "%d%s" % (v, suffix)
            v //= 1024
        return "%dT" % v

    return "[%s,%s)" % (name(lo), "inf" if k == 31 else name(1 << k))


def size_histogram(sizes):
    """{class: (objects, bytes)} of the allocations of these sizes."""
    h = {}
    for n in sizes:
        o, b = h.get(size_class(n), (0, 0))
        h[size_class(n)] = (o + 1, b + n)
    return h


# ---------------------------------------------------------------- --raw

RawStack = collections.namedtuple("RawStack", "pid alloc_bytes alloc_objects inuse_bytes inuse_objects ips frames")
# offset: the address in the module's file (its link-time address), None
# for an address in no mapped file.
Ip = collections.namedtuple("Ip", "addr module offset")
RawFrame = collections.namedtuple("RawFrame", "function location inlined")

_RAW_STACK = re.compile(r"^stack \d+ id 0x[0-9a-f]+ pid (\d+): allocated (\d+) bytes in (\d+) objects, "
                        r"freed (\d+) bytes in (\d+) objects")
_RAW_IP = re.compile(r"^\s+ip #(\d+)\s+0x([0-9a-f]+)\s+(\S+(?: module\])?)$")
_RAW_FRAME = re.compile(r"^\s+frame #(\d+)\s+(\S+)(?:\s+(\S+?))?(\s+\(inlined\))?$")


def parse_raw(text, details):
    """The stacks of a --raw report, in order."""
    stacks, cur = [], None
    for line in text.splitlines():
        m = _RAW_STACK.match(line)
        if m:
            pid, ab, ao, fb, fo = (int(g) for g in m.groups())
            cur = RawStack(pid, ab, ao, ab - fb, ao - fo, [], [])
            stacks.append(cur)
            continue
        m = _RAW_IP.match(line)
        if m and cur is not None:
            check_eq(int(m.group(1)), len(cur.ips), "ip number", details)
            om = re.match(r"^(.*)\+0x([0-9a-f]+)$", m.group(3))
            if om:
                cur.ips.append(Ip(int(m.group(2), 16), om.group(1), int(om.group(2), 16)))
            else:
                cur.ips.append(Ip(int(m.group(2), 16), m.group(3), None))
            continue
        m = _RAW_FRAME.match(line)
        if m and cur is not None:
            cur.frames.append(RawFrame(m.group(2), m.group(3) or "", bool(m.group(4))))
    return stacks


# ---------------------------------------------------------------- tracing

@functools.lru_cache(maxsize=None)
def trace(prog, metric="inuse_space", cum=False, top=100, unit="B", extra=()):
    """memtrace --unit B -n TOP --metric METRIC [--cum] -o FILE -- PROG.
    Returns (Result, Report).  Cached: a test may reuse another's run."""
    path = prog_path(prog)
    out = os.path.join(TMPDIR, "%s.%s%s.%d.txt" % (prog, metric, ".cum" if cum else "", top))
    if os.path.exists(out):
        os.unlink(out)
    args = ["--unit", unit, "-n", str(top), "--metric", metric, "-o", out]
    if cum:
        args.append("--cum")
    args += list(extra)
    res = run_memtrace(args + ["--", path])
    details = "command: %s\nexit status: %s\nstderr:\n%s" % (" ".join(res.argv), res.rc, tail(res.stderr))
    check(res.rc >= 0, "memtrace died of signal %d" % (-res.rc if res.rc < 0 else 0), details)
    check(os.path.exists(out), "memtrace wrote no report to %s (exit status %d)" % (out, res.rc), details)
    with open(out, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return res, parse_report(text)


# ---------------------------------------------------------------- valgrind

Valgrind = collections.namedtuple("Valgrind", "allocs frees bytes inuse_bytes inuse_blocks rc stderr")


def _num(s):
    return int(s.replace(",", ""))


@functools.lru_cache(maxsize=None)
def valgrind(prog, input_text=None):
    """valgrind --run-libc-freeres=no --run-cxx-freeres=no PROG: its heap
    summary (stdout is a pipe, as in memtrace runs)."""
    if not which("valgrind"):
        raise Fail("valgrind is not installed")
    argv = ["valgrind", "--run-libc-freeres=no", "--run-cxx-freeres=no", prog_path(prog)]
    res = run(argv, input_text=input_text)
    err = res.stderr
    m1 = re.search(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", err)
    m2 = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated", err)
    check(m1 and m2, "no heap summary in valgrind's output", tail(err))
    return Valgrind(_num(m2.group(1)), _num(m2.group(2)), _num(m2.group(3)),
                    _num(m1.group(1)), _num(m1.group(2)), res.rc, err)


def kill_quietly(bg):
    try:
        bg.kill()
    except Exception:  # noqa: BLE001 - cleanup must not hide the real failure
        pass



def system_wide(args, work, env=None, settle=0, timeout=60):
    """A system-wide memtrace ARGS while WORK(mt) runs: started, waited for
    until it traces, stopped by SIGINT SETTLE seconds after WORK returns
    (the stacks copied meanwhile unwound), and always killed if left
    running (it would disturb every other test).  Returns its Bg, done."""
    mt = Bg([MEMTRACE] + list(args), stdin=subprocess.DEVNULL, env=env)
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60)
        check(line is not None, "system-wide memtrace did not start tracing", mt.details())
        work(mt)
        time.sleep(settle)
        mt.signal(2)  # SIGINT: the report
        check_eq(mt.wait(timeout), 0, "memtrace exit status", mt.details())
    finally:
        kill_quietly(mt)
    return mt
