"""Stacks of code built without frame pointers (-O2 -fomit-frame-pointer),
walked with the call frame information: nofp (a chain of calls, a qsort
callback, the first allocation in a constructor, a second thread, a
dlopened library) and nofp_cxx (operator new in libstdc++).  Each chain is checked whole: every frame of the program,
with its line, in order; the frames in libc between or below them, by
module; the walk reaching the outermost frame (_start, or clone3 for a
thread), no stack truncated, no frame outside an executable mapping."""

import os
import re
import subprocess
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test

def module_runs(ips):
    """The ips' modules with runs of one module collapsed: libc.so.6+ ..."""
    runs = []
    for ip in ips:
        if not runs or runs[-1] != ip.module:
            runs.append(ip.module)
    return runs


def traced(prog, args=(), extra=(), wrap=None):
    """memtrace --raw=F --text -- PROG ARGS (the command as WRAP(argv) makes
    it, when given): (result, header report, stacks)."""
    cmd = [mtlib.prog_path(prog)] + list(args)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "stacks.raw")
        res = mtlib.run_memtrace(["--raw=" + raw, "--text", "-n", "5"] + list(extra) +
                                 ["--"] + (wrap(cmd) if wrap else cmd))
        d_ = "command: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
            " ".join(res.argv), res.rc, mtlib.tail(res.stderr), mtlib.tail(res.stdout, 30))
        check_eq(res.rc, 0, "exit status", d_)
        with open(raw, encoding="utf-8") as f:
            text = f.read()
    rep = mtlib.parse_report(res.stdout)
    return res, rep, parse_raw(text, d_), d_ + "\nraw:\n" + mtlib.tail(text, 80)


def truncated_of(text):
    m = re.search(r"^truncated stacks: (\d+)(?: \(.*\))?$", text, re.M)
    return int(m.group(1)) if m else None


def stack_of_size(stacks, size, details):
    """The one stack that holds one block of SIZE bytes in use."""
    hits = [s for s in stacks if s.inuse_bytes == size and s.inuse_objects == 1]
    check_eq(len(hits), 1, "stacks holding one block of %d bytes" % size, details)
    return hits[0]


def base_name(function):
    """A C++ frame's name without its parameters: make_widget(long) -> make_widget."""
    return function.split("(", 1)[0]


def check_chain(st, src, own, want_funcs, want_runs, details):
    """ST's frames in the program's modules OWN (function names of the
    program) are WANT_FUNCS, (name, marker or None) each, in order, and its
    ips' module runs are WANT_RUNS."""
    text = "\n".join("    %s %s%s" % (f.function, f.location, " (inlined)" if f.inlined else "")
                     for f in st.frames)
    d = "%s\nstack:\n%s\nips: %s" % (details, text, " ".join(ip.module for ip in st.ips))
    got = [f for f in st.frames if base_name(f.function) in own]
    check_eq([base_name(f.function) for f in got], [w[0] for w in want_funcs], "the program's frames", d)
    for f, (name, marker) in zip(got, want_funcs):
        if marker:
            want = "%s:%d" % (src, mtlib.marker_line(src, marker))
            check(f.location.endswith("/" + want) or f.location == want,
                  "%s at %s, expected %s" % (name, f.location, want), d)
    check_eq(module_runs(st.ips), want_runs, "modules of the frames, leaf first", d)
    check(all(not ip.module.startswith("[") for ip in st.ips),
          "a frame outside every mapped file", d)


def check_no_truncation(res, rep, stacks, details):
    check_eq(truncated_of(res.stdout), 0, "truncated stacks", details)
    check_eq(rep.drops[0], 0, "drops", details)
    for st in stacks:
        check(all(not ip.module.startswith("[") for ip in st.ips),
              "a frame outside every mapped file: %s" % (st.ips,), details)


NOFP_FUNCS = {"chain_a", "chain_b", "chain_c", "cmp_leak", "sort_leak", "thread_b", "thread_main",
              "call_plugin", "plugin_outer", "plugin_inner", "cmp_early", "early_sort", "main",
              "_start"}
LIBC = "libc.so.6"
PLUGIN = "libnofp_plugin.so"


def nofp_run(mode):
    return traced("nofp", [mtlib.prog_path("libnofp_plugin.so")], ["--unwind", mode])


def make_nofp_test(mode):
    @test("unwind.nofp.%s" % mode)
    def _t():
        res, rep, stacks, d = nofp_run(mode)
        check_no_truncation(res, rep, stacks, d)
        check_chain(stack_of_size(stacks, 100, d), "nofp.c", NOFP_FUNCS,
                    [("chain_c", "CHAIN_C"), ("chain_b", "CHAIN_B"), ("chain_a", "CHAIN_A"),
                     ("main", "MAIN_CHAIN"), ("_start", None)],
                    ["nofp", LIBC, "nofp"], d)
        # Through libc's qsort, which calls back into the program.
        check_chain(stack_of_size(stacks, 200, d), "nofp.c", NOFP_FUNCS,
                    [("cmp_leak", "CMP_LEAK"), ("sort_leak", "SORT_LEAK"),
                     ("main", "MAIN_SORT"), ("_start", None)],
                    ["nofp", LIBC, "nofp", LIBC, "nofp"], d)
        # The first allocation, in a constructor as soon as the program
        # runs: through libc twice (qsort, and the constructors' caller),
        # whose table memtrace made while loading its BPF programs.
        check_chain(stack_of_size(stacks, 500, d), "nofp.c", NOFP_FUNCS,
                    [("cmp_early", "CMP_EARLY"), ("early_sort", "EARLY_SORT"), ("_start", None)],
                    ["nofp", LIBC, "nofp", LIBC, "nofp"], d)
        # A second thread: down to libc's thread start (clone3), no further.
        check_chain(stack_of_size(stacks, 300, d), "nofp.c", NOFP_FUNCS,
                    [("thread_b", "THREAD_B"), ("thread_main", "THREAD_MAIN")],
                    ["nofp", LIBC], d)
        # A dlopened library, itself without frame pointers.
        check_chain(stack_of_size(stacks, 400, d), "nofp.c", NOFP_FUNCS,
                    [("plugin_inner", None), ("plugin_outer", None), ("call_plugin", "CALL_PLUGIN"),
                     ("main", "MAIN_PLUGIN"), ("_start", None)],
                    [PLUGIN, "nofp", LIBC, "nofp"], d)


for _mode in ("auto", "cfi"):
    make_nofp_test(_mode)


@test("unwind.stack_edge")
def _stack_edge():
    # The stack is read a window at a time: here the frames are at the very
    # top of the stack's mapping (a clone()d process on a stack of its own,
    # the page above unmapped), where a window that ran past the end could
    # not be read; the walk must still be whole.
    res, rep, stacks, d = traced("stack_edge")
    check_no_truncation(res, rep, stacks, d)
    check_chain(stack_of_size(stacks, 600, d), "stack_edge.c", {"edge_leaf", "edge_main"},
                [("edge_leaf", "EDGE_LEAF"), ("edge_main", "EDGE_MAIN")],
                ["stack_edge", LIBC], d)


@test("unwind.nofp.plugin_lines")
def _plugin_lines():
    """The dlopened library's frames carry its own source lines."""
    res, rep, stacks, d = nofp_run("auto")
    st = stack_of_size(stacks, 400, d)
    got = {f.function: f.location for f in st.frames if f.function in ("plugin_inner", "plugin_outer")}
    for name, marker in (("plugin_inner", "PLUGIN_INNER"), ("plugin_outer", "PLUGIN_OUTER")):
        want = "nofp_plugin.c:%d" % mtlib.marker_line("nofp_plugin.c", marker)
        check(got.get(name, "").endswith("/" + want), "%s at %r, expected %s" % (name, got.get(name), want), d)


@test("unwind.nofp.fp_cannot")
def _fp_cannot():
    """The frame-pointer walk cannot follow these programs (so the tests
    above test the CFI walk): with --unwind fp the 100-byte chain is not
    whole, and whatever it reports is still a real code address."""
    res, rep, stacks, d = nofp_run("fp")
    st = stack_of_size(stacks, 100, d)
    names = [f.function for f in st.frames if f.function in NOFP_FUNCS]
    check(names != ["chain_c", "chain_b", "chain_a", "main", "_start"],
          "--unwind fp found the whole chain in a program without frame pointers", d)
    check(all(not ip.module.startswith("[") for s in stacks for ip in s.ips),
          "--unwind fp reported a frame outside every mapped file", d)


CXX_FUNCS = {"make_widget", "make_buffer", "build_all", "main", "_start"}


@test("unwind.nofp_cxx")
def _cxx():
    """operator new is libstdc++'s (calling malloc): the first frame is still
    the function that called new."""
    res, rep, stacks, d = traced("nofp_cxx")
    check_no_truncation(res, rep, stacks, d)
    check_chain(stack_of_size(stacks, 48, d), "nofp_cxx.cpp", CXX_FUNCS,
                [("make_widget", "MAKE_WIDGET"), ("build_all", "BUILD_WIDGET"),
                 ("main", "MAIN_BUILD"), ("_start", None)],
                ["nofp_cxx", LIBC, "nofp_cxx"], d)
    check_chain(stack_of_size(stacks, 4000, d), "nofp_cxx.cpp", CXX_FUNCS,
                [("make_buffer", "MAKE_BUFFER"), ("build_all", "BUILD_BUFFER"),
                 ("main", "MAIN_BUILD"), ("_start", None)],
                ["nofp_cxx", LIBC, "nofp_cxx"], d)


def upto_main(st):
    names = [f.function for f in st.frames]
    return tuple(names[:names.index("main") + 1] if "main" in names else names)


@test("unwind.fp_build_same")
def _fp_build_same():
    """On a frame-pointer build every walk gives the same stacks: --unwind
    fp, cfi and auto."""
    got = {}
    for mode in ("fp", "cfi", "auto"):
        res, rep, stacks, d = traced("leaks", extra=["--unwind", mode])
        if mode == "fp":
            # libc's start code keeps no frame pointer: the walk may stop
            # in it, and then says so, once per allocation.
            cut = sum(s.alloc_objects for s in stacks if s.frames[-1].function != "_start")
            check_eq(truncated_of(res.stdout), cut, "fp: truncated stacks", d)
        else:
            check_no_truncation(res, rep, stacks, d)
            check(all(s.frames[-1].function == "_start" for s in stacks), "a stack not ending at _start", d)
        # Up to main: below it is libc's start code, built without frame
        # pointers, where only the CFI walk is sure to go on.
        got[mode] = sorted((s.inuse_bytes, s.alloc_bytes, upto_main(s)) for s in stacks)
        check(all("main" in upto_main(s) for s in stacks), "a stack without main", d)
        check(any(len(s.ips) >= 6 for s in stacks), "no stack of 6 frames or more", d)
    check_eq(got["cfi"], got["fp"], "stacks of --unwind cfi against fp")
    check_eq(got["auto"], got["fp"], "stacks of --unwind auto against fp")


def functions_probed(stderr, details):
    m = re.search(r"^memtrace: tracing pid \d+ \(.*?\), (\d+) functions in ", stderr, re.M)
    check(m, "no 'tracing pid ..., N functions' line", details)
    return int(m.group(1))


@test("unwind.cxx_one_trap")
def _cxx_one_trap():
    """libstdc++'s operator new and delete only call glibc's malloc and
    free: with the unwinder leaving their frames out they are not probed
    (one trap per allocation), and the report is the same as with them
    probed (--unwind fp, on a frame-pointer build): header, and every
    stack's frames down to main."""
    got = {}
    for mode in ("auto", "fp"):
        res, rep, stacks, d = traced("shapes", extra=["--unwind", mode])
        check(rep.allocator.endswith("; C++ new/delete in " + rep.allocator.split("; C++ new/delete in ")[-1])
              and "libstdc++" in rep.allocator, "allocator line %r names no libstdc++" % rep.allocator, d)
        header = (rep.allocator, rep.inuse, rep.allocated, rep.freed, rep.events, rep.untracked)
        # The program's stacks (libstdc++'s start-up allocation, below no
        # main, is past what the fp walk can follow in Debian's libstdc++).
        got[mode] = (header, sorted((s.inuse_bytes, s.alloc_bytes, s.alloc_objects, upto_main(s))
                                    for s in stacks if "main" in upto_main(s)),
                     functions_probed(res.stderr, d), d)
    check_eq(got["auto"][0], got["fp"][0], "header, new not probed vs probed", got["auto"][3])
    check_eq(got["auto"][1], got["fp"][1], "stacks, new not probed vs probed", got["auto"][3])
    check(all(st[3] and "operator new" not in st[3][0] and not st[3][0].startswith("_Zn")
              for st in got["auto"][1]), "a stack starting in operator new", got["auto"][3])
    # libc's malloc family (9) alone, against it and libstdc++'s 20 operators.
    check_eq(got["fp"][2] - got["auto"][2], 20, "functions not probed with the unwinder's help",
             got["auto"][3])


SOON_LIBS = 6


@test("unwind.dlopen_soon")
def _dlopen_soon():
    # Six copies of a library without frame pointers, each dlopened and
    # allocated through at once: before its table can be made.  Each first
    # stack through a library is whole only if it is unwound later, on a
    # copy of the stack taken when the walk met the library (deferred
    # unwinding): it would stop there otherwise.
    with tempfile.TemporaryDirectory() as d:
        libs = []
        for i in range(SOON_LIBS):
            lib = os.path.join(d, "libsoon%d.so" % i)
            with open(mtlib.prog_path(PLUGIN), "rb") as src, open(lib, "wb") as dst:
                dst.write(src.read())
            libs.append(lib)
        res, rep, stacks, d_ = traced("dlopen_soon", libs)
    check_soon_chains(res, rep, stacks, d_, "libsoon%d.so")


def check_soon_chains(res, rep, stacks, d_, lib_name):
    """dlopen_soon's first stack through each library (LIB_NAME % i) whole,
    from the library to main, nothing cut short."""
    check_no_truncation(res, rep, stacks, d_)
    for i in range(SOON_LIBS):
        check_chain(stack_of_size(stacks, 1000 + i, d_), "dlopen_soon.c",
                    {"plugin_inner", "plugin_outer", "call_soon", "main", "_start"},
                    [("plugin_inner", None), ("plugin_outer", None), ("call_soon", "CALL_SOON"),
                     ("main", "MAIN_SOON"), ("_start", None)],
                    [lib_name % i, "dlopen_soon", LIBC, "dlopen_soon"], d_)


def fresh_plugins(d, n):
    """N builds of nofp_plugin.c, each with a build id of its own (new to
    any table cache), -O2 without frame pointers as Debian builds."""
    src = os.path.join(mtlib.ROOT, "tests/progs/nofp_plugin.c")
    salt = os.urandom(8).hex()
    libs = []
    for i in range(n):
        lib = os.path.join(d, "libfresh%d.so" % i)
        argv = ["cc", "-O2", "-g", "-fomit-frame-pointer", "-fPIC", "-shared",
                "-Wl,--build-id=0x%s%08x" % (salt, i), "-o", lib, src]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check_eq(r.returncode, 0, "cc of %s" % lib, r.stdout)
        libs.append(lib)
    return libs


def at_once_case(wrap):
    """dlopen_soon allocating through each fresh library the moment dlopen
    returns, run as WRAP(argv) says: every first stack whole, through the
    library to main."""
    with tempfile.TemporaryDirectory() as d:
        libs = fresh_plugins(d, SOON_LIBS)
        res, rep, stacks, d_ = traced("dlopen_soon", libs, wrap=wrap)
    check_soon_chains(res, rep, stacks, d_, "libfresh%d.so")


@test("unwind.dlopen_at_once")
def _dlopen_at_once():
    # -- CMD holds the command at ld.so's hook while a dlopen maps a
    # library: its table is made before any of its code runs, so the first
    # allocation through it, at once, has its whole stack.  No timing: the
    # program does not wait at all.
    at_once_case(lambda argv: argv)


@test("unwind.dlopen_at_once_child")
def _dlopen_at_once_child():
    # The same in a process the command starts (sh -c '...; true' forks it).
    at_once_case(lambda argv: ["sh", "-c", " ".join(argv) + "; true"])
