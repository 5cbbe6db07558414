"""memtrace itself built with sanitizers (`make memtrace-asan memtrace-tsan`,
tests/sanitize.mk) and driven through the parts that a plain build would
get through silently: AddressSanitizer + UBSan over live tracing with
interval reports of a followed command, ThreadSanitizer over the threaded
parts (the HTTP bridge, the unwind-table builder, the loop).

A run passes when memtrace exits 0 with no sanitizer report on stderr and
its final report has the numbers the program is known to have."""

import contextlib
import http.client
import os
import re
import signal
import threading

import mtlib
from mtlib import check, check_eq, test
import test_timeline

ASAN = os.path.join(mtlib.ROOT, "build", "memtrace-asan")
TSAN = os.path.join(mtlib.ROOT, "build", "memtrace-tsan")

# What a sanitizer prints when it finds something (UBSan: "runtime error").
SAN_RE = re.compile(r"runtime error:|ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|"
                    r"WARNING: ThreadSanitizer")


def sanitized(path):
    if not os.access(path, os.X_OK):
        raise mtlib.Fail("%s is not built (make %s)" % (path, os.path.basename(path)))
    return path


def check_clean(res, what):
    details = "command: %s\nexit status: %s\nstderr:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 40))
    m = SAN_RE.search(res.stderr)
    check(m is None, "%s: sanitizer report: %s" % (what, m and m.group(0)), details)
    check_eq(res.rc, 0, "%s: exit status" % what, details)


@test("sanitizers.asan_live_intervals")
def _asan_live_intervals():
    """-i with a followed command: an interval report is taken while no
    process has exited yet (tracer.c's append_raw once passed memcpy a NULL
    source then).  Every report one of phases.c's states, the last exact."""
    d = os.path.join(mtlib.TMPDIR, "asan.intervals")
    os.makedirs(d, exist_ok=True)
    res = mtlib.run([sanitized(ASAN), "-i", "0.3", "--keep", "0", "--unit", "B",
                     "--text=%s/r.txt" % d, "--", mtlib.prog_path("phases")])
    check_clean(res, "memtrace-asan -i 0.3 -- phases")
    names = sorted(n for n in os.listdir(d) if re.match(r"^r\.\d+\.txt$", n))
    check(len(names) >= 3, "only %d interval reports: %s" % (len(names), os.listdir(d)))
    legal = {s[2][0] for s in test_timeline.states()} | {0}
    for n in names:
        with open(os.path.join(d, n)) as f:
            rep = mtlib.parse_report(f.read())
        check(rep.inuse[0] in legal, "%s: %d bytes in use is none of the states %s"
              % (n, rep.inuse[0], sorted(legal)))
    with open(os.path.join(d, "r.txt")) as f:
        final = mtlib.parse_report(f.read())
    v = test_timeline.defines()
    check_eq(final.inuse, (v["A2"] + v["D"], 2), "the final report's in use")


@contextlib.contextmanager
def memtrace_binary(path):
    """mtlib's memtrace (and every helper's that uses it) is PATH inside."""
    saved = mtlib.MEMTRACE
    mtlib.MEMTRACE = sanitized(path)
    try:
        yield
    finally:
        mtlib.MEMTRACE = saved


def tsan_env():
    # A race report ends the run at once with its own exit status (66).
    return dict(os.environ, TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1")


@test("sanitizers.tsan_http")
def _tsan_http():
    """--http under ThreadSanitizer: the server's threads (one per
    connection), the bridge's requests to the loop and its snapshots
    thread, with requests from 8 clients at once while the program
    allocates, snapshots by POST and SIGUSR1, a ?seconds= window; then
    the final report exact (served.c's blocks)."""
    import test_http

    saved_env = os.environ.get("TSAN_OPTIONS")
    os.environ["TSAN_OPTIONS"] = tsan_env()["TSAN_OPTIONS"]
    try:
        with memtrace_binary(TSAN):
            s = test_http.Served(["--snapshot-interval", "0.5"])
    finally:
        if saved_env is None:
            os.environ.pop("TSAN_OPTIONS", None)
        else:
            os.environ["TSAN_OPTIONS"] = saved_env
    try:
        paths = ["/debug/pprof/heap", "/debug/pprof/allocs", "/metrics", "/",
                 "/debug/pprof/heap?debug=1", "/debug/pprof/allocs?seconds=1"]
        errors = []

        def client(k):
            for i in range(6):
                try:
                    if (k + i) % 5 == 0:
                        c = http.client.HTTPConnection(s.url[len("http://"):], timeout=60)
                        c.request("POST", "/snapshots")
                        c.getresponse().read()
                        c.close()
                    else:
                        status, _, _ = s.get(paths[(k + i) % len(paths)])
                        if status != 200:
                            errors.append("status %d" % status)
                except OSError as e:
                    errors.append(str(e))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for k in range(5):
            s.tick(20)
            s.mt.signal(signal.SIGUSR1)
        for t in threads:
            t.join(120)
        if not s.mt.alive():  # died: of a sanitizer report?
            err = s.mt.err.text(5)
            m = SAN_RE.search(err)
            check(m is None, "sanitizer report: %s" % (m and m.group(0)), mtlib.tail(err, 60))
        check(not errors, "requests failed: %s" % errors[:5], s.mt.details())
        text = s.finish()
        err = s.mt.err.text()
        m = SAN_RE.search(err)
        check(m is None, "sanitizer report: %s" % (m and m.group(0)), mtlib.tail(err, 60))
        rep, flat = test_http.flat_of(text)
        check_eq((flat.get("keep_small"), flat.get("keep_large")),
                 (test_http.SMALL, test_http.LARGE), "bytes in use at exit", text)
    finally:
        s.close()


@test("sanitizers.tsan_unwind")
def _tsan_unwind():
    """The unwind-table builder's thread under ThreadSanitizer: six
    libraries without frame pointers dlopened while traced (tables built
    as ld.so maps them), every first stack through each whole
    (test_unwind.py's unwind.dlopen_soon, with this binary)."""
    import test_unwind

    saved_env = os.environ.get("TSAN_OPTIONS")
    os.environ["TSAN_OPTIONS"] = tsan_env()["TSAN_OPTIONS"]
    try:
        with memtrace_binary(TSAN):
            test_unwind._dlopen_soon()
    except mtlib.Fail as e:
        m = SAN_RE.search(e.details or "")
        raise mtlib.Fail(("sanitizer report: " + m.group(0)) if m else str(e), e.details)
    finally:
        if saved_env is None:
            os.environ.pop("TSAN_OPTIONS", None)
        else:
            os.environ["TSAN_OPTIONS"] = saved_env
