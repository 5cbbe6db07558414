#!/usr/bin/env python3
"""bench/scrape.py ERRFILE OUT [--every S | --after-objects N --count K]:
scrape a `memtrace --http 127.0.0.1:0` run whose standard error goes to
ERRFILE (where it says "memtrace: serving URL/").

  --every S           GET /debug/pprof/heap every S seconds (the first at
                      once) until memtrace stops answering
  --after-objects N   wait until /metrics shows N heap blocks in use, then
                      GET /debug/pprof/heap K times, one after the other

Each scrape is a line of OUT: "scrape status=200 ms=12.3 bytes=4567".
Bench tooling, not a test: it never fails the run."""

import re
import sys
import time
import urllib.error
import urllib.request


def url_of(errfile, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            m = re.search(r"memtrace: serving (http://\S+?)/ ", open(errfile).read())
            if m:
                return m.group(1)
        except OSError:
            pass
        time.sleep(0.02)
    return None


def get(url, timeout=120):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        body, status = e.read(), e.code
    return status, (time.monotonic() - t0) * 1e3, body


def scrape(f, base):
    """GET the heap once, a line in F; its status, or None when refused."""
    try:
        status, ms, body = get(base + "/debug/pprof/heap")
    except (OSError, urllib.error.URLError):
        return None
    f.write(f"scrape status={status} ms={ms:.1f} bytes={len(body)}\n")
    f.flush()
    return status


def main(argv):
    errfile, out = argv[1], argv[2]
    opts = dict(zip(argv[3::2], argv[4::2]))
    base = url_of(errfile)
    if not base:
        return 0
    with open(out, "w") as f:
        if "--every" in opts:
            every = float(opts["--every"])
            nxt = time.monotonic()
            while scrape(f, base) == 200:
                nxt += every
                time.sleep(max(0.0, nxt - time.monotonic()))
        else:
            want, count = int(opts["--after-objects"]), int(opts.get("--count", "3"))
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                try:
                    _, _, body = get(base + "/metrics")
                except (OSError, urllib.error.URLError):
                    return 0
                n = sum(float(m) for m in re.findall(
                    rb"^memtrace_heap_inuse_objects\{[^}]*\} (\S+)$", body, re.M))
                if n >= want:
                    break
                time.sleep(0.2)
            for _ in range(count):
                if scrape(f, base) is None:
                    break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
