"""browser: load a page or an SVG in Debian's headless Chromium, for the
tests of what memtrace writes for browsers (python3 stdlib only).

  dump_dom(path, query="")    the document (a file, or an http:// URL on
                              loopback) as the browser has it once its
                              scripts ran, and the console messages
  screenshot(path, png, ...)  a PNG of the rendered document
  js_errors(log)              the uncaught errors among those messages
  Png(path)                   a screenshot's pixels, to check what it shows

Each run gets a new profile directory (--user-data-dir) removed after it,
loads nothing but the file named (no network: --no-proxy-server,
first-run/sync/extension machinery off) and, as root, runs with
--no-sandbox (Chromium refuses root otherwise).  A missing chromium is a
failure, not a skip: scripts/install-deps.sh installs it.
"""

import os
import shutil
import struct
import subprocess
import tempfile
import urllib.parse
import zlib

import mtlib

CANDIDATES = ("chromium", "chromium-browser")
TIMEOUT = 90


def chromium():
    """The Chromium binary; fails the test when there is none."""
    for name in CANDIDATES:
        path = mtlib.which(name)
        if path:
            return path
    raise mtlib.Fail("chromium is not installed (scripts/install-deps.sh installs it)")


def file_url(path, query=""):
    """file:// URL of PATH (an http:// URL is taken as it is)."""
    if path.startswith("http://"):
        url = path
    else:
        url = "file://" + urllib.parse.quote(os.path.abspath(path))
    if query:
        url += "?" + (query if isinstance(query, str) else urllib.parse.urlencode(query))
    return url


def _run(args, url, timeout):
    """chromium --headless ARGS URL; (stdout, stderr) as text."""
    profile = tempfile.mkdtemp(prefix="memtrace-chromium.", dir=mtlib.TMPDIR)
    argv = [chromium(), "--headless", "--disable-gpu", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update",
            "--no-proxy-server", "--mute-audio", "--hide-scrollbars",
            "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"]
    if os.geteuid() == 0:
        argv.append("--no-sandbox")
    argv += list(args) + [url]
    try:
        res = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise mtlib.Fail("chromium timed out after %gs on %s" % (timeout, url),
                         mtlib.tail((e.stderr or b"").decode("utf-8", "replace")))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    out = res.stdout.decode("utf-8", "replace")
    err = res.stderr.decode("utf-8", "replace")
    if res.returncode != 0:
        raise mtlib.Fail("chromium exited with status %d on %s" % (res.returncode, url),
                         mtlib.tail(err, 30))
    return out, err


def dump_dom(path, query="", timeout=TIMEOUT, budget_ms=5000, args=()):
    """(serialised DOM after the load event and BUDGET_MS of virtual time,
    console log).  QUERY: a query string or a dict of parameters; ARGS:
    more Chromium options (e.g. --host-resolver-rules=...)."""
    return _run(["--virtual-time-budget=%d" % budget_ms, "--dump-dom"] + list(args),
                file_url(path, query), timeout)


def screenshot(path, png, width=1200, height=800, query="", timeout=TIMEOUT):
    """Write a PNG of PATH rendered in a WIDTH x HEIGHT window; returns
    the console log.  (Headless Chromium 156 writes no screenshot with
    --blink-settings=scriptEnabled=false and ignores --disable-javascript:
    to see a document as without JavaScript, remove its scripts.)"""
    _, err = _run(["--screenshot=" + os.path.abspath(png), "--window-size=%d,%d" % (width, height)],
                  file_url(path, query), timeout)
    mtlib.check(os.path.exists(png) and os.path.getsize(png) > 0,
                "chromium wrote no screenshot %s" % png, mtlib.tail(err, 30))
    return err


def console(log):
    """The page's console messages in Chromium's log ("...:CONSOLE(N)] msg"
    or "...:CONSOLE:N] msg")."""
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def js_errors(log):
    """The console lines that report an uncaught exception or an error."""
    return [line for line in console(log) if "Uncaught" in line or "Error" in line]


class Png:
    """The pixels of an 8-bit RGB or RGBA, non-interlaced PNG (what
    Chromium's screenshots are): width, height, rgb(x, y)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        mtlib.check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
        pos, idat, head = 8, b"", None
        while pos + 8 <= len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                head = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT":
                idat += body
            elif kind == b"IEND":
                break
            pos += 12 + length
        mtlib.check(head is not None, "%s has no IHDR" % path)
        self.width, self.height, depth, ctype, _, _, interlace = head
        mtlib.check(depth == 8 and ctype in (2, 6) and interlace == 0,
                    "%s: a PNG of depth %d, colour type %d, interlace %d: only 8-bit RGB(A), "
                    "non-interlaced, is read here" % (path, depth, ctype, interlace))
        self.bpp = 3 if ctype == 2 else 4
        self.rows = self._unfilter(zlib.decompress(idat))

    def _unfilter(self, raw):
        stride, bpp = self.width * self.bpp, self.bpp
        rows, prev, pos = [], bytearray(stride), 0
        for _ in range(self.height):
            ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
            pos += 1 + stride
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                if ftype == 1:
                    line[i] = (line[i] + a) & 0xff
                elif ftype == 2:
                    line[i] = (line[i] + b) & 0xff
                elif ftype == 3:
                    line[i] = (line[i] + (a + b) // 2) & 0xff
                elif ftype == 4:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    line[i] = (line[i] + pred) & 0xff
            rows.append(line)
            prev = line
        return rows

    def rgb(self, x, y):
        i = int(x) * self.bpp
        return tuple(self.rows[int(y)][i:i + 3])
