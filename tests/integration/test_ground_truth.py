"""Checks of the expectations themselves, without memtrace: programs.py is
consistent with the sources, and valgrind counts what programs.py says."""

import os

import mtlib
from mtlib import check, check_eq, test
from programs import (ALLOC_SIZES, BY_NAME, METRICS, PROGRAMS, SIZES, WAITER, WAITER_PRE,
                      WAITER_PRE_SIZE, totals)


@test("expect.consistent", needs=())
def _consistent():
    for p in PROGRAMS + [WAITER, SIZES]:
        check(os.path.exists(os.path.join(mtlib.PROGS_SRC, p.src)), "%s: no source %s" % (p.name, p.src))
        for name, fn in p.funcs.items():
            mtlib.marker_line(p.src, fn.def_marker)
            check(fn.inuse_space <= fn.alloc_space and fn.inuse_objects <= fn.alloc_objects,
                  "%s: %s has more in use than allocated" % (p.name, name))
        leaves = {}
        for st in p.stacks:
            for fr in st.frames:
                mtlib.marker_line(p.src, fr.marker)
            leaf = st.frames[0].function
            check(leaf in p.funcs, "%s: stack leaf %s is not in funcs" % (p.name, leaf))
            b, o = leaves.get(leaf, (0, 0))
            leaves[leaf] = (b + st.inuse_space, o + st.inuse_objects)
        for name, fn in p.funcs.items():
            check_eq(leaves.get(name, (0, 0)), (fn.inuse_space, fn.inuse_objects),
                     "%s: in-use stacks of %s (bytes, objects)" % (p.name, name))
        if p.alloc_stacks:
            allocs = {}
            for st in p.alloc_stacks:
                for fr in st.frames:
                    mtlib.marker_line(p.src, fr.marker)
                leaf = st.frames[0].function
                b, o = allocs.get(leaf, (0, 0))
                allocs[leaf] = (b + st.inuse_space, o + st.inuse_objects)
            for name, fn in p.funcs.items():
                check_eq(allocs.get(name, (0, 0)), (fn.alloc_space, fn.alloc_objects),
                         "%s: allocating stacks of %s (bytes, objects)" % (p.name, name))


@test("expect.alloc_sizes", needs=())
def _alloc_sizes():
    for name, sizes in ALLOC_SIZES.items():
        t = totals(SIZES if name == SIZES.name else BY_NAME[name])
        check_eq((sum(sizes), len(sizes)), (t["alloc_space"], t["alloc_objects"]),
                 "%s: ALLOC_SIZES (bytes, objects) against funcs" % name)


def vg_expect(p):
    t = totals(p)
    return {
        "allocs": t["alloc_objects"], "bytes": t["alloc_space"],
        "inuse_bytes": t["inuse_space"], "inuse_blocks": t["inuse_objects"],
        "frees": t["alloc_objects"] - t["inuse_objects"],
    }


def compare_valgrind(p, vg, want):
    details = mtlib.tail(vg.stderr, 12)
    for key, value in want.items():
        got = getattr(vg, key)
        if p.extra:
            check(got >= value, "%s: valgrind %s %d < %d expected from the program" % (p.name, key, got, value),
                  details)
        else:
            check_eq(got, value, "%s: valgrind %s" % (p.name, key), details)


def make_valgrind_test(p):
    @test("valgrind." + p.name, needs=("valgrind",))
    def _t():
        vg = mtlib.valgrind(p.name)
        check_eq(vg.rc, p.exit_status, "%s: exit status under valgrind" % p.name, mtlib.tail(vg.stderr))
        compare_valgrind(p, vg, vg_expect(p))


for _p in PROGRAMS + [SIZES]:
    if _p.valgrind is None:
        make_valgrind_test(_p)


@test("valgrind.waiter", needs=("valgrind",))
def _waiter():
    # Run whole under valgrind (two lines on stdin): the PRE blocks count too.
    vg = mtlib.valgrind("waiter", input_text="\n\n")
    check_eq(vg.rc, 0, "waiter: exit status under valgrind", mtlib.tail(vg.stderr))
    want = vg_expect(WAITER)
    want["allocs"] += WAITER_PRE
    want["bytes"] += WAITER_PRE * WAITER_PRE_SIZE
    want["frees"] += WAITER_PRE
    compare_valgrind(WAITER, vg, want)


assert set(METRICS) == {"inuse_space", "inuse_objects", "alloc_space", "alloc_objects"}
