"""--mmap on tests/progs/mmapper.c (the program's own anonymous mappings,
apart from the heap; the mappings glibc makes inside malloc not counted),
and a library loaded with dlopen whose operator new memtrace must find and
probe while the program runs (tests/progs/dlopener.c, plugin.cpp)."""

import os
import subprocess
import time

import mtlib
from mtlib import check, check_eq, test

MIB = 1 << 20
# mmapper.c, from its source: what the program maps itself...
MAPPED = (MIB + 8192 + 4096 + 16384, 4)  # map_keep, map_drop, map_grow (4 KiB, then 16 KiB)
MAPPED_IN_USE = (MIB + 16384, 2)        # map_keep's and map_grow's, after the mremap
# ...and what it mallocs (glibc serves both with mappings of its own).
HEAP_ALLOCATED = (4 * MIB + 2 * MIB, 2)
HEAP_IN_USE = (2 * MIB, 1)


def header_pair(rep, key):
    m = mtlib.re.match(r"^(\d+) bytes in (\d+) objects", rep.header.get(key, ""))
    check(m, "report header has no '%s: N bytes in M objects' line" % key, rep.text)
    return int(m.group(1)), int(m.group(2))


@test("mmap.totals")
def _mmap_totals():
    res, rep = mtlib.trace("mmapper", extra=("--mmap",))
    d = mtlib.tail(rep.text, 40)
    check_eq(res.rc, 0, "exit status", d)
    check_eq(header_pair(rep, "mmapped"), MAPPED, "mmapped (bytes, regions)", d)
    check_eq(header_pair(rep, "mmap in use"), MAPPED_IN_USE, "mmap in use (bytes, regions)", d)
    check_eq(rep.allocated, HEAP_ALLOCATED, "heap allocated: glibc's own mappings are not mmap", d)
    check_eq(rep.inuse, HEAP_IN_USE, "heap in use", d)
    check_eq(rep.untracked, 0, "untracked frees", d)


@test("mmap.stacks")
def _mmap_stacks():
    _, rep = mtlib.trace("mmapper", extra=("--mmap",))
    d = mtlib.tail(rep.text, 60)
    row = rep.row("[anonymous mmap]")
    check(row is not None, "no '[anonymous mmap]' row", d)
    check_eq(row.flat, MAPPED_IN_USE[0], "flat inuse_space of [anonymous mmap]", d)
    for fn, want in (("map_keep", MIB), ("map_grow", 16384), ("map_drop", 0), ("file_map", 0)):
        r = rep.row(fn)
        check_eq(r.cum if r else 0, want, "cum inuse_space of %s" % fn, d)
    st = [s for s in rep.stacks if s.frames and s.frames[0].function == "[anonymous mmap]"]
    callers = sorted(s.frames[1].function for s in st if len(s.frames) > 1)
    check(callers and set(callers) <= {"anon", "map_grow"},
          "callers of the [anonymous mmap] frames: %s" % callers, d)


@test("mmap.off_by_default")
def _mmap_off():
    _, rep = mtlib.trace("mmapper")
    d = mtlib.tail(rep.text, 40)
    check("mmapped" not in rep.header, "an 'mmapped:' line without --mmap", d)
    check(rep.row("[anonymous mmap]") is None, "an [anonymous mmap] row without --mmap", d)
    check_eq(rep.inuse, HEAP_IN_USE, "heap in use", d)


@test("dlopen.new_in_loaded_library")
def _dlopen():
    out = os.path.join(mtlib.TMPDIR, "dlopener.txt")
    plugin = mtlib.prog_path("libplugin.so")
    res = mtlib.run_memtrace(["--unit", "B", "-n", "100", "-o", out, "--",
                              mtlib.prog_path("dlopener"), plugin])
    check_eq(res.rc, 0, "exit status of dlopener", res.stderr)
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    d = mtlib.tail(rep.text, 40)
    check("libstdc++" in rep.allocator, "libstdc++ (loaded by dlopen) not probed: %r" % rep.allocator, d)
    row = rep.row("plugin_leak")
    check(row is not None, "no plugin_leak row", d)
    check_eq(row.flat, 4 * 300, "flat inuse_space of plugin_leak (4 x new char[300])", d)
    check_eq(row.file and os.path.basename(row.file), "plugin.cpp", "file of plugin_leak", d)
    check_eq(row.line, mtlib.marker_line("plugin.cpp", "DEF_PLUGIN_LEAK"), "definition line of plugin_leak", d)
    st = [s for s in rep.stacks if s.frames and s.frames[0].function == "plugin_leak"]
    check_eq(len(st), 1, "stacks led by plugin_leak (the caller of new, not operator new)", d)
    check_eq(st[0].frames[0].line, mtlib.marker_line("plugin.cpp", "PLUGIN_NEW"), "line of the new", d)
    check_eq(st[0].frames[1].function, "main", "caller of plugin_leak", d)


def dlopen_now_case(wrap):
    """dlopener calling into the plugin as soon as dlopen returns: every
    new of the plugin counted (libstdc++'s operator new probed while the
    process was held at ld.so's hook), its stack whole to main."""
    out = os.path.join(mtlib.TMPDIR, "dlopener_now.txt")
    plugin = mtlib.prog_path("libplugin.so")
    cmd = wrap([mtlib.prog_path("dlopener"), plugin, "now"])
    res = mtlib.run_memtrace(["--unit", "B", "-n", "100", "-o", out, "--"] + cmd)
    check_eq(res.rc, 0, "exit status of %s" % " ".join(cmd), res.stderr)
    with open(out) as f:
        rep = mtlib.parse_report(f.read())
    d = mtlib.tail(rep.text, 40)
    check("C++ new/delete in" in rep.allocator and "libstdc++" in rep.allocator,
          "allocator line %r: libstdc++ (dlopen'ed) not named" % rep.allocator, d)
    row = rep.row("plugin_leak")
    check(row is not None, "no plugin_leak row: its news were not counted", d)
    check_eq(row.flat, 4 * 300, "flat inuse_space of plugin_leak (4 x new char[300])", d)
    st = [s for s in rep.stacks if s.frames and s.frames[0].function == "plugin_leak"]
    check_eq(len(st), 1, "stacks led by plugin_leak", d)
    check_eq(st[0].frames[1].function, "main", "caller of plugin_leak", d)


@test("dlopen.new_at_once")
def _dlopen_now():
    dlopen_now_case(lambda argv: argv)


@test("dlopen.new_at_once_child")
def _dlopen_now_child():
    dlopen_now_case(lambda argv: ["sh", "-c", " ".join(argv) + "; true"])


@test("dlopen.program_sigurg")
def _program_sigurg():
    """The hold at ld.so's hook takes only the SIGURG the hook sent: a
    program's own (urgent data on its socket, si_code SI_KERNEL as the
    hook's) still reaches its handler, once, and a dlopen with SIGURG
    blocked leaves none pending (tests/progs/urg.c prints 'urg 0 1')."""
    argv = [mtlib.prog_path("urg"), mtlib.prog_path("libplugin.so"),
            mtlib.prog_path("libnofp_plugin.so")]
    plain = subprocess.run(argv, stdout=subprocess.PIPE, text=True, timeout=60)
    check_eq((plain.returncode, plain.stdout.strip()), (0, "urg 0 1"), "urg untraced")
    for cmd in (argv, ["sh", "-c", " ".join(argv) + "; true"]):
        res = mtlib.run_memtrace(["-o", os.path.join(mtlib.TMPDIR, "urg.txt"), "--"] + cmd)
        check_eq(res.rc, 0, "memtrace -- %s: exit status" % " ".join(cmd), res.stderr)
        check_eq(res.stdout.strip(), "urg 0 1", "what urg saw under memtrace -- %s" % " ".join(cmd),
                 res.stderr)



@test("dlopen.pid_later_library")
def _pid_later_library():
    """-p, python3 loading a C++ plugin with ctypes after memtrace attached
    and calling it at once: libstdc++'s new/delete (installed, probed ahead
    for the target) count every new of the plugin, the line names them once
    mapped, and the libraries without any (libgcc_s, the plugin itself)
    bring no warning."""
    script = ("import sys, ctypes; print('ready', flush=True); sys.stdin.readline(); "
              "ctypes.CDLL(%r).plugin_leak(); print('done', flush=True); sys.stdin.readline()"
              % mtlib.prog_path("libplugin.so"))
    w = mtlib.Bg(["/usr/bin/python3", "-c", script])
    mt = None
    out = os.path.join(mtlib.TMPDIR, "dlopen.pid_later_library.txt")
    try:
        check(w.out.wait_for(lambda l: l.strip() == "ready", 30) is not None,
              "python3 did not say ready", w.details())
        mt = mtlib.start_memtrace_pid(w.pid, ["--unit", "B", "-o", out, "-d", "600"])
        # The installed allocators are probed at the first refresh (0.1 s).
        time.sleep(1)
        w.send("\n")
        check(w.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "python3 did not say done", w.details())
        # The next look at its mappings names libstdc++ (ten times a second).
        time.sleep(0.5)
        w.send("\n")
        check_eq(w.wait(30), 0, "python3's exit status", w.details())
        check_eq(mt.wait(60), 0, "memtrace -p: exit status", mt.details())
        with open(out) as f:
            rep = mtlib.parse_report(f.read())
        d = mt.details()
        check("libstdc++" in rep.allocator, "allocator line %r" % rep.allocator, d)
        row = rep.row("plugin_leak")
        check(row is not None and row.flat == 4 * 300,
              "flat inuse_space of plugin_leak (4 x new char[300], right after the dlopen): %r"
              % (row and row.flat), mtlib.tail(rep.text, 40))
        errs = mt.err.text()
        check("cannot probe" not in errs, "a warning for a library with nothing to probe", errs)
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)


@test("dlopen.pid_allocator_at_once")
def _pid_allocator_at_once():
    """-p on a program that dlopens libtcmalloc_minimal and calls its
    malloc at once: all 7 calls of use_lib_malloc counted (tcmalloc,
    installed, was probed for the target before the dlopen; the look that
    the dlopen prompts comes after the calls)."""
    tc = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
    check(os.path.exists(tc), "%s is missing (libgoogle-perftools-dev)" % tc)
    w = mtlib.Bg([mtlib.prog_path("dlopen_alloc"), tc])
    mt = None
    out = os.path.join(mtlib.TMPDIR, "dlopen.pid_allocator_at_once.txt")
    try:
        check(w.out.wait_for(lambda l: l.strip() == "ready", 30) is not None,
              "dlopen_alloc did not say ready", w.details())
        mt = mtlib.start_memtrace_pid(w.pid, ["--unit", "B", "-o", out, "-d", "600"])
        time.sleep(1)  # the first refresh (0.1 s) probes the installed allocators
        w.send("\n")
        check(w.out.wait_for(lambda l: l.strip() == "done", 30) is not None,
              "dlopen_alloc did not say done", w.details())
        w.send("\n")
        check_eq(w.wait(30), 0, "dlopen_alloc's exit status", w.details())
        check_eq(mt.wait(60), 0, "memtrace -p: exit status", mt.details())
        with open(out) as f:
            rep = mtlib.parse_report(f.read())
        row = rep.row("use_lib_malloc")
        check(row is not None and row.flat == 7 * 777,
              "flat inuse_space of use_lib_malloc (7 x 777 from tcmalloc's malloc at once): %r"
              % (row and row.flat), mtlib.tail(rep.text, 40) + "\n" + mt.details())
    finally:
        if mt:
            mtlib.kill_quietly(mt)
        mtlib.kill_quietly(w)
