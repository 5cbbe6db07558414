"""--http: live profiles over HTTP, on tests/progs/served.c.

served holds 10 x 1000 bytes (keep_small) and 3 x 4096 bytes (keep_large)
from its start, and on each line K of its standard input allocates and
frees K blocks of 100 bytes in tick(), then says "done K".  So the test
knows, at any moment it chooses, exactly what is in use by function and
what was allocated in any window.  Every request goes to 127.0.0.1; every
run is bounded in time (mtlib's limits, urllib timeouts)."""

import http.client
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import browser
import mtlib
from mtlib import check, check_eq, test
from test_outputs import GO_ROW_RE, go_env, go_value

SMALL = 10 * 1000
LARGE = 3 * 4096
TICK_SIZE = 100


class Served:
    """memtrace --http 127.0.0.1:0 --unit B [ARGS] -- served, its URL and
    the pid."""

    def __init__(self, args=()):
        self.mt = mtlib.Bg([mtlib.MEMTRACE, "--http", "127.0.0.1:0", "--unit", "B"] + list(args)
                           + ["--", mtlib.prog_path("served")])
        line = self.mt.err.wait_for(lambda l: l.startswith("memtrace: serving "), 60)
        ready = self.mt.out.wait_for(lambda l: l.startswith("ready "), 60)
        if line is None or ready is None:
            self.mt.kill()
            raise mtlib.Fail("memtrace --http -- served did not start", self.mt.details())
        self.url = re.match(r"memtrace: serving (http://\S+?)/ ", line).group(1)
        self.pid = int(ready.split()[1])
        self.ticked = 0

    def tick(self, k):
        """served allocates and frees K blocks; returns once it has."""
        self.mt.send("%d\n" % k)
        done = self.mt.out.wait_for(lambda l: l.startswith("done "), 30)
        check_eq(done, "done %d\n" % k, "served's answer to tick %d" % k, self.mt.details())
        self.ticked += k

    def get(self, path, timeout=60):
        """(status, headers, body bytes) of GET PATH."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def text(self, path):
        status, _, body = self.get(path)
        check_eq(status, 200, "GET %s" % path, body[:500])
        return body.decode()

    def finish(self):
        """q to served: it frees everything and exits, memtrace reports."""
        self.mt.send("q\n")
        rc = self.mt.wait(60)
        check_eq(rc, 0, "memtrace's exit status (served's)", self.mt.details())
        out = self.mt.out.text()
        start = out.find("memtrace ")
        check(start >= 0, "no final report", out)
        return out[start:]

    def close(self):
        self.mt.kill()


def flat_of(text):
    """{function: flat} of a text report (--unit B)."""
    rep = mtlib.parse_report(text)
    return rep, {r.function: r.flat for r in rep.rows}


def go_pprof_url(url, args):
    """go tool pprof ARGS URL: its standard output."""
    go = mtlib.which("go")
    check(go, "go is not installed (scripts/install-deps.sh installs golang-go)")
    res = mtlib.run([go, "tool", "pprof", "-symbolize=none"] + list(args) + [url],
                    env=go_env(), timeout=120)
    check_eq(res.rc, 0, "go tool pprof %s %s" % (" ".join(args), url), mtlib.tail(res.stderr))
    return res.stdout


def go_flat(out):
    """{function: flat value} and the Type line of go tool pprof -top."""
    flat = {}
    lines = out.splitlines()
    starts = [i for i, l in enumerate(lines) if l.split()[:5] == ["flat", "flat%", "sum%", "cum", "cum%"]]
    check(starts, "go tool pprof -top: no table", mtlib.tail(out, 20))
    for line in lines[starts[0] + 1:]:
        r = GO_ROW_RE.match(line)
        if r:
            flat[r.group(6).split()[0]] = go_value(r.group(1))
    m = re.search(r"^Type: (\S+)$", out, re.M)
    return flat, m.group(1) if m else None


@test("http.pprof_heap")
def _pprof_heap():
    """go tool pprof URL/debug/pprof/heap: the exact in use per function,
    inuse_space by default; /allocs alloc_space by default; Go's content
    types; /report the text report with the same figures."""
    s = Served()
    try:
        s.tick(5)
        flat, kind = go_flat(go_pprof_url(s.url + "/debug/pprof/heap", ["-top", "-unit=B"]))
        check_eq(kind, "inuse_space", "heap's default sample type")
        check_eq((flat.get("keep_small"), flat.get("keep_large"), flat.get("tick", 0)),
                 (SMALL, LARGE, 0), "in use per function (go tool pprof)", flat)
        flat, kind = go_flat(go_pprof_url(s.url + "/debug/pprof/allocs", ["-top", "-unit=B"]))
        check_eq(kind, "alloc_space", "allocs' default sample type")
        check_eq((flat.get("keep_small"), flat.get("keep_large"), flat.get("tick")),
                 (SMALL, LARGE, 5 * TICK_SIZE), "allocated per function (go tool pprof)", flat)
        flat, _ = go_flat(go_pprof_url(s.url + "/debug/pprof/heap",
                                       ["-top", "-sample_index=inuse_objects"]))
        check_eq((flat.get("keep_small"), flat.get("keep_large")), (10, 3), "objects in use", flat)
        status, headers, body = s.get("/debug/pprof/heap?gc=1")
        check_eq(status, 200, "heap?gc=1 (accepted, ignored)")
        check_eq(headers["Content-Type"], "application/octet-stream", "heap's content type")
        check_eq(body[:2], b"\x1f\x8b", "heap is gzipped")
        text = s.text("/report")
        rep, fl = flat_of(text)
        check_eq((fl.get("keep_small"), fl.get("keep_large")), (SMALL, LARGE),
                 "/report: in use per function", text)
        check_eq(rep.inuse[0], SMALL + LARGE, "/report: bytes in use", text)
        status, headers, _ = s.get("/report")
        check(headers["Content-Type"].startswith("text/plain"), "/report's content type: %s"
              % headers["Content-Type"])
        index = s.text("/debug/pprof/")
        check('href="heap?debug=1"' in index and 'href="allocs?debug=1"' in index,
              "the index links heap and allocs", index)
        s.finish()
    finally:
        s.close()


@test("http.seconds_delta")
def _seconds_delta():
    """?seconds=N: exactly what was allocated in those N seconds (a tick
    before the window is not in it, one inside is), in use of the end."""
    s = Served()
    try:
        s.tick(5)  # before the window
        got = {}

        def fetch():
            got["heap"] = s.get("/report?metric=alloc_space&seconds=3")
        t = threading.Thread(target=fetch)
        t.start()
        time.sleep(1.0)  # the window's first read is done by now
        s.tick(7)        # inside the window
        t.join(60)
        check("heap" in got, "?seconds=3 did not answer within 60 s")
        status, _, body = got["heap"]
        text = body.decode()
        check_eq(status, 200, "allocs?seconds=3", text)
        rep, fl = flat_of(text)
        check_eq(fl.get("tick"), 7 * TICK_SIZE, "tick's allocations in the window", text)
        check_eq(fl.get("keep_small", 0), 0, "keep_small allocated nothing in the window", text)
        check(re.search(r"^alloc figures: since ", text, re.M), "no 'alloc figures: since' line", text)
        # In pprof: go tool pprof -seconds asks the same.
        def later():
            time.sleep(1.0)
            s.tick(3)
        t = threading.Thread(target=later)
        t.start()
        flat, _ = go_flat(go_pprof_url(s.url + "/debug/pprof/allocs",
                                       ["-seconds", "3", "-top", "-unit=B"]))
        t.join(30)
        check_eq(flat.get("tick"), 3 * TICK_SIZE, "go tool pprof -seconds 3: tick", flat)
        flat, _ = go_flat(go_pprof_url(s.url + "/debug/pprof/heap",
                                       ["-top", "-unit=B", "-sample_index=inuse_space"]))
        check_eq(flat.get("keep_small"), SMALL, "in use still whole after the windows", flat)
        for bad in ("0", "-1", "abc", "99999999"):
            status, _, body = s.get("/debug/pprof/heap?seconds=" + bad)
            check_eq(status, 400, "?seconds=%s" % bad, body)
        s.finish()
    finally:
        s.close()


@test("http.metrics")
def _metrics():
    """/metrics parses as Prometheus text (Debian's prometheus_client
    parser) and equals the report of the same moment."""
    from prometheus_client.parser import text_string_to_metric_families
    s = Served()
    try:
        s.tick(4)
        time.sleep(0.5)  # the timeline's sample after the tick
        status, headers, body = s.get("/metrics")
        check_eq(status, 200, "/metrics")
        check(headers["Content-Type"].startswith("text/plain; version=0.0.4"),
              "content type %s" % headers["Content-Type"])
        text = body.decode()
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        def value(name, **labels):
            for sm in fams[name].samples:
                if all(sm.labels.get(k) == str(v) for k, v in labels.items()):
                    return sm.value
            raise mtlib.Fail("no %s%s in /metrics" % (name, labels), text)
        rep = mtlib.parse_report(s.text("/report"))
        rep_alloc = rep.allocated
        who = dict(pid=s.pid, comm="served")
        check_eq(value("memtrace_heap_inuse_bytes", **who), SMALL + LARGE, "in use bytes", text)
        check_eq(value("memtrace_heap_inuse_bytes", **who), rep.inuse[0], "in use = the report's", text)
        check_eq(value("memtrace_heap_inuse_objects", **who), rep.inuse[1], "objects in use", text)
        check_eq(value("memtrace_heap_allocated_bytes", **who), SMALL + LARGE + 4 * TICK_SIZE,
                 "allocated bytes", text)
        check_eq(value("memtrace_heap_allocated_bytes", **who), rep_alloc[0], "allocated = the report's", text)
        check_eq(value("memtrace_heap_allocated_objects", **who), rep_alloc[1], "objects allocated", text)
        check_eq(value("memtrace_heap_freed_bytes", **who), 4 * TICK_SIZE, "freed bytes", text)
        check_eq(value("memtrace_heap_peak_inuse_bytes", **who), SMALL + LARGE + TICK_SIZE,
                 "peak in use (a tick's block on top of the held ones)", text)
        check_eq(value("memtrace_drops", reason="allocs_map_full"), 0, "drops", text)
        check_eq(fams["memtrace_drops"].type, "counter", "drops' type")
        check_eq(value("memtrace_processes"), 1, "processes", text)
        check_eq(value("memtrace_allocator_calls"), rep.events[0], "allocator calls = the report's", text)
        s.finish()
    finally:
        s.close()


@test("http.page")
def _page():
    """/: the timeline and the flame graph of now in the HTML itself (no
    script needed); headless Chromium loads it without error and its DOM
    has both; a screenshot; the interactive /flame.svg."""
    s = Served()
    try:
        s.tick(2)
        time.sleep(0.5)
        html = s.text("/")
        check('id="timeline-chart"' in html and html.count("<svg") >= 2,
              "the page has no timeline and flame graph SVGs", html[:2000])
        # Its one script refreshes it (test_http_views.py); without it, all is there.
        plain = re.sub(r'<script nonce="[0-9a-f]{32}">.*?</script>', "", html, flags=re.S)
        check("<script" not in plain and plain.count("<svg") >= 2, "the page needs no script", html[:2000])
        check(re.search(r"<title>keep_small\b", html), "no keep_small frame in the flame graph", html[:4000])
        dom, log = browser.dump_dom(s.url + "/")
        check_eq(browser.js_errors(log), [], "script errors in Chromium")
        check('id="flame-graph"' in dom and "keep_large" in dom, "Chromium's DOM has no flame graph", dom[:3000])
        check('id="timeline-chart"' in dom and "<svg" in dom, "Chromium's DOM has no timeline", dom[:3000])
        png = os.path.join(mtlib.TMPDIR, "http-page.png")
        browser.screenshot(s.url + "/", png, height=1400)
        check(os.path.getsize(png) > 10000, "the screenshot is blank-sized: %d bytes" % os.path.getsize(png))
        status, headers, body = s.get("/flame.svg?metric=alloc_space")
        check_eq(status, 200, "/flame.svg")
        check_eq(headers["Content-Type"], "image/svg+xml", "/flame.svg's type")
        check(b"<script" in body and b"tick" in body, "/flame.svg: interactive, with tick", body[:500])
        status, _, body = s.get("/timeline.svg")
        check_eq(status, 200, "/timeline.svg", body[:300])
        s.finish()
    finally:
        s.close()


@test("http.snapshots_diff")
def _snapshots_diff():
    """POST /snapshots and SIGUSR1 take snapshots; /diff?a=&b= is exactly
    `memtrace report snapshot-B.pb.gz --base snapshot-A.pb.gz`."""
    s = Served(["--snapshot-interval", "0"])
    try:
        def post():
            c = http.client.HTTPConnection(s.url[len("http://"):], timeout=60)
            c.request("POST", "/snapshots")
            r = c.getresponse()
            r.read()
            c.close()
            check_eq(r.status, 303, "POST /snapshots")
            return int(r.getheader("X-Memtrace-Snapshot"))
        a = post()
        s.tick(6)
        b = post()
        check_eq((a, b), (1, 2), "snapshot numbers")
        s.mt.signal(signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "snapshot-3.pb.gz" not in s.text("/"):
            time.sleep(0.2)
        html = s.text("/")
        check(re.search(r"<td>3</td><td>[^<]*</td><td>[^<]*</td><td>signal</td>", html),
              "SIGUSR1 took no snapshot", html[-3000:])
        diff = s.text("/diff.txt?a=%d&b=%d" % (a, b))
        with tempfile.TemporaryDirectory() as d:
            for n in (a, b):
                status, _, body = s.get("/snapshots/%d.pb.gz" % n)
                check_eq(status, 200, "snapshot %d" % n)
                with open(os.path.join(d, "snapshot-%d.pb.gz" % n), "wb") as f:
                    f.write(body)
            p = subprocess.run([os.path.abspath(mtlib.MEMTRACE), "report", "snapshot-%d.pb.gz" % b,
                                "--base", "snapshot-%d.pb.gz" % a, "--unit", "B"], cwd=d, capture_output=True,
                               text=True, timeout=60)
            out, rc = p.stdout, p.returncode
        check_eq(rc, 0, "memtrace report B --base A")
        check_eq(diff, out, "/diff = memtrace report B --base A")
        rep, fl = flat_of(diff)
        check_eq(fl.get("keep_small", 0), 0, "the held blocks cancel out in the diff", diff)
        status, _, _ = s.get("/snapshots/99.pb.gz")
        check_eq(status, 404, "a snapshot never taken")
        status, _, _ = s.get("/diff?a=1&b=99")
        check_eq(status, 404, "a diff with a snapshot never taken")
        s.finish()
    finally:
        s.close()


@test("http.filters")
def _filters():
    """?pid= and ?comm= pick processes: the target's give its profile,
    others a 404 (test_http_pprof.py); bad values are a 400."""
    s = Served()
    try:
        for q in ("pid=%d" % s.pid, "comm=served"):
            rep, fl = flat_of(s.text("/report?" + q))
            check_eq(fl.get("keep_small"), SMALL, "?%s: keep_small" % q)
        for q in ("pid=abc", "comm=" + "x" * 40, "metric=bogus", "debug=7"):
            status, _, _ = s.get("/debug/pprof/heap?" + q)
            check_eq(status, 400, "?%s" % q)
        s.finish()
    finally:
        s.close()


def raw_request(url, data, read=True, timeout=20):
    """Send DATA on a new connection to URL's host; the status line."""
    host, port = url[len("http://"):].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as c:
        c.sendall(data)
        if not read:
            return None
        buf = b""
        try:
            while b"\r\n" not in buf:
                chunk = c.recv(4096)
                if not chunk:
                    break
                buf += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        return buf.split(b"\r\n", 1)[0].decode("latin-1")


@test("http.abuse")
def _abuse():
    """1,000 requests from 50 clients at once, slow clients holding
    connections open, 1 MB URLs, bodies, unknown paths and methods: every
    answer is well-formed (200) or a 4xx, the target runs on, and the
    final report is still exact."""
    s = Served()
    slow = []
    try:
        s.tick(3)
        # Slow clients: half a request each, never finished.
        host, port = s.url[len("http://"):].rsplit(":", 1)
        for _ in range(20):
            c = socket.create_connection((host, int(port)), timeout=10)
            c.sendall(b"GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n")
            slow.append(c)
        paths = ["/metrics", "/debug/pprof/heap", "/debug/pprof/allocs?debug=1", "/report",
                 "/nosuch", "/debug/pprof/goroutine", "/debug/pprof/heap?seconds=x",
                 "/snapshots/0.pb.gz", "/diff?a=x"]
        statuses = {}
        bad = []
        lock = threading.Lock()

        def client(k):
            for i in range(20):
                path = paths[(k + i) % len(paths)]
                try:
                    status, _, body = s.get(path, timeout=120)
                except Exception as e:  # noqa: BLE001 (reported below)
                    status, body = "error %r" % e, b""
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200 and path == "/metrics" and b"memtrace_heap_inuse_bytes" not in body:
                        bad.append((path, body[:200]))
        threads = [threading.Thread(target=client, args=(k,)) for k in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        check_eq(sum(statuses.values()), 1000, "answers to 1,000 requests", statuses)
        check(all(isinstance(k, int) and (k == 200 or 400 <= k < 500) for k in statuses),
              "answers other than 200 or 4xx: %s" % statuses)
        check_eq(bad, [], "malformed /metrics answers")
        # A 1 MB URL, a body, an unknown method (Host: the server's).
        hh = s.url[len("http://"):].encode()
        line = raw_request(s.url, b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: %s\r\n\r\n" % hh)
        check(line == "" or re.match(r"HTTP/1\.1 4\d\d ", line), "a 1 MB URL: %r" % line)
        line = raw_request(s.url, b"POST /metrics HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n\r\nhello" % hh)
        check(re.match(r"HTTP/1\.1 4\d\d ", line), "a body: %r" % line)
        line = raw_request(s.url, b"DELETE / HTTP/1.1\r\nHost: %s\r\n\r\n" % hh)
        check(re.match(r"HTTP/1\.1 405 ", line), "DELETE: %r" % line)
        line = raw_request(s.url, b"\x00\x01garbage\r\n\r\n")
        check(line == "" or re.match(r"HTTP/1\.1 4\d\d ", line), "garbage: %r" % line)
        # Still tracing, the target unharmed and exact.
        check(s.mt.alive(), "memtrace died", s.mt.details())
        s.tick(9)
        flat, _ = go_flat(go_pprof_url(s.url + "/debug/pprof/allocs", ["-top", "-unit=B"]))
        check_eq(flat.get("tick"), 12 * TICK_SIZE, "allocations after the abuse", flat)
        for c in slow:
            c.close()
        out = s.finish()
        rep = mtlib.parse_report(out)
        check_eq(rep.allocated, (SMALL + LARGE + 12 * TICK_SIZE, 13 + 12), "the final report's allocated", out)
        check_eq(rep.inuse, (0, 0), "the final report's in use (served freed everything)", out)
    finally:
        for c in slow:
            c.close()
        s.close()


@test("http.options")
def _options():
    """Bad --http and --http-allow values are one-line errors; a port in
    use too; --http-allow refuses other peers; report takes no --http."""
    for args, mention in ((["--http", "nohost.invalid.:1"], "--http"),
                          (["--http", "127.0.0.1:99999"], "--http"),
                          (["--http", "::1:80"], "--http"),
                          (["--http", "1", "--http-allow", "10.0.0.0/33"], "--http-allow"),
                          (["--http-allow", "10.0.0.0/8"], "--http"),
                          (["--snapshot-interval", "0.01", "--http", "1"], "--snapshot-interval"),
                          (["--snapshot-interval", "10"], "--snapshot-interval")):
        res = mtlib.run_memtrace(args + ["--", "/bin/true"])
        mtlib.check_one_line_error(res, " ".join(args), mention)
    res = mtlib.run_memtrace(["report", "x.pb.gz", "--http", "1"])
    mtlib.check_one_line_error(res, "report --http", "--http")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        port = busy.getsockname()[1]
        res = mtlib.run_memtrace(["--http", "127.0.0.1:%d" % port, "--", mtlib.prog_path("served")])
        mtlib.check_one_line_error(res, "a port in use", "cannot listen")
    finally:
        busy.close()
    s = Served(["--http-allow", "10.0.0.0/8"])
    try:
        line = raw_request(s.url, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        check_eq(line, "", "a peer outside --http-allow gets no answer")
        s.finish()
    finally:
        s.close()
    s = Served(["--http-allow", "127.0.0.0/8"])
    try:
        check("memtrace_heap_inuse_bytes" in s.text("/metrics"), "a peer inside --http-allow is served")
        s.finish()
    finally:
        s.close()


@test("http.system_wide")
def _system_wide():
    """System-wide: ?pid= and ?comm= pick one process of many, every
    sample has pid and comm labels (go tool pprof -tags), /metrics has
    a series per process."""
    mt = mtlib.Bg([mtlib.MEMTRACE, "--http", "127.0.0.1:0", "--unit", "B"], stdin=subprocess.DEVNULL)
    a = b = None
    try:
        line = mt.err.wait_for(lambda l: l.startswith("memtrace: serving "), 60)
        check(line is not None, "system-wide memtrace --http did not start", mt.details())
        check(mt.err.wait_for(lambda l: l.startswith("memtrace: tracing"), 60),
              "system-wide memtrace did not start tracing", mt.details())
        url = re.match(r"memtrace: serving (http://\S+?)/ ", line).group(1)
        a = mtlib.Bg([mtlib.prog_path("served")])
        b = mtlib.Bg([mtlib.prog_path("served")])
        pids = []
        for w in (a, b):
            ready = w.out.wait_for(lambda l: l.startswith("ready "), 30)
            check(ready, "served did not start", w.details())
            pids.append(int(ready.split()[1]))
        b.send("8\n")
        check(b.out.wait_for(lambda l: l.startswith("done "), 30), "served b did not tick")
        time.sleep(0.5)

        def get(path):
            with urllib.request.urlopen(url + path, timeout=60) as r:
                return r.read().decode()
        for pid, ticks in zip(pids, (0, 8)):
            _, fl = flat_of(get("/report?metric=alloc_space&pid=%d" % pid))
            check_eq((fl.get("keep_small"), fl.get("keep_large"), fl.get("tick", 0)),
                     (SMALL, LARGE, ticks * TICK_SIZE), "?pid=%d: allocated per function" % pid, fl)
        _, fl = flat_of(get("/report?metric=alloc_space&comm=served"))
        check_eq((fl.get("keep_small"), fl.get("tick", 0)), (2 * SMALL, 8 * TICK_SIZE),
                 "?comm=served: both processes", fl)
        tags = go_pprof_url(url + "/debug/pprof/heap?comm=served", ["-tags"])
        for pid in pids:
            check(re.search(r"\b%d\b" % pid, tags), "no pid label %d in go tool pprof -tags" % pid, tags)
        check("served" in tags, "no comm label served in go tool pprof -tags", tags)
        metrics = get("/metrics")
        for pid in pids:
            check('memtrace_heap_inuse_bytes{pid="%d",comm="served"} %d' % (pid, SMALL + LARGE) in metrics,
                  "/metrics: no in-use series for pid %d" % pid, metrics[:3000])
        for w in (a, b):
            w.send("q\n")
            check_eq(w.wait(30), 0, "served's exit status", w.details())
        mt.signal(signal.SIGINT)
        check_eq(mt.wait(60), 0, "memtrace's exit status", mt.details())
    finally:
        for w in (a, b):
            if w:
                mtlib.kill_quietly(w)
        mtlib.kill_quietly(mt)
