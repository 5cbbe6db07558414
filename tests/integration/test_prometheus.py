"""A real Prometheus (Debian's) scrapes memtrace's /metrics on loopback.

memtrace --http 127.0.0.1:0 -- served holds known blocks; Prometheus,
started here with a 1 s scrape interval, scrapes it, and the queries a
dashboard would make answer what memtrace's own report says: the heap in
use per process, the bytes allocated, and memtrace_build_info.
"""
import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import mtlib
from mtlib import check, check_eq, test
from test_http import LARGE, SMALL, TICK_SIZE, Served

PROMETHEUS = "/usr/bin/prometheus"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(base, expr):
    """The vector a PromQL instant query returns: [(labels, value)]."""
    url = "%s/api/v1/query?%s" % (base, urllib.parse.urlencode({"query": expr}))
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.load(r)
    except OSError:
        return None
    if doc.get("status") != "success":
        return None
    return [(v["metric"], float(v["value"][1])) for v in doc["data"]["result"]]


def wait_value(base, expr, want, timeout=60):
    """Poll EXPR until its one value is WANT; returns the last answer."""
    got = None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = query(base, expr)
        if got and len(got) == 1 and got[0][1] == want:
            return got
        time.sleep(0.5)
    return got


@test("prometheus.scrape")
def _scrape():
    """Prometheus scrapes /metrics: heap in use per process and allocated
    bytes equal the report's, memtrace_build_info names this version."""
    check(os.path.exists(PROMETHEUS), "prometheus is missing (scripts/install-deps.sh installs it)")
    s = Served()
    prom = None
    try:
        target = urllib.parse.urlparse(s.url).netloc
        d = os.path.join(mtlib.TMPDIR, "prometheus")
        os.makedirs(d)
        cfg = os.path.join(d, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: memtrace\n"
                    "    static_configs:\n      - targets: ['%s']\n" % target)
        port = free_port()
        base = "http://127.0.0.1:%d" % port
        log = open(os.path.join(d, "log.txt"), "w")
        prom = subprocess.Popen([PROMETHEUS, "--config.file=" + cfg,
                                 "--storage.tsdb.path=" + os.path.join(d, "data"),
                                 "--web.listen-address=127.0.0.1:%d" % port,
                                 "--log.level=warn"], stdout=log, stderr=subprocess.STDOUT)
        s.tick(4)
        want_inuse = SMALL + LARGE
        got = wait_value(base, 'memtrace_heap_inuse_bytes{comm="served"}', want_inuse)
        with open(os.path.join(d, "log.txt")) as f:
            plog = mtlib.tail(f.read(), 20)
        check(got and len(got) == 1 and got[0][1] == want_inuse,
              "Prometheus's memtrace_heap_inuse_bytes{comm=\"served\"}: %r, expected %d"
              % (got, want_inuse), plog)
        check_eq(got[0][0].get("pid"), str(s.pid), "the series' pid label")
        alloc = wait_value(base, 'memtrace_heap_allocated_bytes_total{comm="served"}',
                           SMALL + LARGE + 4 * TICK_SIZE)
        check(alloc and alloc[0][1] == SMALL + LARGE + 4 * TICK_SIZE,
              "allocated bytes in Prometheus: %r" % (alloc,), plog)
        info = wait_value(base, "memtrace_build_info", 1)
        check(info and info[0][0].get("version") == mtlib.VERSION,
              "memtrace_build_info: %r, expected version %s" % (info, mtlib.VERSION), plog)
        # doc/http.md's growth-rate query answers (a number, over the ticks).
        # (rate needs two scrapes in its window: polled until it has them)
        expr = 'sum by (pid) (rate(memtrace_heap_allocated_bytes_total[1m]))'
        end = time.monotonic() + 30
        rate = query(base, expr)
        while not rate and time.monotonic() < end:
            time.sleep(0.5)
            rate = query(base, expr)
        check(rate is not None and len(rate) == 1 and rate[0][1] >= 0,
              "the growth-rate query: %r" % (rate,), plog)
        rep = mtlib.parse_report(s.finish())
        check_eq(rep.inuse[0], 0, "the final report's in use (served freed everything)")
        check_eq(rep.allocated[0], alloc[0][1], "allocated bytes: the report's = Prometheus's")
    finally:
        if prom:
            prom.terminate()
            try:
                prom.wait(20)
            except subprocess.TimeoutExpired:
                prom.kill()
        s.close()
