"""dlopen on a program's first run, system-wide: the first stacks through
a library the program loads are whole and named, although the program
exits before memtrace can read its mappings again.

- system.first_run_dlopen: a program compiled here allocates once (its
  mappings are read then, and told by the kernel), waits a moment, then
  dlopens six libraries built here (new files, new build ids, no frame
  pointers), allocates through each the moment dlopen returns (1000 + i
  bytes: main -> call_soon -> plugin_outer -> plugin_inner -> malloc),
  and exits at once, while `memtrace -d N` traces the machine with an
  empty table cache.  Each block's stack has the whole chain to main, its
  leaf named in its library, and no frame of the process is unplaced
  (`[unknown]`).  ld.so's hook tells the BPF program of each dlopen, which
  tells the loader of the new mappings then (bpf/vma_dump.h): nothing
  else would, the process gone before a scan of /proc.
- system.first_run_shell_fork: a copy of bash (a file with no table yet)
  forks and execs sleep; the child's allocations between fork and exec,
  in the shell's code, are copied and unwound after the exec replaced
  its mappings: unwound and named with the mappings it had then (the
  kernel marks a dump that follows an exec, and the loader keeps the
  old image's mappings): no frame unplaced, no 'bad stack' for it.
"""

import os
import random
import re
import shutil
import subprocess
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test

LIBS = 6

PROG = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
const char tag[] = "%(tag)s"; /* a new build id each time */
static void *volatile keep[64];
volatile unsigned long soon_spill;
__attribute__((noinline)) void *call_soon(void *(*outer)(size_t), size_t n)
{ void *p = outer(n); soon_spill++; return p; }
int main(int argc, char **argv)
{
	/* The first stack: the process's mappings are read and told now,
	 * before any library below is mapped. */
	keep[63] = malloc(77);
	usleep(300 * 1000);
	for (int i = 1; i < argc; i++) {
		void *(*outer)(size_t);
		void *h = dlopen(argv[i], RTLD_NOW);

		if (!h) {
			fprintf(stderr, "%%s\n", dlerror());
			return 1;
		}
		outer = (void *(*)(size_t))dlsym(h, "plugin_outer");
		if (!outer)
			return 1;
		keep[i - 1] = call_soon(outer, 1000 + (size_t)i - 1);
	}
	return (int)(soon_spill & 0) + (tag[0] == 0);
}
"""

CHAIN = ["plugin_inner", "plugin_outer", "call_soon", "main"]


def _build(d, tag):
    """The program and LIBS libraries of nofp_plugin.c, each of its own."""
    prog_c, prog = os.path.join(d, "fdl.c"), os.path.join(d, "fdl" + tag[:8])
    with open(prog_c, "w") as f:
        f.write(PROG % {"tag": tag})
    r = mtlib.run(["gcc", "-O1", "-o", prog, prog_c, "-ldl"])
    check_eq(r.rc, 0, "gcc of the program", r.stderr)
    src = os.path.join(mtlib.PROGS_SRC, "nofp_plugin.c")
    libs = []
    for i in range(LIBS):
        tag_c = os.path.join(d, "tag%d.c" % i)
        with open(tag_c, "w") as f:
            f.write('const char fresh_tag[] = "%s-%d";\n' % (tag, i))
        lib = os.path.join(d, "libfdl%d.so" % i)
        r = mtlib.run(["gcc", "-O2", "-g", "-fomit-frame-pointer", "-fPIC", "-shared",
                       "-Wl,--build-id", "-o", lib, src, tag_c])
        check_eq(r.rc, 0, "gcc of " + lib, r.stderr)
        libs.append(lib)
    return prog, libs


def _unplaced(s):
    """The frames of raw stack S that no mapping holds."""
    return [ip for ip in s.ips if ip.module.startswith("[unknown")] + \
        [f for f in s.frames if f.function.startswith("[unknown]")]


@test("system.first_run_dlopen")
def _first_run_dlopen():
    d = tempfile.mkdtemp(prefix="mt-fdl-")
    try:
        _dlopen_case(d)
    finally:
        shutil.rmtree(d, True)


def _dlopen_case(d):
    tag = "%016x" % random.getrandbits(64)
    prog, libs = _build(d, tag)
    raw = os.path.join(d, "raw.txt")
    env = dict(os.environ, MEMTRACE_UNWIND_CACHE=os.path.join(d, "cache"))
    ran = []

    def run(_mt):
        ran.append(subprocess.Popen([prog] + libs))
        check_eq(ran[0].wait(30), 0, "the program's exit status")

    # Bounded (-d): a system-wide memtrace left running disturbs everything.
    mt = mtlib.system_wide(["-v", "-d", "40", "--raw=" + raw, "-n", "5"], run, env=env,
                           settle=1, timeout=120)
    p = ran[0]
    with open(raw) as f:
        text = f.read()
    stacks = [s for s in parse_raw(text, mt.details()) if s.pid == p.pid]
    shown = "\n".join("%d B in %d: %s" % (s.alloc_bytes, s.alloc_objects,
                                           ";".join("%s(%s)" % (ip.module, f.function)
                                                    for ip, f in zip(reversed(s.ips),
                                                                     reversed(s.frames))))
                      for s in stacks)
    details = mt.details() + "\nstacks of pid %d:\n%s" % (p.pid, shown)
    for i in range(LIBS):
        hits = [s for s in stacks if s.alloc_bytes == 1000 + i and s.alloc_objects == 1]
        check_eq(len(hits), 1, "stacks of the block of %d bytes" % (1000 + i), details)
        names = [f.function for f in hits[0].frames]
        check(any(names[k:k + len(CHAIN)] == CHAIN for k in range(len(names))),
              "the first stack through libfdl%d.so is not %s: %s" % (i, ";".join(CHAIN), names),
              details)
        check_eq(hits[0].ips[0].module, "libfdl%d.so" % i, "the leaf's file", details)
    check_eq([(s.alloc_bytes, [ip.module for ip in _unplaced(s)]) for s in stacks if _unplaced(s)],
             [], "stacks with frames in no mapping", details)


@test("system.first_run_shell_fork")
def _first_run_shell_fork():
    """A shell (a copy of bash: a file whose table is not made yet) forks
    and execs a program: the child's allocations between the fork and the
    exec, in the shell's code, are copied and unwound after the exec has
    replaced its mappings.  They are unwound and named with the mappings
    the process had then: whole (no 'bad stack' for the child), no frame
    unplaced."""
    d = tempfile.mkdtemp(prefix="mt-fork-")
    try:
        _shell_fork_case(d)
    finally:
        shutil.rmtree(d, True)


def _shell_fork_case(d):
    sh = os.path.join(d, "mybash")
    with open("/bin/bash", "rb") as src, open(sh, "wb") as dst:
        dst.write(src.read())
    os.chmod(sh, 0o755)
    raw = os.path.join(d, "raw.txt")
    pidf = os.path.join(d, "pid")
    env = dict(os.environ, MEMTRACE_UNWIND_CACHE=os.path.join(d, "cache"))
    def run(_mt):
        r = subprocess.run([sh, "-c", "/bin/sleep 0.2 & echo $! > %s; wait" % pidf])
        check_eq(r.returncode, 0, "the shell's exit status")

    mt = mtlib.system_wide(["-v", "-d", "40", "--raw=" + raw, "-n", "5"], run, env=env,
                           settle=1, timeout=120)
    with open(pidf) as f:
        child = int(f.read())
    with open(raw) as f:
        text = f.read()
    stacks = [s for s in parse_raw(text, mt.details()) if s.pid == child]
    shown = "\n".join("%d B in %d: %s" % (s.alloc_bytes, s.alloc_objects,
                                           ";".join(ip.module for ip in reversed(s.ips)))
                      for s in stacks)
    err = mt.err.text(1)
    details = mt.details() + "\n-v of the child:\n" + "\n".join(
        l for l in err.splitlines() if "pid %d " % child in l) + "\nstacks of pid %d:\n%s" % (child, shown)
    in_shell = [s for s in stacks if any(ip.module == "mybash" for ip in s.ips)]
    check(in_shell, "no stack of the child in the shell's code", details)
    check_eq([(s.alloc_bytes, [ip.module for ip in _unplaced(s)]) for s in stacks if _unplaced(s)],
             [], "the child's stacks with frames in no mapping", details)
    cut = re.search(r"^memtrace:   pid %d \([^)]*\):(.*)$" % child, err, re.M)
    check(cut is None or "bad stack" not in cut.group(1),
          "the child's stacks cut short: %s" % (cut.group(1) if cut else ""), details)
