"""A big C++ program, as a user would trace it: clang-14 -fsyntax-only on a
file including <vector> <map> <string> <regex>, with default flags.  Its
unwind tables (libLLVM, libclang-cpp, libz3, libicuuc...: some 2.5 million
rows) fit the row store, and its deep template stacks (over 200 frames)
are kept whole: no "unwind tables full" message, no stack dropped for a
full stack map, a stack deeper than the old 127-frame cap, and at least
99% of the bytes allocated reach main.  Slow: some 20 s on a quiet
machine."""

import os
import re
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test

CLANG = "/usr/bin/clang-14"
SOURCE = """#include <vector>
#include <map>
#include <string>
#include <regex>
int main()
{
    std::regex r("a+b*");
    std::map<std::string, std::vector<int>> m;
    m["x"].push_back(1);
    return std::regex_match("aab", r) ? (int)m.size() : 0;
}
"""
MIN_MAIN_SHARE = 0.99


@test("big.clang")
def _clang():
    check(os.access(CLANG, os.X_OK), "%s is missing (scripts/install-deps.sh installs it)" % CLANG)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "x.cpp")
        raw = os.path.join(d, "clang.raw")
        with open(src, "w", encoding="utf-8") as f:
            f.write(SOURCE)
        res = mtlib.run_memtrace(["-v", "--raw=" + raw, "--text", "-n", "1", "--",
                                  CLANG, "-fsyntax-only", src], timeout=600)
        det = "command: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
            " ".join(res.argv), res.rc, mtlib.tail(
                "\n".join(l for l in res.stderr.splitlines() if not l.startswith("libbpf:")), 30),
            mtlib.tail(res.stdout, 20))
        check_eq(res.rc, 0, "exit status", det)
        with open(raw, encoding="utf-8") as f:
            stacks = parse_raw(f.read(), det)
    check("unwind tables full" not in res.stderr, "the unwind tables filled up", det)
    m = re.search(r"stack map full (\d+)", res.stdout)
    check(m, "no drops line", det)
    check_eq(int(m.group(1)), 0, "stacks dropped: stack map full", det)
    total = sum(s.alloc_bytes for s in stacks)
    to_main = sum(s.alloc_bytes for s in stacks
                  if any(f.function.split("(", 1)[0] == "main" for f in s.frames))
    deepest = max(len(s.ips) for s in stacks)
    print("  clang-14: %.2f%% of %d bytes reach main, %d stacks, deepest %d frames"
          % (100.0 * to_main / total, total, len(stacks), deepest))
    check(deepest > 127, "deepest stack %d frames: none past the old cap" % deepest, det)
    check(to_main >= MIN_MAIN_SHARE * total,
          "%.2f%% of bytes reach main, less than %.0f%%"
          % (100.0 * to_main / total, 100 * MIN_MAIN_SHARE), det)
