"""--http's page and diffs for people, and pprof's views on every profile,
on tests/progs/served.c (test_http.py: keep_small holds 10 x 1000 bytes,
keep_large 3 x 4096, tick(K) allocates and frees K x 100 bytes when the
test asks).

  http_views.page_refresh  / refreshes itself: a <noscript> meta refresh
                           (?refresh=N, 0 never), and its script (allowed by
                           the CSP's nonce, nothing else) replaces the parts
                           in place in headless Chromium; without scripts
                           the page still has everything
  http_views.diff_table    /diff?a=&b= is a page with a table of the
                           functions' before, after and change, the
                           served's known bytes, largest change first
  http_views.diff_flame    the differential flame graph: red for what grew,
                           blue for what shrank (/diff.svg both ways, and
                           `memtrace report A --base B --svg`)
  http_views.views         ?focus= ?ignore= ?hide= ?show_from= ?tagfocus= on
                           /debug/pprof/heap = `memtrace report --VIEW` on
                           the same profile saved, = go tool pprof -focus;
                           /report says the view; a bad regex is a 400
  http_views.comm_glob     ?comm= a glob as --comm; matching nothing a 404

Expected numbers come from served.c, go tool pprof and `memtrace report`.
"""

import json
import os
import re
import subprocess
import tempfile

import browser
import mtlib
from mtlib import check, check_eq, test
from test_http import LARGE, SMALL, TICK_SIZE, Served, go_flat
from test_outputs import go_env

SCRIPT_RE = re.compile(r"<script\b[^>]*>.*?</script>", re.S)


def post_snapshot(s):
    """POST /snapshots: the new snapshot's number."""
    import http.client
    c = http.client.HTTPConnection(s.url[len("http://"):], timeout=60)
    c.request("POST", "/snapshots")
    r = c.getresponse()
    r.read()
    c.close()
    check_eq(r.status, 303, "POST /snapshots")
    return int(r.getheader("X-Memtrace-Snapshot"))


def save(s, path, name):
    status, _, body = s.get(path)
    check_eq(status, 200, "GET %s" % path, body[:300].decode(errors="replace"))
    with open(name, "wb") as f:
        f.write(body)
    return name


def report_json(path, args=()):
    res = mtlib.run_memtrace(["report", path, "--json"] + list(args))
    check_eq(res.rc, 0, "memtrace report %s --json %s" % (path, " ".join(args)), mtlib.tail(res.stderr))
    return json.loads(res.stdout)


def named(data, metric="inuse_space"):
    """{function: (flat, cum)} of a --json document, named functions only."""
    return {f["name"]: (f["flat"][metric], f["cum"][metric]) for f in data["functions"]
            if not re.search(r"\+0x[0-9a-f]+$", f["name"])}


def frames(svg):
    """[(title's first line, data-d, fill)] of a flame graph's frames."""
    out = []
    for m in re.finditer(r'<g data-x="\d+" data-v="\d+"(?: data-d="(-?\d+)")?><title>([^\n<]*)\n[^<]*</title>'
                         r'<rect [^>]*fill="(rgb\(\d+,\d+,\d+\))"', svg):
        out.append((m.group(2), int(m.group(1)) if m.group(1) is not None else None, m.group(3)))
    return out


def colour(fill):
    r, g, b = (int(x) for x in re.findall(r"\d+", fill))
    if r == 255 and g == b and g < 255:
        return "red"
    if b == 255 and r == g and r < 255:
        return "blue"
    return fill


def frame_of(svg, name):
    got = [f for f in frames(svg) if f[0] == name]
    check(got, "no frame %s in the flame graph" % name, svg[:1500])
    return got[0]


@test("http_views.page_refresh")
def _page_refresh():
    """The page refreshes itself: in place with its script (Chromium runs
    it under the page's CSP), by a <noscript> meta refresh without it;
    everything readable without scripts."""
    s = Served(["--snapshot-interval", "0"])
    try:
        post_snapshot(s)
        status, headers, body = s.get("/")
        html = body.decode()
        check_eq(status, 200, "GET /")
        check(re.search(r'<noscript><meta http-equiv="refresh" content="10"></noscript>', html),
              "no <noscript> meta refresh of 10 s by default", html[:800])
        csp = headers.get("Content-Security-Policy") or ""
        nonce = re.search(r"script-src 'nonce-([0-9a-f]{32})'", csp)
        check(nonce, "the page's CSP allows no script by nonce: %r" % csp)
        check("default-src 'none'" in csp and "unsafe-eval" not in csp
              and "script-src 'nonce-%s';" % nonce.group(1) in csp, "the CSP is not strict: %r" % csp)
        scripts = re.findall(r"<script\b([^>]*)>", html)
        check_eq(scripts, [' nonce="%s"' % nonce.group(1)], "the page's scripts: one, with the CSP's nonce")
        _, headers2, _ = s.get("/")
        check(headers2.get("Content-Security-Policy") != csp, "the nonce is the same in two responses")
        # Without scripts: the figures, the flame graph, the snapshots.
        plain = SCRIPT_RE.sub("", html)
        for what in ('id="figures"', "keep_small", "keep_large", 'id="snapshot-list"',
                     "snapshot-1.pb.gz", 'id="refresh"', "Reloaded every 10 s", "<svg"):
            check(what in plain, "without scripts, the page lacks %s" % what, plain[:2000])
        html0 = s.text("/?refresh=0")
        check("http-equiv" not in html0 and "Not reloaded" in html0, "?refresh=0 still reloads", html0[:600])
        check_eq(s.get("/?refresh=x")[0], 400, "?refresh=x")
        # With scripts, in Chromium: the controls, parts replaced in place.
        dom, log = browser.dump_dom(s.url + "/", query="refresh=1", budget_ms=6000)
        check(not browser.js_errors(log), "script errors: %s" % browser.js_errors(log), mtlib.tail(log, 30))
        check(not re.search(r"Content.Security.Policy", log), "CSP violations", mtlib.tail(log, 30))
        check('id="refresh-pause"' in dom and 'id="refresh-every"' in dom,
              "no pause button or interval choice in the DOM", dom[:1500])
        loads = re.search(r'data-loads="(\d+)"', dom)
        check(loads and int(loads.group(1)) >= 1, "the page refreshed no part in 6 s at ?refresh=1",
              (loads and loads.group(0)) or dom[:1500])
        check("keep_small" in dom and 'id="snapshot-list"' in dom and 'id="figures"' in dom,
              "the refreshed page lost its parts", dom[:2000])
        s.finish()
    finally:
        s.close()


def table_rows(html):
    """[(function, before, after, change)] of /diff's table (--unit B)."""
    m = re.search(r'<table id="diff-table">(.*?)</table>', html, re.S)
    check(m, "no table in /diff", html[:1500])
    rows = []
    for r in re.finditer(r'<tr><td>([^<]*)</td><td class="n">(-?\d+)B</td><td class="n">(-?\d+)B</td>'
                         r'<td class="n[^"]*">([-+]?\d+)B</td></tr>', m.group(1)):
        rows.append((r.group(1), int(r.group(2)), int(r.group(3)), int(r.group(4))))
    check(rows, "no rows in /diff's table", m.group(1)[:1000])
    return rows


@test("http_views.diff_table")
def _diff_table():
    """/diff?a=&b= is a page: a table of before, after and change per
    function (the served's exact bytes), largest |change| first, and the
    flame graph of the difference; /diff.txt is the text."""
    s = Served(["--snapshot-interval", "0"])
    try:
        s.tick(3)
        a = post_snapshot(s)
        s.tick(6)
        b = post_snapshot(s)
        status, headers, body = s.get("/diff?a=%d&b=%d&metric=alloc_space" % (a, b))
        check_eq(status, 200, "/diff")
        check(headers["Content-Type"].startswith("text/html"), "/diff is not HTML: %s" % headers["Content-Type"])
        html = body.decode()
        rows = table_rows(html)
        check_eq(rows[0], ("tick", 3 * TICK_SIZE, 9 * TICK_SIZE, 6 * TICK_SIZE), "the first row: tick's change")
        by = {r[0]: r[1:] for r in rows}
        check_eq(by.get("keep_small"), (SMALL, SMALL, 0), "keep_small's row")
        check_eq(by.get("keep_large"), (LARGE, LARGE, 0), "keep_large's row")
        changes = [abs(r[3]) for r in rows]
        check_eq(changes, sorted(changes, reverse=True), "rows by |change|")
        check('<svg' in html and 'data-d="%d"' % (6 * TICK_SIZE) in html, "no flame graph of the difference", html[-2000:])
        # Back: what shrank is negative, first too.
        rows = table_rows(s.text("/diff?a=%d&b=%d&metric=alloc_space" % (b, a)))
        check_eq(rows[0], ("tick", 9 * TICK_SIZE, 3 * TICK_SIZE, -6 * TICK_SIZE), "b less a: tick's row")
        # In use: keep_* did not change, tick holds nothing.
        rows = table_rows(s.text("/diff?a=%d&b=%d" % (a, b)))
        check_eq(sorted(rows), [("keep_large", LARGE, LARGE, 0), ("keep_small", SMALL, SMALL, 0)],
                 "inuse_space rows")
        txt = s.text("/diff.txt?a=%d&b=%d" % (a, b))
        check(txt.startswith("memtrace ") and "Showing top" in txt, "/diff.txt is not the text report", txt[:300])
        check_eq(s.get("/diff?a=1&b=99")[0], 404, "a diff with a snapshot never taken")
        rows = table_rows(s.text("/diff?a=%d&b=%d&metric=alloc_space&comm=serv*&pid=%d" % (a, b, s.pid)))
        check_eq(rows[0], ("tick", 3 * TICK_SIZE, 9 * TICK_SIZE, 6 * TICK_SIZE), "?comm=serv*&pid=: tick's row")
        status, _, body = s.get("/diff?a=%d&b=%d&comm=py*" % (a, b))
        check_eq((status, body), (404, b"no traced process has a name matching py*\n"), "/diff?comm=py*")
        check_eq(s.get("/diff?a=1&b=2&focus=(")[0], 400, "a diff with a bad regex")
        s.finish()
    finally:
        s.close()


@test("http_views.diff_flame")
def _diff_flame():
    """The differential flame graph: what grew red, what shrank blue, as
    /diff.svg and as `memtrace report A --base B --svg`."""
    s = Served(["--snapshot-interval", "0"])
    try:
        a = post_snapshot(s)
        s.tick(6)
        b = post_snapshot(s)
        for x, y, sign, col in ((a, b, 1, "red"), (b, a, -1, "blue")):
            status, headers, body = s.get("/diff.svg?a=%d&b=%d&metric=alloc_space" % (x, y))
            check_eq(status, 200, "/diff.svg")
            check_eq(headers["Content-Type"], "image/svg+xml", "/diff.svg's type")
            svg = body.decode()
            check("<script" in svg and "Differential flame graph" in svg, "/diff.svg: interactive, titled", svg[:600])
            name, d, fill = frame_of(svg, "tick")
            check_eq((d, colour(fill)), (sign * 6 * TICK_SIZE, col), "tick's frame in %d less %d" % (y, x))
        with tempfile.TemporaryDirectory() as d:
            # Two profiles of one moment, each of one function: the first
            # less the second grew in keep_small, shrank in keep_large.
            fa = save(s, "/debug/pprof/heap?focus=keep_small", os.path.join(d, "small.pb.gz"))
            fb = save(s, "/debug/pprof/heap?focus=keep_large", os.path.join(d, "large.pb.gz"))
            out = os.path.join(d, "diff.svg")
            res = mtlib.run_memtrace(["report", fa, "--base", fb, "--svg", out])
            check_eq(res.rc, 0, "memtrace report A --base B --svg", mtlib.tail(res.stderr))
            with open(out) as f:
                svg = f.read()
        got = {n: (dd, colour(fill)) for n, dd, fill in frames(svg)}
        check_eq(got.get("keep_small"), (SMALL, "red"), "keep_small in A less B", sorted(got.items()))
        check_eq(got.get("keep_large"), (-LARGE, "blue"), "keep_large in A less B", sorted(got.items()))
        check_eq(got.get("main"), (SMALL - LARGE, "blue"), "main (both) in A less B", sorted(got.items()))
        check("decreases not drawn" not in svg, "the difference's flame graph leaves out decreases")
        s.finish()
    finally:
        s.close()


VIEWS = [("focus", "keep_small"), ("ignore", "keep_small"), ("hide", "keep_"), ("show_from", "keep_large"),
         ("show", "main|keep_small"), ("tagignore", "comm=served")]


@test("http_views.views")
def _views():
    """?focus= ... on /debug/pprof/heap: the profile `memtrace report
    --focus` makes of the same profile saved (and go tool pprof -focus);
    /report and the page say the view; a bad regex is a 400 in one line."""
    s = Served()
    try:
        s.tick(4)
        with tempfile.TemporaryDirectory() as d:
            full = save(s, "/debug/pprof/heap", os.path.join(d, "full.pb.gz"))
            for key, expr in VIEWS:
                q = "/debug/pprof/heap?" + key + "=" + expr.replace("|", "%7C")
                viewed = save(s, q, os.path.join(d, key + ".pb.gz"))
                want = report_json(full, ["--" + key.replace("_", "-"), expr])
                got = report_json(viewed)
                for m in ("inuse_space", "alloc_space"):
                    check_eq(named(got, m), named(want, m), "%s: functions' %s = report --%s" % (q, m, key))
            # go tool pprof -focus on the full profile = ?focus='s.
            go = mtlib.which("go")
            check(go, "go is not installed (scripts/install-deps.sh installs golang-go)")
            tops = []
            for path, args in ((full, ["-focus=keep_small"]), (os.path.join(d, "focus.pb.gz"), [])):
                res = mtlib.run([go, "tool", "pprof", "-top", "-unit=B"] + args + [path], env=go_env(), timeout=120)
                check_eq(res.rc, 0, "go tool pprof -top %s" % " ".join(args), mtlib.tail(res.stderr))
                tops.append(go_flat(res.stdout)[0])
            check_eq(tops[1], tops[0], "go tool pprof: ?focus='s profile = -focus on the whole")
            check_eq(tops[1].get("keep_small"), SMALL, "go tool pprof: keep_small in ?focus=keep_small")
            check("keep_large" not in tops[1], "keep_large under ?focus=keep_small", tops[1])
        status, _, body = s.get("/debug/pprof/allocs?ignore=tick&debug=1")
        check(status == 200 and b"tick" not in body and b"keep_small" in body, "/allocs?ignore=tick",
              body[:500].decode(errors="replace"))
        rep = s.text("/report?metric=alloc_space&focus=tick")
        check(re.search(r"^view: focus=tick$", rep, re.M), "/report does not say its view", rep[:600])
        check(re.search(r"^allocated: %d bytes" % (4 * TICK_SIZE), rep, re.M), "/report?focus=tick: allocated", rep[:600])
        page = s.text("/?focus=keep_large")
        check("keep_large" in page and "keep_small" not in page, "the page's flame graph under ?focus=", page[-3000:])
        check('href="/?metric=alloc_space&amp;refresh=10&amp;focus=keep_large"' in page
              and 'href="/flame.svg?metric=inuse_space&amp;focus=keep_large"' in page,
              "the page's links lose its view", page[:3000])
        page = s.text("/?focus=a%7Cb%26c&refresh=5")
        check('href="/?metric=inuse_space&amp;refresh=30&amp;focus=a%7Cb%26c"' in page,
              "the page's links: the view not encoded", page[:3000])
        for key, expr in (("focus", "("), ("hide", "%5B"), ("show_from", "a("), ("tagfocus", "comm=(")):
            status, _, body = s.get("/debug/pprof/heap?%s=%s" % (key, expr))
            text = body.decode(errors="replace")
            check_eq(status, 400, "?%s=%s" % (key, expr), text)
            check(text.count("\n") == 1 and text.endswith("\n") and text.startswith(key + ": "),
                  "?%s=%s: not one line naming %s: %r" % (key, expr, key, text))
        status, _, body = s.get("/report?focus=nothing_here")
        check(status == 200 and re.search(rb"^in use: 0 bytes", body, re.M), "?focus= matching nothing: an empty profile",
              body[:500].decode(errors="replace"))
        s.finish()
    finally:
        s.close()


@test("http_views.comm_glob")
def _comm_glob():
    """?comm= takes a glob (as --comm); a glob matching nothing is a 404
    that says so, as a name matching nothing."""
    s = Served()
    try:
        for q in ("comm=serv*", "comm=s%3Frved", "comm=%5Bs%5Derved", "comm=served"):
            status, _, body = s.get("/report?" + q)
            text = body.decode(errors="replace")
            check_eq(status, 200, "/report?%s" % q, text[:300])
            check("keep_small" in text, "/report?%s: no keep_small" % q, text[:600])
        status, _, body = s.get("/debug/pprof/heap?comm=py*")
        check_eq((status, body), (404, b"no traced process has a name matching py*\n"), "?comm=py*")
        status, _, body = s.get("/report?comm=python3")
        check_eq((status, body), (404, b"no traced process is named python3\n"), "?comm=python3")
        status, _, body = s.get("/report?comm=" + "x" * 20)
        check_eq(status, 400, "?comm= a name of 20 characters")
        s.finish()
    finally:
        s.close()


@test("http_views.cmdline_view")
def _cmdline_view():
    """memtrace --focus keep_large --http: every answer shows that view
    (the report at the end does too), unless the request gives its own
    ?focus=, which then replaces it."""
    s = Served(["--focus", "keep_large"])
    try:
        rep = s.text("/report")
        check(re.search(r"^view: focus=keep_large$", rep, re.M), "/report does not say the command line's view", rep[:600])
        check("keep_large" in rep and "keep_small" not in rep, "/report under --focus keep_large", rep[:2000])
        with tempfile.TemporaryDirectory() as d:
            got = named(report_json(save(s, "/debug/pprof/heap", os.path.join(d, "h.pb.gz"))))
        check_eq(got.get("keep_large", (None,))[0], LARGE,
                 "/debug/pprof/heap under --focus keep_large: keep_large's flat", str(got))
        check("keep_small" not in got, "/debug/pprof/heap under --focus keep_large: keep_small", str(got))
        rep = s.text("/report?focus=keep_small")
        check(re.search(r"^view: focus=keep_small$", rep, re.M) and "keep_large" not in rep,
              "?focus=keep_small does not replace --focus keep_large", rep[:2000])
        s.finish()
    finally:
        s.close()
