#!/usr/bin/python3
"""Run memtrace's integration tests: every test registered by the
test_*.py files beside this one.  Prints one line per test:

    PASS name
    FAIL name: reason        (followed by indented details)
    SKIP name: reason

Usage: run.py [-l] [PATTERN...]   PATTERN: run only the tests whose name
contains one of them; -l: list the tests' names only.
Exit status 1 when a test failed (or, with MEMTRACE_REQUIRE_BPF set, was
skipped), else 0.
"""

import importlib
import os
import shutil
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

import mtlib  # noqa: E402


def load():
    """Import every test_*.py; returns FAIL lines for those that cannot be."""
    here = os.path.dirname(os.path.abspath(__file__))
    broken = []
    for name in sorted(os.listdir(here)):
        if name.startswith("test_") and name.endswith(".py"):
            try:
                importlib.import_module(name[:-3])
            except Exception as e:  # noqa: BLE001 - report it as a failed test
                broken.append(("load." + name[:-3], "%s: %s" % (type(e).__name__, e),
                               traceback.format_exc()))
    return broken


def one_line(s):
    return " ".join(str(s).split()) or "(no reason given)"


def main(argv):
    listing = "-l" in argv
    patterns = [a for a in argv if a != "-l"]
    broken = load()
    tests = [t for t in mtlib.TESTS if not patterns or any(p in t.name for p in patterns)]
    if listing:
        shutil.rmtree(mtlib.TMPDIR, ignore_errors=True)
        for t in tests:
            print(t.name)
        return 0
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for name, reason, details in broken:
        counts["FAIL"] += 1
        print("FAIL %s: %s" % (name, one_line(reason)))
        for line in details.rstrip("\n").splitlines()[-20:]:
            print("    " + line)
    started = time.monotonic()
    try:
        for t in tests:
            details = ""
            t0 = time.monotonic()
            miss = mtlib.missing(t.needs)
            if miss:
                verdict = "FAIL" if miss[0] == "fail" else "SKIP"
                reason = miss[1]
            else:
                try:
                    t.func()
                    verdict, reason = "PASS", None
                except mtlib.Skip as e:
                    verdict, reason = ("FAIL" if mtlib.require_bpf() else "SKIP"), str(e)
                except mtlib.Fail as e:
                    verdict, reason, details = "FAIL", str(e), e.details
                except Exception as e:  # noqa: BLE001 - a harness bug is a failure
                    verdict, reason = "FAIL", "%s: %s" % (type(e).__name__, e)
                    details = traceback.format_exc()
            counts[verdict] += 1
            if reason is None:
                print("PASS %s" % t.name, flush=True)
            else:
                print("%s %s: %s" % (verdict, t.name, one_line(reason)), flush=True)
            if details and verdict == "FAIL":
                for line in details.rstrip("\n").splitlines()[-40:]:
                    print("    " + line)
                sys.stdout.flush()
            if os.environ.get("MEMTRACE_TEST_VERBOSE"):
                print("    (%.1fs)" % (time.monotonic() - t0), flush=True)
    finally:
        shutil.rmtree(mtlib.TMPDIR, ignore_errors=True)
    print("# integration: %d passed, %d failed, %d skipped in %.0fs"
          % (counts["PASS"], counts["FAIL"], counts["SKIP"], time.monotonic() - started))
    bad = counts["FAIL"] or (mtlib.require_bpf() and counts["SKIP"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
