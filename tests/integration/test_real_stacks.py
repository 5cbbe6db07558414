"""Real Debian programs (python3, sqlite3, gawk; none built with frame
pointers) against valgrind, which unwinds with the call frame information
too.  Each workload runs twice, under `memtrace --raw` and under
`valgrind --xtree-memory=full` (massif format: allocated bytes per stack),
and the two are compared by allocated bytes per stack.

A stack is compared as the functions of its first DEPTH frames, leaf
first, with what is purely naming made equal:
  - the frame that called the allocator is the first on both sides;
  - inlined frames are left out (valgrind runs without
    --read-inline-info): memtrace's frame of each address is its
    non-inlined function;
  - a function valgrind cannot name ("???") is its module and the address
    of the call in that module's file; memtrace's module+0xOFFSET frame is
    the same, its OFFSET being that return address;
  - compiler clones are their function (foo.constprop.0, foo.isra.0,
    foo.part.0, foo.cold: foo), since DWARF names the clone by its origin;
  - valgrind's symbol versions are dropped (dlopen@@GLIBC_2.34: dlopen);
    the names themselves must agree: memtrace names a function with
    several symbols by its public one, as valgrind does (strdup, not
    __GI___strdup or __strdup);
  - valgrind stops at "(below main)", the frame that calls main
    (__libc_start_call_main); memtrace goes on to _start, and its stack is
    cut at the same frame.
Bars (issue 9), each a share of all bytes allocated (the larger of the
two runs' totals):
  - at least 95% of bytes: memtrace's stack equals valgrind's;
  - at least 95% of bytes: memtrace's stack reaches main, which here means
    it holds main or __libc_start_call_main, the libc frame that calls
    main (python3's main tail-calls Py_BytesMain, so main itself is not on
    its stacks: the frame below it is);
  - no memtrace frame lies outside an executable segment of a mapped file
    (no [no module] ip, no [unknown]+0x frame, every ip inside a PF_X
    PT_LOAD of its file);
  - truncated stacks (memtrace's "truncated stacks:" line, a count of
    allocations) at most 1% of the allocations, and no drops.
The measured shares are printed on each pass.

Both runs see the same environment: valgrind adds variables to its
client's (LD_PRELOAD, ...), and the native run gets them too (LD_PRELOAD
under another name), since gawk and python3 allocate a table of it.  Each
workload writes its own /proc/self/maps at its end: under valgrind, that
says where the files were mapped, to turn valgrind's addresses of "???"
frames into addresses in the files.

A library loaded with dlopen gets its unwind table when ld.so has mapped
it (memtrace probes ld.so's _dl_debug_state); a stack through it before
the table is in place is copied and unwound once it is (deferred
unwinding): python3 goes from `import json` (which dlopens _json) to
json.dumps at once, with no wait, and its stacks through _json are whole."""

import collections
import os
import re
import struct
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test

DEPTH = 20
BAR_EQUAL = 0.95
BAR_MAIN = 0.95
MAX_TRUNCATED_SHARE = 0.01
# Valgrind keeps --num-callers frames, the allocator's own included.
VG_CALLERS = DEPTH + 10

# The frames valgrind calls "(below main)": the libc start code that calls
# main.  memtrace's stacks are cut at the first of them.
BELOW_MAIN = {"__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl",
              "__libc_start_main_alias_2", "generic_start_main"}
REACHES_MAIN = {"main", "__libc_start_call_main"}
_CLONE = re.compile(r"(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$")


# ---------------------------------------------------------------- ELF

Segment = collections.namedtuple("Segment", "offset vaddr filesz memsz flags")
PF_X = 1
PT_LOAD = 1


def load_segments(path):
    """The PT_LOAD program headers of the ELF64 file PATH."""
    with open(path, "rb") as f:
        ehdr = f.read(64)
        check(ehdr[:4] == b"\x7fELF" and ehdr[4] == 2, "%s is not an ELF64 file" % path)
        phoff, = struct.unpack_from("<Q", ehdr, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", ehdr, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    segs = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _paddr, p_filesz, p_memsz, _align = \
            struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
        if p_type == PT_LOAD:
            segs.append(Segment(p_offset, p_vaddr, p_filesz, p_memsz, p_flags))
    return segs


def in_code(segs, vaddr):
    return any(s.flags & PF_X and s.vaddr <= vaddr < s.vaddr + s.memsz for s in segs)


# ---------------------------------------------------------------- maps

Mapping = collections.namedtuple("Mapping", "start end offset path")


def parse_maps(text):
    """The executable file mappings of a /proc/PID/maps text."""
    maps = []
    for line in text.splitlines():
        f = line.split(None, 5)
        if len(f) == 6 and "x" in f[1] and f[5].startswith("/"):
            start, end = (int(x, 16) for x in f[0].split("-"))
            maps.append(Mapping(start, end, int(f[2], 16), f[5]))
    return maps


def load_bias(mapping):
    """Load address minus link-time address for MAPPING's file."""
    for s in load_segments(mapping.path):
        if s.offset & ~0xfff <= mapping.offset < s.offset + s.filesz:
            return mapping.start - (s.vaddr - s.offset + mapping.offset)
    raise mtlib.Fail("no PT_LOAD of %s holds file offset 0x%x" % (mapping.path, mapping.offset))


# ---------------------------------------------------------------- valgrind

_NODE = re.compile(r"^( *)n(\d+): (\d+) (.*)$")
_VG_FRAME = re.compile(r"^0x([0-9A-Fa-f]+): (.*) \((in (/.*)|[^()]*)\)$")
VgFrame = collections.namedtuple("VgFrame", "addr function path")


def parse_massif(text, event, details):
    """{stack: bytes} of the snapshot of EVENT (e.g. "totB") in a massif
    file written by --xtree-memory-file=*.ms; a stack is a tuple of
    VgFrames, leaf first.  A node's own bytes (less its children's) belong
    to the stack from the root to it."""
    snaps = re.split(r"^#-+\nsnapshot=\d+\n#-+\n", text, flags=re.M)
    tree = None
    for snap in snaps:
        m = re.search(r"^n\d+: \d+ (\S+) ", snap, re.M)
        if m and m.group(1) == event:
            tree = snap[m.start():]
            break
    check(tree is not None, "no %s snapshot in valgrind's xtree file" % event, details)
    stacks = collections.Counter()
    path, own = [], []  # frames and own bytes of the nodes from the root
    for line in tree.splitlines():
        m = _NODE.match(line)
        if not m:
            continue
        depth, nbytes, desc = len(m.group(1)), int(m.group(3)), m.group(4)
        while len(path) > depth:
            _close(path, own, stacks)
        fm = _VG_FRAME.match(desc)
        if depth == 0:
            frame = None
        else:
            check(fm, "cannot parse valgrind frame %r" % desc, details)
            frame = VgFrame(int(fm.group(1), 16), fm.group(2), fm.group(4))
        if own:
            own[-1] -= nbytes
        path.append(frame)
        own.append(nbytes)
    while path:
        _close(path, own, stacks)
    return stacks


def _close(path, own, stacks):
    if own[-1] and len(path) > 1:
        stacks[tuple(path[1:])] += own[-1]
    path.pop()
    own.pop()


def valgrind_env(env, details):
    """The environment a program run under valgrind with ENV sees (valgrind
    adds LD_PRELOAD, LD_LIBRARY_PATH, GLIBCXX_FORCE_NEW, ...), with
    LD_PRELOAD renamed XX_PRELOAD: the native run gets one as large, so
    that a program building its own table of the environment (gawk's
    ENVIRON, python's os.environ) allocates the same under both tools.
    Without it gawk's node allocator refills its free list from another
    call site (2.4% of the bytes had another stack)."""
    res = mtlib.run(["valgrind", "-q", "--tool=memcheck", "/usr/bin/env", "-0"], env=env)
    check_eq(res.rc, 0, "exit status of env under valgrind", details + "\n" + mtlib.tail(res.stderr))
    seen = dict(v.split("=", 1) for v in res.stdout.split("\0") if "=" in v)
    check(set(env.items()) <= set(seen.items()), "valgrind changed the environment: %r" % seen, details)
    if "LD_PRELOAD" in seen:
        seen["XX_PRELOAD"] = seen.pop("LD_PRELOAD")
    return seen


def valgrind_stacks(argv, workdir, env, stdin_path, details):
    """Run ARGV under valgrind; {stack: allocated bytes}."""
    ms = os.path.join(workdir, "xtree.ms")
    vg = ["valgrind", "--tool=memcheck", "--xtree-memory=full", "--xtree-memory-file=" + ms,
          "--num-callers=%d" % VG_CALLERS, "--read-inline-info=no",
          "--run-libc-freeres=no", "--run-cxx-freeres=no"] + argv
    with open(stdin_path or os.devnull) as stdin:
        res = mtlib.run(vg, stdin=stdin, env=env)
    d = "%s\ncommand: %s\nexit status: %s\nstderr:\n%s" % (details, " ".join(vg), res.rc,
                                                          mtlib.tail(res.stderr))
    check_eq(res.rc, 0, "valgrind's exit status", d)
    with open(ms, encoding="utf-8", errors="replace") as f:
        return parse_massif(f.read(), "totB", d)


# ---------------------------------------------------------------- memtrace

def memtrace_stacks(argv, workdir, env, stdin_path, details):
    """Run ARGV under memtrace --raw --text: (report, truncated, the
    target's raw stacks)."""
    raw = os.path.join(workdir, "stacks.raw")
    txt = os.path.join(workdir, "report.txt")
    mt = [mtlib.MEMTRACE, "--raw=" + raw, "--text=" + txt, "-n", "5", "--"] + argv
    with open(stdin_path or os.devnull) as stdin:
        res = mtlib.run(mt, stdin=stdin, env=env)
    text = ""
    if os.path.exists(txt):
        with open(txt, encoding="utf-8") as f:
            text = f.read()
    d = "%s\ncommand: %s\nexit status: %s\nstderr:\n%s\nreport:\n%s" % (
        details, " ".join(mt), res.rc, mtlib.tail(res.stderr), mtlib.tail(text, 30))
    check_eq(res.rc, 0, "memtrace's exit status", d)
    rep = mtlib.parse_report(text)
    m = re.search(r"^truncated stacks: (\d+)(?: \(.*\))?$", text, re.M)
    check(m, "no 'truncated stacks:' line", d)
    with open(raw, encoding="utf-8") as f:
        stacks = [s for s in parse_raw(f.read(), d) if s.pid == rep.target_pid]
    return rep, int(m.group(1)), stacks, d


def physical_frames(st, details):
    """The non-inlined function of each ip of ST (memtrace lists an ip's
    inlined frames first, then the function the code is in)."""
    names = [f.function for f in st.frames if not f.inlined]
    check_eq(len(names), len(st.ips), "non-inlined frames against ips", details)
    return names


# ---------------------------------------------------------------- keys

def normal_name(name):
    return _CLONE.sub("", name)


def mt_key(st, names):
    """memtrace's stack, compared: names, or (module, return address) for
    an unnamed frame; cut at (below main), then at DEPTH."""
    key = []
    for ip, name in zip(st.ips, names):
        if name in BELOW_MAIN:
            key.append("(below main)")
            break
        # An unnamed frame is named by its call instruction (return
        # address less 1, as pprof's addresses are).
        if ip.offset is not None and name == "%s+0x%x" % (ip.module, ip.offset - 1):
            key.append((ip.module, ip.offset))
        else:
            key.append(normal_name(name))
    return tuple(key[:DEPTH])


def vg_key(stack, biases):
    """valgrind's stack, compared the same way.  Valgrind shows a caller's
    address as its return address less one."""
    key = []
    for fr in stack:
        if fr.function == "???":
            base = os.path.basename(fr.path or "?")
            bias = biases.get(fr.path)
            key.append((base, fr.addr + 1 - bias) if bias is not None else ("?" + base, fr.addr))
        else:
            # Valgrind names a versioned symbol with its version
            # (dlopen@@GLIBC_2.34); memtrace without.
            key.append(normal_name(fr.function.split("@", 1)[0]))
        if fr.function == "(below main)":
            break
    return tuple(key[:DEPTH])


def show(key):
    return " <- ".join(k if isinstance(k, str) else "%s+0x%x" % k for k in key)


# ---------------------------------------------------------------- the test

def compare(name, argv, workdir, env, stdin_path=None):
    """Run ARGV under both tools and check the bars.  The workload writes
    its own /proc/self/maps to WORKDIR/maps (under valgrind: where valgrind
    put the files, to turn its "???" addresses into file addresses)."""
    maps_path = os.path.join(workdir, "maps")
    details = "workload %s: %s" % (name, " ".join(argv))
    vg = valgrind_stacks(argv, workdir, env, stdin_path, details)
    with open(maps_path, encoding="utf-8") as f:
        vg_maps = parse_maps(f.read())
    check(vg_maps, "the workload wrote no executable mappings to %s" % maps_path, details)
    biases, paths = {}, {}
    for mp in vg_maps:
        biases.setdefault(mp.path, load_bias(mp))
        paths.setdefault(os.path.basename(mp.path), mp.path)

    rep, truncated, mt, d = memtrace_stacks(argv, workdir, valgrind_env(env, details),
                                            stdin_path, details)
    check(mt, "memtrace recorded no stacks of pid %s" % rep.target_pid, d)
    check_eq(rep.drops[0], 0, "drops", d)

    # No frame outside an executable segment of a mapped file.
    segs = {}
    for st in mt:
        for ip in st.ips:
            check(ip.offset is not None, "an ip in no mapped file: 0x%x" % ip.addr, d)
            path = paths.get(ip.module)
            check(path, "module %s of 0x%x is not in valgrind's maps of the workload"
                  % (ip.module, ip.addr), d)
            if path not in segs:
                segs[path] = load_segments(path)
            check(in_code(segs[path], ip.offset - 1),
                  "return address %s+0x%x is not in an executable segment" % (ip.module, ip.offset), d)
        check(not any(f.function.startswith("[unknown]") for f in st.frames),
              "a frame in no mapped file: %s" % [f.function for f in st.frames], d)

    mt_bytes = collections.Counter()
    total_mt = reach = 0
    for st in mt:
        names = physical_frames(st, d)
        mt_bytes[mt_key(st, names)] += st.alloc_bytes
        total_mt += st.alloc_bytes
        if REACHES_MAIN & set(names):
            reach += st.alloc_bytes
    vg_bytes = collections.Counter()
    for stack, nbytes in vg.items():
        vg_bytes[vg_key(stack, biases)] += nbytes
    total_vg = sum(vg_bytes.values())
    total = max(total_mt, total_vg)
    check(total > 0, "nothing allocated", d)
    equal = sum(min(n, vg_bytes[k]) for k, n in mt_bytes.items())
    allocs = rep.allocated[1]
    shares = (equal / total, reach / total_mt if total_mt else 0.0)
    worst = sorted(((n - vg_bytes[k], k) for k, n in mt_bytes.items() if n > vg_bytes[k]),
                   key=lambda t: t[0], reverse=True)[:4]
    missed = sorted(((n - mt_bytes[k], k) for k, n in vg_bytes.items() if n > mt_bytes[k]),
                    key=lambda t: t[0], reverse=True)[:4]
    summary = ("%s: %.2f%% of bytes with valgrind's stack (to depth %d), %.2f%% reaching main, "
               "%d of %d allocations truncated; allocated %d bytes (valgrind %d)"
               % (name, 100 * shares[0], DEPTH, 100 * shares[1], truncated, allocs,
                  total_mt, total_vg))
    d2 = "%s\n%s\nmemtrace only (bytes, stack):\n%s\nvalgrind only:\n%s" % (
        d, summary, "\n".join("  %d %s" % (n, show(k)) for n, k in worst),
        "\n".join("  %d %s" % (n, show(k)) for n, k in missed))
    check(shares[0] >= BAR_EQUAL, "%s: %.2f%% of bytes with valgrind's stack, below %d%%"
          % (name, 100 * shares[0], 100 * BAR_EQUAL), d2)
    check(shares[1] >= BAR_MAIN, "%s: %.2f%% of bytes reach main, below %d%%"
          % (name, 100 * shares[1], 100 * BAR_MAIN), d2)
    check(truncated <= MAX_TRUNCATED_SHARE * allocs,
          "%s: %d of %d allocations with a truncated stack, more than %.1f%%"
          % (name, truncated, allocs, 100 * MAX_TRUNCATED_SHARE), d2)
    print("    " + summary, flush=True)


def base_env():
    # mtlib's private unwind table cache, for memtrace (the programs see
    # it too, under valgrind as well: the same environment).
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent",
            "MEMTRACE_UNWIND_CACHE": os.environ["MEMTRACE_UNWIND_CACHE"]}


NEEDS = ("memtrace", "bpf", "valgrind")

PYTHON_CODE = r"""
import json, sys
d = {}
for i in range(3000):
    d["k%d" % i] = {"n": i, "s": "v" * (i % 50), "l": list(range(i % 20))}
s = json.dumps(d, sort_keys=True)
e = json.loads(s)
print(len(s), len(e))
with open(sys.argv[1], "w") as f:
    f.write(open("/proc/self/maps").read())
"""


@test("real_stacks.python3", needs=NEEDS)
def _python3():
    """A dict of 3000 entries to JSON and back."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(base_env(), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        compare("python3", ["/usr/bin/python3", "-s", "-c", PYTHON_CODE, os.path.join(d, "maps")],
                d, env)


@test("real_stacks.sqlite3", needs=NEEDS)
def _sqlite3():
    """20000 INSERT statements into a table in memory, an index, a GROUP BY."""
    with tempfile.TemporaryDirectory() as d:
        sql = os.path.join(d, "script.sql")
        with open(sql, "w") as f:
            f.write("create table t(id integer primary key, name text, score real, tag text);\n"
                    "begin;\n")
            for i in range(20000):
                f.write("insert into t(name, score, tag) values('name-%d', %d.5, 'tag%d');\n"
                        % (i, i * 7 % 1000, i % 37))
            f.write("commit;\ncreate index t_tag on t(tag);\n"
                    "select tag, count(*), sum(score) from t group by tag order by 2 desc limit 3;\n"
                    ".shell cat /proc/$PPID/maps > %s\n" % os.path.join(d, "maps"))
        compare("sqlite3", ["/usr/bin/sqlite3", "-batch", ":memory:"], d, base_env(), sql)


GAWK_PROG = r"""
{ for (i = 1; i <= NF; i++) count[tolower($i)]++ }
END {
    n = 0
    for (w in count) n++
    print n
    while ((getline line < "/proc/self/maps") > 0) print line > MAPS
}
"""


@test("real_stacks.gawk", needs=NEEDS)
def _gawk():
    """A word count over 20000 generated lines of 4000 distinct words."""
    with tempfile.TemporaryDirectory() as d:
        text = os.path.join(d, "words.txt")
        with open(text, "w") as f:
            x = 12345
            for _ in range(20000):
                words = []
                for _ in range(8):
                    x = (x * 1103515245 + 12345) % 2 ** 31
                    words.append("w%dx%s" % (x % 4000, "Y" * (x % 7)))
                f.write(" ".join(words) + "\n")
        compare("gawk", ["/usr/bin/gawk", "-v", "MAPS=" + os.path.join(d, "maps"), GAWK_PROG, text],
                d, base_env())
