"""Unwind tables kept on disk (src/loader/unwind/unwind_cache.c): a program's second
run loads its files' tables from the cache (-v says so) and gets the same
stacks, address for address, as the first, whose tables were made; a
corrupted or truncated cache file is made again (and the stacks are still
whole); --no-unwind-cache keeps nothing; MEMTRACE_UNWIND_CACHE_SIZE bounds
the directory; a system-wide start loads the cached tables of running
processes.  Each test has a cache directory of its own."""

import os
import re
import tempfile

import mtlib
from mtlib import check, check_eq, parse_raw, test

LIBC = "libc.so.6"


def cache_env(cache, **more):
    env = dict(os.environ, MEMTRACE_UNWIND_CACHE=cache)
    env.update(more)
    return env


def traced(cache, extra=(), **more):
    """memtrace -v --raw -- nofp PLUGIN with the cache CACHE: (result,
    stacks, details)."""
    with tempfile.TemporaryDirectory(dir=mtlib.TMPDIR) as d:
        raw = os.path.join(d, "stacks.raw")
        res = mtlib.run_memtrace(["-v", "--raw=" + raw, "--text=/dev/null"] + list(extra) +
                                 ["--", mtlib.prog_path("nofp"),
                                  mtlib.prog_path("libnofp_plugin.so")],
                                 env=cache_env(cache, **more))
        details = "command: %s\nexit status: %s\nstderr:\n%s" % (
            " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 40))
        check_eq(res.rc, 0, "exit status", details)
        with open(raw, encoding="utf-8") as f:
            text = f.read()
    return res, parse_raw(text, details), details


_TABLE = re.compile(r"^memtrace: unwind table of (\S+): \d+ rows .*, "
                    r"(built in [\d.]+ ms(?:, cached)?|from cache in [\d.]+ ms)$", re.M)


def tables(stderr):
    """{file's base name: "built", "cached" or "from cache"} from -v."""
    out = {}
    for path, how in _TABLE.findall(stderr):
        out[os.path.basename(path)] = ("from cache" if how.startswith("from cache") else
                                       "cached" if how.endswith("cached") else "built")
    return out


def shape(stacks):
    """The stacks as files and offsets (the same in every run, unlike
    addresses), with their bytes."""
    return sorted((s.inuse_bytes, s.inuse_objects, s.alloc_bytes,
                   tuple((ip.module, ip.offset) for ip in s.ips)) for s in stacks)


def check_whole(stacks, details):
    """The chain of nofp's 100-byte block, through libc, down to main."""
    hits = [s for s in stacks if s.inuse_bytes == 100 and s.inuse_objects == 1]
    check_eq(len(hits), 1, "stacks holding nofp's block of 100 bytes", details)
    funcs = [f.function for f in hits[0].frames]
    want = ["chain_c", "chain_b", "chain_a", "main"]
    check([f for f in funcs if f in want] == want,
          "the 100-byte block's stack is not whole: %s" % funcs, details)


def cache_files(cache):
    return sorted(n for n in os.listdir(cache) if n.endswith(".uwt"))


@test("unwind_cache.second_run")
def _second_run():
    cache = tempfile.mkdtemp(dir=mtlib.TMPDIR)
    res1, st1, d1 = traced(cache)
    t1 = tables(res1.stderr)
    for f in ("nofp", LIBC, "libnofp_plugin.so"):
        check_eq(t1.get(f), "cached", "first run: the table of %s" % f, d1)
    files = cache_files(cache)
    check(len(files) >= 3, "first run: %d files in the cache: %s" % (len(files), files), d1)
    st = os.stat(cache)
    check_eq(st.st_mode & 0o777, 0o700, "the cache directory's mode", d1)

    res2, st2, d2 = traced(cache)
    t2 = tables(res2.stderr)
    for f in ("nofp", LIBC, "libnofp_plugin.so"):
        check_eq(t2.get(f), "from cache", "second run: the table of %s" % f, d2)
    check("built" not in t2.values() and "cached" not in t2.values(),
          "second run: a table made again: %s" % t2, d2)
    check_eq(cache_files(cache), files, "the cache's files after the second run", d2)
    check_whole(st1, d1)
    check_eq(shape(st2), shape(st1), "the second run's stacks (files and offsets)",
             d1 + "\n" + d2)


@test("unwind_cache.corrupt_rebuilt")
def _corrupt_rebuilt():
    cache = tempfile.mkdtemp(dir=mtlib.TMPDIR)
    res1, st1, d1 = traced(cache)
    files = cache_files(cache)
    check(len(files) >= 3, "first run: %d files in the cache" % len(files), d1)
    # Every file damaged: a byte flipped in the rows, or cut short.
    for i, name in enumerate(files):
        path = os.path.join(cache, name)
        size = os.path.getsize(path)
        if i % 2:
            os.truncate(path, size - 5)
        else:
            with open(path, "r+b") as f:
                f.seek(size - 7)
                b = f.read(1)
                f.seek(size - 7)
                f.write(bytes([b[0] ^ 0x40]))
    res2, st2, d2 = traced(cache)
    t2 = tables(res2.stderr)
    for f in ("nofp", LIBC, "libnofp_plugin.so"):
        check_eq(t2.get(f), "cached", "after the damage: the table of %s" % f, d2)
    check_whole(st2, d2)
    check_eq(shape(st2), shape(st1), "the stacks after the damage", d1 + "\n" + d2)
    # Made again and kept: the next run loads them.
    res3, st3, d3 = traced(cache)
    t3 = tables(res3.stderr)
    for f in ("nofp", LIBC, "libnofp_plugin.so"):
        check_eq(t3.get(f), "from cache", "third run: the table of %s" % f, d3)
    check_eq(shape(st3), shape(st1), "the third run's stacks", d1 + "\n" + d3)


@test("unwind_cache.off")
def _off():
    cache = tempfile.mkdtemp(dir=mtlib.TMPDIR)
    res, st, d = traced(cache, ["--no-unwind-cache"])
    t = tables(res.stderr)
    check_eq(t.get("nofp"), "built", "the table of nofp with --no-unwind-cache", d)
    check_eq(os.listdir(cache), [], "the cache directory with --no-unwind-cache", d)
    check_whole(st, d)


@test("unwind_cache.size_bound")
def _size_bound():
    cache = tempfile.mkdtemp(dir=mtlib.TMPDIR)
    bound = 64 << 10
    res, st, d = traced(cache, MEMTRACE_UNWIND_CACHE_SIZE="64K")
    total = sum(os.path.getsize(os.path.join(cache, n)) for n in os.listdir(cache))
    check(0 < total <= bound, "the cache holds %d bytes, bound %d" % (total, bound), d)
    # libc's table alone is bigger than the bound: made, not kept.
    check_eq(tables(res.stderr).get(LIBC), "built", "libc's table under a 64K bound", d)
    check_whole(st, d)


@test("unwind_cache.bad_size", needs=("memtrace",))
def _bad_size():
    for value in ("lots", "0", "5T"):
        res = mtlib.run_memtrace(["--text=/dev/null", "--", "/bin/true"],
                                 env=cache_env(os.path.join(mtlib.TMPDIR, "unused"),
                                               MEMTRACE_UNWIND_CACHE_SIZE=value))
        mtlib.check_one_line_error(res, "MEMTRACE_UNWIND_CACHE_SIZE=%s" % value,
                                   mention=("MEMTRACE_UNWIND_CACHE_SIZE",))


@test("unwind_cache.system_start")
def _system_start():
    """System-wide, the tables in the cache of the files running processes
    map are loaded at the start, not when a stack first needs them: a
    waiter started before memtrace, idle all along, has its table loaded
    from the cache a run of `memtrace -- waiter` filled."""
    cache = tempfile.mkdtemp(dir=mtlib.TMPDIR)
    res = mtlib.run_memtrace(["-v", "--text=/dev/null", "--", mtlib.prog_path("waiter")],
                             env=cache_env(cache))
    d = "command: %s\nexit status: %s\nstderr:\n%s" % (
        " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 40))
    check_eq(res.rc, 0, "exit status", d)
    check_eq(tables(res.stderr).get("waiter"), "cached", "the waiter's table", d)
    w = mtlib.start_waiter()
    try:
        res = mtlib.run_memtrace(["-v", "-d", "1", "--text=/dev/null"], timeout=90,
                                 env=cache_env(cache))
        d = "command: %s\nexit status: %s\nstderr:\n%s" % (
            " ".join(res.argv), res.rc, mtlib.tail(res.stderr, 40))
        check_eq(res.rc, 0, "exit status", d)
        check_eq(tables(res.stderr).get("waiter"), "from cache",
                 "system-wide start: the table of the idle waiter", d)
    finally:
        w.kill()
