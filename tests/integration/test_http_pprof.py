"""--http as go tool pprof and Go's net/http/pprof users expect it: go
tool pprof URL with its default symbolization (it asks
/debug/pprof/symbol for what the profile left without a function), on a
stripped program and on Debian's python3; ?debug=1 Go's text heap profile
(memtrace report and go tool pprof read it); a window's and a diff's
duration; ?pid= and ?comm= that match nothing a 404 with its reason.
Every request goes to 127.0.0.1; every run is bounded in time."""

import http.client
import os
import re
import tempfile
import time
import urllib.error
import urllib.request

import mtlib
from mtlib import check, check_eq, test
from test_http import raw_request
from test_outputs import GO_ROW_RE, go_env, go_value

SMALL = 10 * 1000
LARGE = 3 * 4096
TICK_SIZE = 100


class Target:
    """memtrace --http 127.0.0.1:0 --unit B [ARGS] -- ARGV, its URL; ARGV
    writes "ready ..." once it holds what the test looks at."""

    def __init__(self, argv, args=()):
        self.mt = mtlib.Bg([mtlib.MEMTRACE, "--http", "127.0.0.1:0", "--unit", "B"] + list(args)
                           + ["--"] + list(argv))
        line = self.mt.err.wait_for(lambda l: l.startswith("memtrace: serving "), 60)
        ready = self.mt.out.wait_for(lambda l: l.startswith("ready"), 60)
        if line is None or ready is None:
            self.mt.kill()
            raise mtlib.Fail("memtrace --http -- %s did not start" % argv[0], self.mt.details())
        self.url = re.match(r"memtrace: serving (http://\S+?)/ ", line).group(1)

    def get(self, path, data=None, timeout=60):
        """(status, headers, body bytes) of GET PATH (POST with DATA)."""
        try:
            with urllib.request.urlopen(self.url + path, data=data, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def text(self, path):
        status, _, body = self.get(path)
        check_eq(status, 200, "GET %s" % path, body[:500])
        return body.decode()

    def tick(self, k):
        self.mt.send("%d\n" % k)
        done = self.mt.out.wait_for(lambda l: l.startswith("done "), 30)
        check_eq(done, "done %d\n" % k, "served's answer to tick %d" % k, self.mt.details())

    def finish(self):
        self.mt.send("q\n")
        check_eq(self.mt.wait(60), 0, "memtrace's exit status", self.mt.details())

    def close(self):
        self.mt.kill()


def go_pprof(target, args, ok=True):
    """go tool pprof ARGS TARGET with its default symbolization."""
    go = mtlib.which("go")
    check(go, "go is not installed (scripts/install-deps.sh installs golang-go)")
    res = mtlib.run([go, "tool", "pprof"] + list(args) + [target], env=go_env(), timeout=180)
    if ok:
        check_eq(res.rc, 0, "go tool pprof %s %s" % (" ".join(args), target), mtlib.tail(res.stderr))
    return res


def go_top(out):
    """{function: flat} of go tool pprof -top's table ("(inline)" dropped)."""
    flat = {}
    lines = out.splitlines()
    starts = [i for i, l in enumerate(lines) if l.split()[:5] == ["flat", "flat%", "sum%", "cum", "cum%"]]
    check(starts, "go tool pprof -top: no table", mtlib.tail(out, 20))
    for line in lines[starts[0] + 1:]:
        r = GO_ROW_RE.match(line)
        if r:
            name = r.group(6)
            if name.endswith(" (inline)"):
                name = name[: -len(" (inline)")]
            flat[name] = flat.get(name, 0) + go_value(r.group(1))
    return flat


def report_top(text):
    """{function: flat} of a memtrace text report."""
    return {r.function: r.flat for r in mtlib.parse_report(text).rows}


def nm_ranges(path):
    """{function: (start, end)} of PATH's symbol table (nm -S)."""
    res = mtlib.run(["nm", "-S", "--defined-only", path])
    check_eq(res.rc, 0, "nm -S %s" % path, res.stderr)
    out = {}
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            out[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    return out


@test("http_pprof.symbol_stripped")
def _symbol_stripped():
    """go tool pprof URL (no -symbolize=none) on a stripped served: it
    asks /debug/pprof/symbol, gets memtrace's names ("FILE+0xOFFSET", the
    offsets inside keep_small and keep_large of the unstripped file) with
    the exact bytes; the endpoint as Go's (GET: num_symbols; POST and GET
    with addresses)."""
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        prog = os.path.join(d, "served-stripped")
        res = mtlib.run(["strip", "-o", prog, mtlib.prog_path("served")])
        check_eq(res.rc, 0, "strip served", res.stderr)
        s = Target([prog])
        try:
            res = go_pprof(s.url + "/debug/pprof/heap", ["-top", "-unit=B"])
            flat = go_top(res.stdout)
            syms = nm_ranges(mtlib.prog_path("served"))
            names = {}
            for name, v in flat.items():
                m = re.match(r"^served-stripped\+0x([0-9a-f]+)$", name)
                for fn in ("keep_small", "keep_large"):
                    if m and syms[fn][0] <= int(m.group(1), 16) < syms[fn][1]:
                        names[fn] = names.get(fn, 0) + v
            check_eq(names, {"keep_small": SMALL, "keep_large": LARGE},
                     "in use by the stripped functions, named by /debug/pprof/symbol", res.stdout)
            mine = report_top(s.text("/report?metric=inuse_space"))
            check_eq({k: v for k, v in flat.items() if v}, {k: v for k, v in mine.items() if v},
                     "in use per function: go tool pprof's, memtrace's /report", res.stdout)
            check_eq(s.text("/debug/pprof/symbol"), "num_symbols: 1\n", "GET /debug/pprof/symbol")
            # The addresses ?debug=1 left without a name: memtrace's names.
            status, _, body = s.get("/debug/pprof/heap?debug=1")
            addrs = re.findall(r"^#\t(0x[0-9a-f]+)$", body.decode(), re.M)
            check(addrs, "no frame without a name in ?debug=1", body[:2000])
            post = s.get("/debug/pprof/symbol", data=("+".join(addrs) + "+0x1+junk").encode())
            check_eq(post[0], 200, "POST /debug/pprof/symbol", post[2][:300])
            lines = post[2].decode().splitlines()
            check_eq(lines[0], "num_symbols: 1", "POST's first line")
            got = dict(l.split(" ", 1) for l in lines[1:])
            check_eq(sorted(got), sorted(set(addrs)), "one name per address in a file (none for 0x1)",
                     post[2][:1000])
            check(all(v.startswith("served-stripped+0x") for v in got.values()),
                  "names of stripped code", got)
            one = addrs[0]
            check_eq(s.text("/debug/pprof/symbol?" + one), "num_symbols: 1\n%s %s\n" % (one, got[one]),
                     "GET /debug/pprof/symbol?ADDR")
            host = s.url[len("http://"):].encode()
            # Refused on the declared length, before the body: only its
            # start is sent (the server closing while 2.4 MB were still
            # being sent made the client's write fail now and then).
            line = raw_request(s.url, b"POST /debug/pprof/symbol HTTP/1.1\r\nHost: " + host + b"\r\n"
                               b"Content-Length: 4194304\r\n\r\n" + b"0x1+" * 16)
            check(line.startswith("HTTP/1.1 413 "), "4 MB of addresses: %r" % line)
            s.finish()
        finally:
            s.close()


PY_SCRIPT = r"""
import sys
def hold_blocks():
    return [bytearray(5000 + i) for i in range(300)]
keep = hold_blocks()
print("ready", flush=True)
sys.stdin.readline()
"""


@test("http_pprof.python3")
def _python3():
    """go tool pprof URL (default symbolization) on Debian's python3
    (stripped, with a .dynsym): exit 0, and its top functions are
    memtrace's, with the same bytes (those of code without a symbol named
    by /debug/pprof/symbol)."""
    py = "/usr/bin/python3"
    check(os.access(py, os.X_OK), "Debian's python3 is not installed")
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        script = os.path.join(d, "hold.py")
        with open(script, "w") as f:
            f.write(PY_SCRIPT)
        s = Target([py, script])
        try:
            res = go_pprof(s.url + "/debug/pprof/heap", ["-top", "-unit=B", "-nodecount=15"])
            flat = go_top(res.stdout)
            mine = report_top(s.text("/report?metric=inuse_space"))
            check(any(re.match(r"^python3[.\d]*\+0x", n) for n in flat),
                  "no python3 code without a symbol in go tool pprof's top (named by memtrace)", res.stdout)
            top = sorted(flat.items(), key=lambda kv: -kv[1])[:8]
            for name, v in top:
                check_eq(mine.get(name), v, "in use by %s: go tool pprof's, memtrace's" % name,
                         "go tool pprof:\n%s\nmemtrace:\n%s" % (res.stdout, mine))
            s.finish()
        finally:
            s.close()


@test("http_pprof.debug1")
def _debug1():
    """?debug=1 is Go's text heap profile: memtrace report reads it with the
    same bytes per function as the pprof profile (go tool pprof), in use
    and allocated; go tool pprof reads it too (names from
    /debug/pprof/symbol); ?seconds with ?debug is refused as Go does."""
    s = Target([mtlib.prog_path("served")])
    try:
        s.tick(4)
        status, headers, body = s.get("/debug/pprof/heap?debug=1")
        text = body.decode()
        check_eq(status, 200, "heap?debug=1", text[:300])
        check(headers["Content-Type"].startswith("text/plain"), "?debug=1's type %s" % headers["Content-Type"])
        check(re.match(r"^heap profile: \d+: \d+ \[\d+: \d+\] @ heap/2\n", text), "Go's header line",
              text[:300])
        with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
            path = os.path.join(d, "heap.txt")
            with open(path, "w") as f:
                f.write(text)
            for metric in ("inuse_space", "alloc_space"):
                res = mtlib.run_memtrace(["report", path, "--unit", "B", "--top", "100", "--metric", metric])
                check_eq(res.rc, 0, "memtrace report heap?debug=1 --metric %s" % metric, res.stderr)
                mine = report_top(res.stdout)
                res2 = go_pprof(s.url + "/debug/pprof/heap", ["-top", "-unit=B", "-sample_index=" + metric])
                theirs = go_top(res2.stdout)
                check_eq({k: v for k, v in mine.items() if v}, {k: v for k, v in theirs.items() if v},
                         "%s per function: ?debug=1 read by memtrace, the pprof profile by go" % metric,
                         res.stdout + res2.stdout)
                want = (SMALL, LARGE, 0 if metric == "inuse_space" else 4 * TICK_SIZE)
                check_eq((mine.get("keep_small"), mine.get("keep_large"), mine.get("tick", 0)), want,
                         "%s per function of ?debug=1" % metric, res.stdout)
        res = go_pprof(s.url + "/debug/pprof/allocs?debug=1", ["-top", "-unit=B", "-sample_index=alloc_space"])
        flat = go_top(res.stdout)
        check_eq((flat.get("keep_small"), flat.get("keep_large"), flat.get("tick")),
                 (SMALL, LARGE, 4 * TICK_SIZE), "go tool pprof on ?debug=1: allocated per function",
                 res.stdout)
        status, _, body = s.get("/debug/pprof/heap?debug=1&seconds=2")
        check_eq((status, body), (400, b"seconds and debug params are incompatible\n"), "?debug=1&seconds=2")
        index = s.text("/debug/pprof/")
        check('href="/report"' in index, "the index links /report", index)
        check('href="/report"' in s.text("/"), "the page links /report")
        s.finish()
    finally:
        s.close()


@test("http_pprof.durations")
def _durations():
    """go tool pprof -seconds 3 shows the window's duration, not the
    trace's; memtrace report reads such a profile back with the trace's
    duration and the window's start; /diff of two snapshots 2 s apart says
    2 s."""
    s = Target([mtlib.prog_path("served")], ["--snapshot-interval", "0"])
    try:
        time.sleep(6)  # the trace is 6 s old at least before any window
        res = go_pprof(s.url + "/debug/pprof/allocs", ["-seconds", "3", "-top", "-unit=B"])
        m = re.search(r"^Duration: ([\d.]+)s", res.stdout, re.M)
        check(m, "no Duration line", res.stdout)
        check(3.0 <= float(m.group(1)) < 5.0, "go tool pprof -seconds 3: Duration %ss, not the window's"
              % m.group(1), res.stdout)
        with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
            path = os.path.join(d, "w.pb.gz")
            status, _, body = s.get("/debug/pprof/allocs?seconds=2")
            check_eq(status, 200, "allocs?seconds=2")
            with open(path, "wb") as f:
                f.write(body)
            res = mtlib.run_memtrace(["report", path])
            check_eq(res.rc, 0, "memtrace report of a window", res.stderr)
            dur = float(re.search(r"^duration: ([\d.]+) s$", res.stdout, re.M).group(1))
            since = float(re.search(r"^alloc figures: since ([\d.]+) s", res.stdout, re.M).group(1))
            check(since >= 9 and 1.9 < dur - since < 4, "a window read back: duration %g s, since %g s"
                  % (dur, since), res.stdout)

        seqs = []
        for i in range(2):
            c = http.client.HTTPConnection(s.url[len("http://"):], timeout=60)
            c.request("POST", "/snapshots")
            r = c.getresponse()
            r.read()
            c.close()
            seqs.append(int(r.getheader("X-Memtrace-Snapshot")))
            if i == 0:
                time.sleep(2)
        diff = s.text("/diff.txt?a=%d&b=%d" % tuple(seqs))
        m = re.search(r"^duration: ([\d.]+) s$", diff, re.M)
        check(m and 1.9 <= float(m.group(1)) < 4, "/diff of snapshots 2 s apart: its duration", diff[:600])
        s.finish()
    finally:
        s.close()


@test("http_pprof.filters_404")
def _filters_404():
    """?pid= or ?comm= that match no traced process: a 404 with the reason
    (go tool pprof prints it: X-Go-Pprof), on every endpoint that takes
    them; the target's own still 200."""
    s = Target([mtlib.prog_path("served")])
    try:
        for path in ("/debug/pprof/heap", "/debug/pprof/allocs?debug=1", "/report", "/", "/flame.svg"):
            sep = "&" if "?" in path else "?"
            for q, why in (("pid=1", "no traced process has pid 1\n"),
                           ("comm=nosuch", "no traced process is named nosuch\n"),
                           ("comm=served&pid=1", "no traced process has pid 1 and name served\n")):
                status, headers, body = s.get(path + sep + q)
                check_eq((status, body.decode("utf-8", "replace")), (404, why), "%s%s%s" % (path, sep, q))
                check_eq(headers.get("X-Go-Pprof"), "1", "%s%s%s: X-Go-Pprof" % (path, sep, q))
            status, _, _ = s.get(path + sep + "comm=served")
            check_eq(status, 200, "%s%scomm=served" % (path, sep))
        res = go_pprof(s.url + "/debug/pprof/heap?pid=1", ["-top"], ok=False)
        check(res.rc != 0 and "no traced process has pid 1" in res.stderr,
              "go tool pprof URL?pid=1: the reason", res.stderr)
        s.finish()
    finally:
        s.close()
