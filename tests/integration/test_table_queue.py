"""The unwind tables' builders: a small table is not held up behind a
large one being made (src/loader/unwind/unwinder.c), nor a process
behind another's table (src/loader/tracer/table_holds.c).

- table_queue.small_beside_large: python3 dlopens libLLVM-14 (948,865
  rows: 0.24-0.4 s to make on an idle machine, 5-19 s on a loaded one;
  made 3 s slower here, MEMTRACE_SLOW_TABLE, so that the order does not
  depend on the load), then at once a library built here (a new file, a new build id, a table
  of a few rows), and allocates through it once its table is in: the
  small library's table is loaded before libLLVM's, and its stacks are
  whole.  With one builder
  taking the files in the order asked, the small one waited for
  libLLVM's: system-wide, every short-lived program that started while a
  large table was being made for another (cc1, clang) had its stacks cut
  short (scripts/first_runs.sh, BENCHMARKS.md "First runs").
  `--no-follow`: nothing is held at ld.so's hook (following, a dlopen
  holds the process until its tables are made).
- table_queue.hold_own_files: following, a child dlopens a library whose
  table is made slowly (MEMTRACE_SLOW_TABLE, a test hook: 6 s), then the
  parent dlopens a small one: the parent's hold ends before the slow
  table is in (-v's lines, in order), and its stacks are whole.  Before,
  a hold waited for every table queued, and blocked memtrace's loop
  meanwhile: the parent's hold was not even looked at until then.
"""

import os
import re
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test

LLVM = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

SMALL_C = r"""
#include <stdlib.h>
const char small_tag[] = "%s";
/* small_leaf tail-calls malloc: its frame is not on the stack. */
__attribute__((noinline)) static void *small_leaf(int i) { return malloc(100 + i); }
__attribute__((noinline)) void small_work(void)
{
	for (int i = 0; i < 50; i++) {
		void *p = small_leaf(i);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}
"""

# The small library is allocated through once told (a line on stdin),
# when its table is in: the stacks taken before it would go through
# deferred unwinding, whose copies depend on the machine's load.  Then
# python3 waits for another line: until libLLVM's table is in.
SCRIPT = """
import ctypes, sys
ctypes.CDLL(sys.argv[1])
small = ctypes.CDLL(sys.argv[2])
sys.stdin.readline()
small.small_work()
sys.stdin.readline()
"""

_TABLE = re.compile(r"^memtrace: unwind table of (\S+): ", re.M)


@test("table_queue.small_beside_large")
def _small_beside_large():
    if not os.path.exists(LLVM):
        raise mtlib.Skip("%s not installed (llvm-14, a build dependency)" % LLVM)
    tag = "%d_%d" % (os.getpid(), int.from_bytes(os.urandom(4), "little"))
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        src, small = os.path.join(d, "small.c"), os.path.join(d, "libsmall_%s.so" % tag)
        with open(src, "w", encoding="utf-8") as f:
            f.write(SMALL_C % tag)
        res = mtlib.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-fPIC", "-shared",
                         "-Wl,--build-id", "-o", small, src])
        check_eq(res.rc, 0, "gcc small.c", res.stderr)
        raw = os.path.join(d, "stacks.raw")
        # A cache of its own, empty: libLLVM's table is made, not read;
        # and 3 s slower (test hook), as on a loaded machine: the order
        # then says whether the small one waited, whatever the load (in
        # a CI run libLLVM's took 0.23 s, and the second builder was still
        # on libLLVM's dependencies when the small one was asked for).
        env = dict(os.environ, MEMTRACE_UNWIND_CACHE=os.path.join(d, "cache"),
                   MEMTRACE_SLOW_TABLE="libLLVM-14:3000")
        mt = mtlib.Bg([mtlib.MEMTRACE, "-v", "--no-follow", "--raw=" + raw, "--text=/dev/null", "--",
                       "/usr/bin/python3", "-c", SCRIPT, LLVM, small], env=env)
        try:
            # Whichever comes first (in the order memtrace says them).
            seen = set()
            for _ in range(2):
                line = mt.err.wait_for(lambda l: _TABLE.match(l) and any(
                    n in l and n not in seen for n in (os.path.basename(LLVM), os.path.basename(small))), 180)
                if line is None:
                    break
                seen.update(n for n in (os.path.basename(LLVM), os.path.basename(small)) if n in line)
                mt.send("\n")
            rc = mt.wait(120)
        finally:
            mtlib.kill_quietly(mt)
        stderr = mt.err.text()
        det = "command: %s\nexit status: %s\nstderr:\n%s" % (
            " ".join(mt.argv), rc,
            "\n".join(l for l in stderr.splitlines() if "unwind table" in l or "deferred" in l))
        check(line is not None, "no table loaded for libLLVM or the small library", det)
        check_eq(rc, 0, "exit status", det)
        order = [os.path.basename(p) for p in _TABLE.findall(stderr)]
        name, llvm = os.path.basename(small), os.path.basename(LLVM)
        check(name in order, "no table loaded for %s" % name, det)
        # libLLVM's table is asked for as ld.so maps it, the small one's
        # as soon as CDLL(libLLVM) returns: some 0.1 s later, while one
        # builder is still making libLLVM's (3 s and more).
        check(order.index(name) < order.index(llvm),
              "the small library's table (#%d) was loaded after libLLVM's (#%d): it waited for it"
              % (order.index(name) + 1, order.index(llvm) + 1), det)
        with open(raw, encoding="utf-8") as f:
            stacks = parse_raw(f.read(), det)
    mine = [s for s in stacks if any(fr.function == "small_work" for fr in s.frames)]
    check_eq(sum(s.alloc_objects for s in mine), 50, "allocations through small_work", det)
    for s in mine:
        funcs = [fr.function for fr in s.frames]
        check(funcs[-1] == "_start" and any(f in ("main", "__libc_start_call_main") for f in funcs),
              "a stack through the small library is not whole: %s" % funcs, det)


# A child dlopens a library whose table the builder is told to make
# slowly (MEMTRACE_SLOW_TABLE: as libLLVM's or cc1's on a loaded
# machine); once the child has mapped it, the parent dlopens a small one
# and allocates through it.
FAMILY_SCRIPT = """
import ctypes, subprocess, sys, time
slow, small = sys.argv[1], sys.argv[2]
a = subprocess.Popen([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", slow])
print("child", a.pid, flush=True)
end = time.time() + 120
while time.time() < end:
    with open("/proc/%d/maps" % a.pid) as f:
        if slow in f.read():
            break
    time.sleep(0.01)
ctypes.CDLL(small).small_work()
print("parent done", flush=True)
sys.exit(a.wait())
"""

SLOW_MS = 6000
_HELD = re.compile(r"^memtrace: pid (\d+) held at ld.so's hook after its start ([\d.]+) ms", re.M)


@test("table_queue.hold_own_files")
def _hold_own_files():
    """Following (-- CMD), a process held at its dlopen waits for the
    tables of its own files only: the parent's hold for its small library
    ends before the child's slow table is in."""
    tag = "%d_%d" % (os.getpid(), int.from_bytes(os.urandom(4), "little"))
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        libs = {}
        for role in ("slow", "small"):
            src, lib = os.path.join(d, role + ".c"), os.path.join(d, "lib%s_%s.so" % (role, tag))
            with open(src, "w", encoding="utf-8") as f:
                f.write(SMALL_C % (role + tag))
            res = mtlib.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-fPIC", "-shared",
                             "-Wl,--build-id", "-o", lib, src])
            check_eq(res.rc, 0, "gcc %s.c" % role, res.stderr)
            libs[role] = lib
        raw = os.path.join(d, "stacks.raw")
        env = dict(os.environ, MEMTRACE_UNWIND_CACHE=os.path.join(d, "cache"),
                   MEMTRACE_SLOW_TABLE="libslow_%s:%d" % (tag, SLOW_MS))
        res = mtlib.run([mtlib.MEMTRACE, "-v", "--raw=" + raw, "--text=/dev/null", "--",
                         "/usr/bin/python3", "-c", FAMILY_SCRIPT, libs["slow"], libs["small"]],
                        env=env, timeout=240)
        det = "command: memtrace -v -- python3 -c FAMILY_SCRIPT\nexit status: %s\nstdout:\n%s\nstderr:\n%s" % (
            res.rc, res.stdout,
            "\n".join(l for l in res.stderr.splitlines()
                      if "unwind table of" in l or "held" in l))
        check_eq(res.rc, 0, "exit status", det)
        m = re.search(r"^child (\d+)$", res.stdout, re.M)
        check(m is not None and "parent done" in res.stdout, "the script did not run through", det)
        child = int(m.group(1))
        lines = res.stderr.splitlines()
        table_at = {}
        for role in ("slow", "small"):
            at = [i for i, l in enumerate(lines)
                  if l.startswith("memtrace: unwind table of ") and "lib%s_%s" % (role, tag) in l]
            check(at, "no table loaded for the %s library" % role, det)
            table_at[role] = at[0]
        # The parent's hold at its dlopen of the small library (the first
        # it said after that library's table) ended before the slow table,
        # its child's, was in: it did not wait for it.
        held = [(i, float(h.group(2))) for i, l in enumerate(lines) for h in [_HELD.match(l)]
                if h and int(h.group(1)) != child and i > table_at["small"]]
        check(held, "no dlopen hold of the parent said (-v) after the small library's table", det)
        i, ms = held[0]
        check(i < table_at["slow"],
              "the parent's hold at its dlopen (%.1f ms) ended after the child's slow table "
              "(%d ms) was in: it waited for another process's table" % (ms, SLOW_MS), det)
        with open(raw, encoding="utf-8") as f:
            stacks = parse_raw(f.read(), det)
    mine = [s for s in stacks if any(fr.function == "small_work" for fr in s.frames)]
    check_eq(sum(s.alloc_objects for s in mine), 50, "allocations through small_work", det)
    for s in mine:
        funcs = [fr.function for fr in s.frames]
        check(funcs[-1] == "_start", "a stack through the small library is not whole: %s" % funcs, det)
