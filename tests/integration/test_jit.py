"""JIT-compiled code named by the perf map its process writes
(/tmp/perf-PID.map, "START SIZE name" lines, as node --perf-basic-prof
writes them): tests/progs/jit.c copies code that calls malloc into an
anonymous executable mapping and names it there.  memtrace reads the map
at the process's exit stop and names the frames by it; the return address
is the first byte of the next entry (jit_epilogue), the call the last
instruction of jit_alloc_fn, which must get the bytes."""

import os

import mtlib
from mtlib import check, check_eq, test

# jit.c, from its source: JIT_BLOCKS blocks of JIT_SIZE from the JIT code.
JIT_BYTES = 3 * 1000


@test("jit.perf_map")
def _jit_perf_map():
    res, rep = mtlib.trace("jit")
    # The program leaves its map behind, as node does.
    if rep.target_pid:
        try:
            os.unlink("/tmp/perf-%d.map" % rep.target_pid)
        except FileNotFoundError:
            pass
    d = mtlib.tail(rep.text, 40)
    check_eq(res.rc, 0, "exit status", d)
    row = rep.row("jit_alloc_fn")
    check(row is not None, "no jit_alloc_fn row (the perf map was not read)", d)
    check_eq(row.flat, JIT_BYTES, "flat inuse_space of jit_alloc_fn", d)
    check(rep.row("jit_epilogue") is None,
          "jit_epilogue named: the return address was looked up, not the call", d)
    check(not any(r.function.startswith("[unknown]") for r in rep.rows),
          "an [unknown] frame left", d)
    st = [s for s in rep.stacks if s.frames and s.frames[0].function == "jit_alloc_fn"]
    check(st and len(st[0].frames) > 1 and st[0].frames[1].function == "main",
          "jit_alloc_fn's caller is not main (the walk through the JIT frame)", d)
