"""`memtrace report` on mutated profiles, under ASan/UBSan
(scripts/fuzz-reports.py with build/memtrace-asan): the inputs that once
failed (tests/data/fuzz/found/), then a corpus mutated from the seeds
(tests/data/fuzz/seeds/: gperftools, jemalloc and Go text profiles, and
pprof) for a bounded time, MEMTRACE_FUZZ_SECONDS (default 30).  Fails on
a crash, a sanitizer report, a hang (10 s) or an exit 1 with no
"memtrace: " line saying why; the failing inputs are kept and named."""

import os
import sys

import mtlib
from mtlib import check, test

SCRIPT = os.path.join(mtlib.ROOT, "scripts", "fuzz-reports.py")


@test("fuzz.reports", needs=("memtrace",))
def _reports():
    seconds = float(os.environ.get("MEMTRACE_FUZZ_SECONDS") or 30)
    res = mtlib.run([sys.executable, SCRIPT, "--seconds", str(seconds)], timeout=seconds + 120)
    last = (res.stdout.strip().splitlines() or ["(no output)"])[-1]
    check(res.rc == 0, "%s (exit status %d)" % (last, res.rc),
          mtlib.tail(res.stdout + res.stderr, 40))
