"""A stack cut short because its file cannot be opened is counted under a
reason of its own, "file unreadable", not "no table"
(src/loader/unwind/unwinder.c, deferred_unwind.c; enum mt_trunc_reason).

- unreadable.reason: a program built here dlopens a library (--no-follow,
  so its table is made when a stack first needs it) and allocates through
  it ten times.  The library is one memtrace cannot open: the test hook
  MEMTRACE_UNREADABLE_FILE takes it for one (as a file the kernel named,
  deleted, whose process is gone, cannot be opened: a race a test cannot
  provoke at will).  Its ten stacks are cut short at the library, counted
  as "file unreadable" on the header's `truncated stacks:` line, in the
  pprof profile's facts (read back by `memtrace report`) and in /metrics
  (reason="file_unreadable"); none as "no table".  Before, they were
  counted as "no table".
"""

import os
import re
import tempfile
import time
import urllib.request

import mtlib
from mtlib import check, check_eq, test

LIB_C = r"""
#include <stdlib.h>
const char tag[] = "%s";
volatile unsigned long spill;
/* Not a tail call: its frame is on the stack when malloc runs. */
__attribute__((noinline)) void *lib_alloc(size_t n)
{
	void *p = malloc(n);

	spill += n;
	return p;
}
"""

MAIN_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile keep[10];

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	void *(*lib_alloc)(size_t);
	char line[16];

	if (!h || !(lib_alloc = (void *(*)(size_t))dlsym(h, "lib_alloc")))
		return 2;
	for (int i = 0; i < 10; i++)
		keep[i] = lib_alloc(4242);
	printf("ready\n");
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) ? 0 : 3;
}
"""

_TRUNC = re.compile(r"^truncated stacks: (\d+)(?: \((.*)\))?$", re.M)


def reasons(text, what, details):
    m = _TRUNC.search(text)
    check(m is not None, "no 'truncated stacks:' line in %s" % what, details)
    by = {}
    for part in (m.group(2) or "").split(", ") if m.group(2) else ():
        name, _, n = part.rpartition(" ")
        by[name] = int(n)
    return by


def metrics(url):
    with urllib.request.urlopen(url + "/metrics", timeout=60) as r:
        text = r.read().decode()
    return text, dict(re.findall(r'^memtrace_truncated_stacks_total\{reason="(\w+)"\} (\d+)$',
                                 text, re.M))


@test("unreadable.reason")
def _reason():
    tag = "%d_%d" % (os.getpid(), int.from_bytes(os.urandom(4), "little"))
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        lib, exe = os.path.join(d, "libunread_%s.so" % tag), os.path.join(d, "unread_%s" % tag)
        mtlib.build_fresh(((lib, LIB_C % tag, ["-fPIC", "-shared"]), (exe, MAIN_C, ["-ldl"])))
        text_out, pprof = os.path.join(d, "report.txt"), os.path.join(d, "profile.pb.gz")
        env = dict(os.environ, MEMTRACE_UNREADABLE_FILE="libunread_" + tag)
        mt = mtlib.Bg([mtlib.MEMTRACE, "--no-follow", "--http", "127.0.0.1:0", "--text=" + text_out,
                       "--pprof", pprof, "--", exe, lib], env=env)
        try:
            line = mt.err.wait_for(lambda l: l.startswith("memtrace: serving "), 60)
            ready = mt.out.wait_for(lambda l: l.startswith("ready"), 60)
            check(line and ready, "memtrace --http -- unread did not start", mt.details())
            url = re.match(r"memtrace: serving (http://\S+?)/ ", line).group(1)
            # The copies are unwound (or given up) as they come: soon.
            end = time.time() + 30
            while True:
                mtext, got = metrics(url)
                if int(got.get("file_unreadable", 0)) >= 10 or time.time() > end:
                    break
                time.sleep(0.2)
            mt.send("\n")
            rc = mt.wait(60)
        finally:
            mt.kill()
        det = mt.details() + "\nmetrics:\n" + "\n".join(
            l for l in mtext.splitlines() if "truncated" in l)
        check_eq(rc, 0, "memtrace's exit status", det)
        check_eq(int(got.get("file_unreadable", -1)), 10, "/metrics file_unreadable", det)
        check_eq(int(got.get("no_table", -1)), 0, "/metrics no_table", det)
        with open(text_out, encoding="utf-8") as f:
            report = f.read()
        by = reasons(report, "the text report", det + "\nreport:\n" + mtlib.tail(report, 20))
        check_eq(by.get("file unreadable"), 10, "header: file unreadable", det + "\n" + report[:800])
        check("no table" not in by, "header counts 'no table': %s" % by, det)
        res = mtlib.run_memtrace(["report", pprof])
        check_eq(res.rc, 0, "memtrace report PROFILE", res.stderr)
        by = reasons(res.stdout, "memtrace report of the pprof profile", res.stdout[:800])
        check_eq(by.get("file unreadable"), 10, "pprof facts: file unreadable", res.stdout[:800])
