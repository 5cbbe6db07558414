"""--http on a shared machine (issue 23): a unix socket and a token for
who may read, Host and Origin checks against DNS rebinding and cross-site
requests, requests whose client left cancelled, slowloris and caps, the
socket bound before CMD starts, [::] dual-stack and the warning off
loopback.  On tests/progs/served (test_http.py).  Every address is a
loopback one; every wait is bounded."""

import http.client
import http.server
import os
import re
import socket
import stat
import tempfile
import threading
import time

import browser
import mtlib
from mtlib import check, check_eq, test
from test_http import go_flat, go_pprof_url

SMALL = 10 * 1000


class Server:
    """memtrace --http WHERE [ARGS] -- served: the 'serving' line, the
    address to connect to, memtrace's pid."""

    def __init__(self, where, args=()):
        self.mt = mtlib.Bg([mtlib.MEMTRACE, "--http", where, "--unit", "B"] + list(args)
                           + ["--", mtlib.prog_path("served")])
        line = self.mt.err.wait_for(lambda l: l.startswith("memtrace: serving "), 60)
        ready = self.mt.out.wait_for(lambda l: l.startswith("ready "), 60)
        if line is None or ready is None:
            self.mt.kill()
            raise mtlib.Fail("memtrace --http %s -- served did not start" % where, self.mt.details())
        self.line = line
        m = re.match(r"memtrace: serving http://(\S+?):(\d+)/ ", line)
        if m:
            self.host, self.port = m.group(1).strip("[]"), int(m.group(2))
            self.url = "http://%s:%d" % (m.group(1), self.port)

    def request(self, method, path, headers=None, host=None, port=None, timeout=60):
        """(status, headers, body) of METHOD PATH to HOST:PORT (the server's)."""
        c = http.client.HTTPConnection(host or self.host, port or self.port, timeout=timeout)
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            return r.status, r.headers, r.read()
        finally:
            c.close()

    def finish(self):
        self.mt.send("q\n")
        check_eq(self.mt.wait(60), 0, "memtrace's exit status", self.mt.details())

    def close(self):
        self.mt.kill()


def threads_of(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def close_wait(port):
    """Sockets of PORT (either side) in CLOSE-WAIT."""
    n = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(name) as f:
            for line in f.read().splitlines()[1:]:
                f_ = line.split()
                if f_[3] == "08" and int(f_[1].rsplit(":", 1)[1], 16) == port:
                    n += 1
    return n


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


@test("http_security.unix_socket")
def _unix_socket():
    """--http unix:PATH: a socket of mode 0600 whatever the umask allows
    more, served over AF_UNIX (any Host), removed at exit; a symlink or a
    file at PATH is not followed nor replaced; a stale socket is."""
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        path = os.path.join(d, "mt.sock")
        s = Server("unix:" + path)
        try:
            check(s.line.startswith("memtrace: serving unix:%s " % path), "the serving line", s.line)
            st = os.lstat(path)
            check(stat.S_ISSOCK(st.st_mode), "%s is not a socket" % path)
            check_eq(oct(st.st_mode & 0o777), oct(0o600), "the socket's mode")
            c = UnixHTTP(path)
            c.request("GET", "/debug/pprof/heap?debug=1", headers={"Host": "anything"})
            r = c.getresponse()
            body = r.read().decode()
            c.close()
            check_eq(r.status, 200, "GET over the unix socket", body[:300])
            check("keep_small" in body, "the profile over the unix socket", body[:1000])
            s.finish()
        finally:
            s.close()
        check(not os.path.lexists(path), "the socket was not removed at exit")
        # A symlink at PATH: not followed (its target not made), an error.
        target = os.path.join(d, "target")
        os.symlink(target, path)
        res = mtlib.run_memtrace(["--http", "unix:" + path, "--", "/bin/true"])
        mtlib.check_one_line_error(res, "a symlink at the socket's path", ["exists"])
        check(not os.path.lexists(target), "the symlink was followed")
        check(os.path.islink(path), "the symlink was replaced")
        os.unlink(path)
        # A stale socket of ours (nobody listening): replaced.
        old = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old.bind(path)
        old.close()
        s = Server("unix:" + path)
        try:
            c = UnixHTTP(path)
            c.request("GET", "/metrics")
            check_eq(c.getresponse().status, 200, "GET after replacing a stale socket")
            c.close()
            s.finish()
        finally:
            s.close()
        res = mtlib.run_memtrace(["--http", "unix:" + path, "--http-allow", "127.0.0.1",
                                  "--", "/bin/true"])
        mtlib.check_one_line_error(res, "--http-allow with a unix socket", ["--http-allow"])
        res = mtlib.run_memtrace(["--http", "unix:", "--", "/bin/true"])
        mtlib.check_one_line_error(res, "unix: without a path", ["--http"])


@test("http_security.token")
def _token():
    """--http-token-file: every request needs the token (Bearer, or Basic
    as the password, which go tool pprof sends from the URL); 401 with
    both challenges otherwise; a file others can read, or a short token,
    refused with the reason."""
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        tok = os.path.join(d, "token")
        token = "k3y-" + os.urandom(12).hex()
        with open(tok, "w") as f:
            f.write(token + "\n")
        os.chmod(tok, 0o644)
        res = mtlib.run_memtrace(["--http", "127.0.0.1:0", "--http-token-file", tok, "--", "/bin/true"])
        mtlib.check_one_line_error(res, "a token file others can read", ["0644"])
        short = os.path.join(d, "short")
        with open(short, "w") as f:
            f.write("abc\n")
        os.chmod(short, 0o600)
        res = mtlib.run_memtrace(["--http", "127.0.0.1:0", "--http-token-file", short, "--", "/bin/true"])
        mtlib.check_one_line_error(res, "a short token", ["16"])
        res = mtlib.run_memtrace(["--http-token-file", tok, "--", "/bin/true"])
        mtlib.check_one_line_error(res, "--http-token-file without --http", ["--http"])
        os.chmod(tok, 0o600)
        s = Server("127.0.0.1:0", ["--http-token-file", tok])
        try:
            status, headers, _ = s.request("GET", "/debug/pprof/heap")
            check_eq(status, 401, "no token")
            challenges = headers.get_all("WWW-Authenticate") or []
            check(any(c.startswith("Bearer") for c in challenges)
                  and any(c.startswith("Basic") for c in challenges),
                  "401 without Bearer and Basic challenges: %s" % challenges)
            for bad in ("Bearer " + token[:-1], "Bearer " + token + "x", "Bearer", "Basic eDp5"):
                status, _, _ = s.request("GET", "/metrics", {"Authorization": bad})
                check_eq(status, 401, "Authorization: %s" % bad[:20])
            status, _, body = s.request("GET", "/metrics", {"Authorization": "Bearer " + token})
            check_eq(status, 200, "the token as Bearer", body[:200])
            import base64
            basic = base64.b64encode(("any:" + token).encode()).decode()
            status, _, _ = s.request("GET", "/", {"Authorization": "Basic " + basic})
            check_eq(status, 200, "the token as Basic's password")
            flat, _ = go_flat(go_pprof_url("http://pprof:%s@127.0.0.1:%d/debug/pprof/heap" % (token, s.port),
                                           ["-top", "-unit=B"]))
            check_eq(flat.get("keep_small"), SMALL, "go tool pprof with the token in the URL's user info", flat)
            s.finish()
        finally:
            s.close()


@test("http_security.host_origin")
def _host_origin():
    """Host must name the server (421 otherwise: DNS rebinding); a POST
    from another site (Origin, Sec-Fetch-Site) is a 403 and takes no
    snapshot; the page's own form, curl and --http-host names work."""
    s = Server("127.0.0.1:0", ["--snapshot-interval", "0", "--http-host", "profiles.example"])
    try:
        p = s.port
        for host, want in (("evil.example:%d" % p, 421), ("evil.example", 421),
                           ("127.0.0.1:%d" % (p + 1 if p < 65535 else p - 1), 421),
                           ("127.0.0.2:%d" % p, 421), ("[::1]:%d" % p, 421),
                           ("127.0.0.1:%d" % p, 200), ("127.0.0.1", 200), ("localhost:%d" % p, 200),
                           ("LOCALHOST.:%d" % p, 200), ("profiles.example:%d" % p, 200)):
            status, _, body = s.request("GET", "/metrics", {"Host": host})
            check_eq(status, want, "Host: %s" % host, body[:200])
        own = "http://127.0.0.1:%d" % p
        for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                        {"Origin": own + "0"}, {"Origin": "https://127.0.0.1:%d" % p},
                        {"Origin": own, "Sec-Fetch-Site": "cross-site"},
                        {"Sec-Fetch-Site": "same-site"}):
            status, _, _ = s.request("POST", "/snapshots", headers)
            check_eq(status, 403, "POST /snapshots with %s" % headers)
        html = s.request("GET", "/")[2].decode()
        check('id="no-snapshots"' in html, "a refused POST took a snapshot", html[-2000:])
        for i, headers in enumerate(({"Origin": own, "Sec-Fetch-Site": "same-origin"}, {}), 1):
            status, h, _ = s.request("POST", "/snapshots", headers)
            check_eq(status, 303, "POST /snapshots with %s" % headers)
            check_eq(h.get("X-Memtrace-Snapshot"), str(i), "the snapshot's number")
        s.finish()
    finally:
        s.close()


@test("http_security.browser")
def _browser():
    """In Chromium, with evil.example resolving to 127.0.0.1 (DNS
    rebinding): http://evil.example:PORT/ gets the 421, not the page; a
    page of evil.example that submits a form to POST /snapshots takes no
    snapshot (its Origin is not the server's)."""
    s = Server("127.0.0.1:0", ["--snapshot-interval", "0"])
    attacker = None
    try:
        rules = ["--host-resolver-rules=MAP evil.example 127.0.0.1"]
        dom, _ = browser.dump_dom("http://evil.example:%d/" % s.port, args=rules)
        check("does not name this server" in dom and 'id="flame-graph"' not in dom,
              "Chromium got the page under another name", dom[:2000])
        form = ('<!DOCTYPE html><html><body><form method="post" action="http://127.0.0.1:%d/snapshots">'
                '</form><script>document.forms[0].submit()</script></body></html>' % s.port).encode()

        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(form)))
                self.end_headers()
                self.wfile.write(form)

            def log_message(self, *a):
                pass
        attacker = http.server.HTTPServer(("127.0.0.1", 0), Page)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        dom, _ = browser.dump_dom("http://evil.example:%d/" % attacker.server_address[1], args=rules)
        check("another site" in dom, "Chromium's cross-site POST was not refused", dom[:2000])
        html = s.request("GET", "/")[2].decode()
        check('id="no-snapshots"' in html, "a cross-site form took a snapshot", html[-2000:])
        s.finish()
    finally:
        if attacker:
            attacker.shutdown()
        s.close()


def raw_get(host, port, path, host_header):
    c = socket.create_connection((host, port), timeout=30)
    c.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), host_header.encode()))
    return c


def reply_of(sock, wait):
    """The status line sock has received within WAIT s: '' on EOF/reset,
    None when nothing came."""
    sock.settimeout(wait)
    try:
        data = sock.recv(4096)
    except socket.timeout:
        return None
    except OSError:
        return ""
    return data.split(b"\r\n", 1)[0].decode("latin-1")


@test("http_security.abandoned")
def _abandoned():
    """136 allocs?seconds=3600 from one peer: 8 wait (the cap per peer),
    the others are a 503 with Retry-After; the 8 closed at once, their
    requests are cancelled: memtrace's threads back to what they were, no
    socket left in CLOSE-WAIT, the next request answered."""
    s = Server("127.0.0.1:0")
    socks = []
    try:
        hh = "127.0.0.1:%d" % s.port
        time.sleep(0.5)
        base = threads_of(s.mt.pid)
        for _ in range(136):
            socks.append(raw_get("127.0.0.1", s.port, "/debug/pprof/allocs?seconds=3600", hh))
        time.sleep(2)
        waiting, refused, other = 0, 0, []
        for c in socks:
            line = reply_of(c, 0.05)
            if line is None:
                waiting += 1
            elif line.startswith("HTTP/1.1 503 "):
                refused += 1
            elif line:
                other.append(line)
        during = threads_of(s.mt.pid)
        check_eq(waiting, 8, "requests waiting (the cap per peer)")
        check(refused > 0 and not other, "answers other than 503: %s (%d 503s)" % (other[:5], refused))
        c = raw_get("127.0.0.1", s.port, "/debug/pprof/heap?seconds=30", hh)
        c.settimeout(30)
        head = c.recv(4096).decode("latin-1")
        c.close()
        check(head.startswith("HTTP/1.1 503 ") and re.search(r"(?im)^Retry-After: [1-9]\d*\r$", head),
              "the 9th long request: no 503 with Retry-After", head[:400])
        for c in socks:
            c.close()
        socks = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (threads_of(s.mt.pid) > base or close_wait(s.port)):
            time.sleep(0.1)
        after, cw = threads_of(s.mt.pid), close_wait(s.port)
        print("    136 abandoned ?seconds=3600: threads %d before, %d while open, %d after; CLOSE-WAIT %d"
              % (base, during, after, cw), flush=True)
        check(after <= base, "threads %d after the clients left (%d before, %d while waiting)"
              % (after, base, during))
        check_eq(cw, 0, "sockets in CLOSE-WAIT after the clients left")
        status, _, body = s.request("GET", "/metrics", {"Host": hh}, timeout=30)
        check_eq(status, 200, "a request after", body[:200])
        s.finish()
    finally:
        for c in socks:
            c.close()
        s.close()


@test("http_security.slowloris")
def _slowloris():
    """A connection sending a header line every 2 s is closed 15 s after
    it opened (the timeout bounds the whole request, not each line); with
    160 such connections open, a normal request is answered at once."""
    s = Server("127.0.0.1:0")
    trickle = []
    stop = threading.Event()
    try:
        one = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        one.sendall(b"GET /metrics HTTP/1.1\r\n")
        t0 = time.monotonic()
        closed_at = None
        while time.monotonic() - t0 < 25:
            try:
                one.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed_at = time.monotonic() - t0
                break
            if reply_of(one, 2) is not None:
                closed_at = time.monotonic() - t0
                break
        one.close()
        check(closed_at is not None, "a connection trickling headers was still open after 25 s")
        check(closed_at >= 14, "closed after %.1f s, before the 15 s deadline" % closed_at)
        for _ in range(160):
            try:
                c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
                c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                trickle.append(c)
            except OSError:
                pass

        def keep():
            while not stop.wait(2):
                for c in trickle:
                    try:
                        c.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        pass
        t = threading.Thread(target=keep, daemon=True)
        t.start()
        time.sleep(1)
        t1 = time.monotonic()
        status, _, body = s.request("GET", "/metrics", {"Host": "127.0.0.1:%d" % s.port}, timeout=60)
        took = time.monotonic() - t1
        print("    160 slowloris connections: a request answered in %.2f s" % took, flush=True)
        check_eq(status, 200, "a request during 160 slowloris connections", body[:200])
        # Not the deadline's doing: answered before any was due.
        check(took < 10, "the request took %.1f s (the slow connections' deadline frees room at 15 s)" % took)
        s.finish()
    finally:
        stop.set()
        for c in trickle:
            c.close()
        s.close()


@test("http_security.bind_first")
def _bind_first():
    """--http on a port in use with -- CMD: a one-line error, exit 1, and
    CMD never runs."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        marker = os.path.join(d, "ran")
        try:
            res = mtlib.run_memtrace(["--http", "127.0.0.1:%d" % busy.getsockname()[1], "--",
                                      "/bin/sh", "-c", "touch " + marker])
            mtlib.check_one_line_error(res, "a port in use", ["cannot listen"])
            check_eq(res.rc, 1, "exit status")
            time.sleep(1)
            check(not os.path.exists(marker), "CMD ran although memtrace could not listen")
        finally:
            busy.close()


@test("http_security.dual_stack")
def _dual_stack():
    """--http [::]:0 answers IPv4 peers too (127.0.0.1) and IPv6 (::1);
    0.0.0.0 and [::] say in one line that every host reaching the port can
    read the profiles; 127.0.0.1 does not."""
    if not socket.has_ipv6:
        raise mtlib.Skip("no IPv6")
    s = Server("[::]:0")
    try:
        warn = [l for l in s.mt.err.lines if "every host" in l]
        check_eq(len(warn), 1, "warning lines for [::]", "".join(s.mt.err.lines))
        check(warn[0].startswith("memtrace: warning: --http [::]:0"), "the warning", warn[0])
        for host in ("127.0.0.1", "::1"):
            hh = "[%s]:%d" % (host, s.port) if ":" in host else "%s:%d" % (host, s.port)
            status, _, body = s.request("GET", "/metrics", {"Host": hh}, host=host)
            check_eq(status, 200, "GET over %s to [::]" % host, body[:200])
        s.finish()
    finally:
        s.close()
    s = Server("0.0.0.0:0")
    try:
        check(any("every host" in l for l in s.mt.err.lines), "no warning for 0.0.0.0",
              "".join(s.mt.err.lines))
        s.finish()
    finally:
        s.close()
    s = Server("127.0.0.1:0")
    try:
        check(not any("warning" in l for l in s.mt.err.lines), "a warning for 127.0.0.1",
              "".join(s.mt.err.lines))
        s.finish()
    finally:
        s.close()
