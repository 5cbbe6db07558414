"""memtrace report of a tcmalloc or jemalloc heap profile of a program whose
own name contains the allocator's (a copy of tests/progs/leaks called
my_tcmalloc_app, jemalloc-server): the allocator's frames are those of its
library (soname libtcmalloc..., libjemalloc...), so the program keeps its
own, with the same flat objects per function as programs.py."""

import glob
import os
import shutil

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME

LEAKS = BY_NAME["leaks"]
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def profile_of(copy_name, env_of):
    d = os.path.join(mtlib.TMPDIR, "allocnames." + copy_name)
    os.makedirs(d, exist_ok=True)
    prog = os.path.join(d, copy_name)
    shutil.copy(mtlib.prog_path("leaks"), prog)
    prefix = os.path.join(d, "prof")
    res = mtlib.run([prog], env=dict(os.environ, **env_of(prefix)))
    check_eq(res.rc, LEAKS.exit_status, "%s's exit status" % copy_name, res.stderr)
    files = sorted(glob.glob(prefix + ".*.heap"))
    check_eq(len(files), 1, "heap profiles written by %s" % copy_name)
    res = mtlib.run_memtrace(["report", files[0], "--unit", "B", "-n", "1000", "--metric", "inuse_objects"])
    check_eq(res.rc, 0, "memtrace report", mtlib.tail(res.stderr))
    rep = mtlib.parse_report(res.stdout)
    got = {f: (rep.row(f).flat if rep.row(f) else 0) for f in LEAKS.funcs}
    want = {f: v.inuse_objects for f, v in LEAKS.funcs.items()}
    check_eq(got, want, "%s: inuse_objects per function" % copy_name, mtlib.tail(res.stdout, 40))


@test("allocnames.tcmalloc_in_program_name", needs=("memtrace",))
def _tc():
    check(os.path.exists(TCMALLOC), "%s is missing (libgoogle-perftools-dev)" % TCMALLOC)
    profile_of("my_tcmalloc_app", lambda p: {"LD_PRELOAD": TCMALLOC, "HEAPPROFILE": p})


@test("allocnames.jemalloc_in_program_name", needs=("memtrace",))
def _je():
    check(os.path.exists(JEMALLOC), "%s is missing (libjemalloc-dev)" % JEMALLOC)
    profile_of("jemalloc-server", lambda p: {
        "LD_PRELOAD": JEMALLOC,
        "MALLOC_CONF": "prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0,prof_prefix:" + p})
