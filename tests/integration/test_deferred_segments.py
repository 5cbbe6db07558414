"""Provisional stacks leave no segment behind (src/loader/unwind/
deferred_unwind.c, bpf/stack_segs.h).

- deferred_segments.merged_leave_none: a stack deferred to the loader is
  filed under a provisional id and stored as segments of 23 frames like
  any stack; once unwound and merged into its real stack, every one of its
  segments goes, not its first only.  A program built here calls, through
  a library it dlopens (`--no-follow`: not held) whose table is made
  slowly (MEMTRACE_SLOW_TABLE, a test hook: 2 s), back into a recursion
  60 to 79 frames deep that allocates: twenty provisional stacks of 3 or
  4 segments, all unwound once the table is in.  At the end (-v: "stack
  segments in the map: N, M reached by no stack") no segment is left that
  no stack reaches.  Before, the provisional stacks' segments but the
  first stayed (3 here), counting against --max-stacks for the rest of
  the trace.
"""

import os
import re
import tempfile

import mtlib
from mtlib import check, check_eq, test

_DEFERRED = re.compile(r"deferred stacks: (\d+) copies, (\d+) unwound \((\d+) cut short\), "
                       r"(\d+) never unwound, (\d+) lost")
_SEGS = re.compile(r"^memtrace: stack segments in the map: (\d+), (\d+) reached by no stack$", re.M)
SLOW_MS = 2000

LIB_C = r"""
const char tag[] = "%s";
volatile unsigned long spill;
/* Not a tail call: its frame stays on the stack. */
__attribute__((noinline)) void *through(void *(*f)(int), int n)
{
	void *p = f(n);

	spill += (unsigned long)n;
	return p;
}
"""

MAIN_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long spill;

__attribute__((noinline)) void *rec(int n)
{
	void *p = n > 1 ? rec(n - 1) : malloc(100);

	spill += (unsigned long)n;
	return p;
}

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	void *(*through)(void *(*)(int), int);

	if (!h || !(through = (void *(*)(void *(*)(int), int))dlsym(h, "through")))
		return 2;
	for (int i = 0; i < 20; i++)
		free(through(rec, 60 + i));
	return 0;
}
"""


@test("deferred_segments.merged_leave_none")
def _merged_leave_none():
    tag = "%d_%d" % (os.getpid(), int.from_bytes(os.urandom(4), "little"))
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        lib, exe = os.path.join(d, "libthrough_%s.so" % tag), os.path.join(d, "deep_%s" % tag)
        mtlib.build_fresh(((lib, LIB_C % tag, ["-fPIC", "-shared"]), (exe, MAIN_C, ["-ldl"])))
        env = dict(os.environ, MEMTRACE_UNWIND_CACHE=os.path.join(d, "cache"),
                   MEMTRACE_SLOW_TABLE="libthrough_%s:%d" % (tag, SLOW_MS))
        res = mtlib.run_memtrace(["-v", "--no-follow", "-o", "/dev/null", "--", exe, lib], env=env)
    det = "command: %s\nexit status: %s\nstderr:\n%s" % (
        " ".join(res.argv), res.rc,
        "\n".join(l for l in res.stderr.splitlines() if "deferred" in l or "segments" in l))
    check_eq(res.rc, 0, "exit status", det)
    m, dm = _SEGS.search(res.stderr), _DEFERRED.search(res.stderr)
    check(m is not None and dm is not None,
          "no 'stack segments in the map' or 'deferred stacks' line with -v", det)
    copies, unwound, cut, never, lost = (int(g) for g in dm.groups())
    check(copies >= 20, "the 20 deep stacks through the library were not deferred (%d copies)"
          % copies, det)
    check_eq((unwound, cut, never, lost), (copies, 0, 0, 0),
             "copies unwound, cut short, never unwound, lost", det)
    check_eq(int(m.group(2)), 0,
             "segments in the map that no stack reaches once the provisional stacks were merged", det)
