"""What each test program in tests/progs allocates, written once, by reading
the programs (never from memtrace's output).

funcs: function -> Fn(inuse bytes, inuse objects, alloc bytes, alloc
       objects, marker of the line where the function is defined).  The
       values are the function's *flat* numbers: what it allocated itself
       (it is the allocator's direct caller).
stacks: the stacks that still hold memory at exit, as Stack(frames, inuse
       bytes, inuse objects); frames are leaf first, each Frame(function,
       marker of the call-site line, inlined?).  Only the first frames are
       given: whatever memtrace shows below them (libc's start code) is not
       checked.  Together they cover every block in use, so the cum of a
       function is the sum over the stacks that contain it.
extra: None, or what else allocates in the program (libc creating a thread,
       libstdc++ starting up): then the totals are more than the sum of
       funcs and come from valgrind only.
valgrind: None, or why valgrind cannot run the program (then the totals are
       the sum of funcs).
failed: allocator calls that fail (return NULL or an error).
calls: every call the program makes to the malloc family and free (a call
       made from inside another, e.g. realloc -> malloc, not; free(NULL) not
       either: memtrace probes glibc's free after its NULL check, on an
       instruction the kernel emulates, see src/loader/attach/prologue.c), or None
       when libc/libstdc++ make calls of their own (extra).
untracked: frees of blocks memtrace never saw allocated.  Under -- CMD
       nothing is allocated before it attaches, so only glibc's own frees of
       blocks it got without malloc count (see threads).
untracked_hint: why memtrace may see such frees anyway.
alloc_stacks: like stacks, by alloc_space: Stack(frames, alloc bytes, alloc
       objects), every stack that allocated (realloc: one per call site).
"""

import collections

Fn = collections.namedtuple("Fn", "inuse_space inuse_objects alloc_space alloc_objects def_marker")
Frame = collections.namedtuple("Frame", "function marker inlined")
Stack = collections.namedtuple("Stack", "frames inuse_space inuse_objects")
Prog = collections.namedtuple("Prog", "name src funcs stacks extra valgrind failed exit_status calls "
                                      "untracked untracked_hint alloc_stacks")

METRICS = ("inuse_space", "inuse_objects", "alloc_space", "alloc_objects")


def F(function, marker, inlined=False):
    return Frame(function, marker, inlined)


def prog(name, src, funcs, stacks, extra=None, valgrind=None, failed=0, exit_status=0, calls=None,
         untracked=0, untracked_hint=None, alloc_stacks=None):
    return Prog(name, src, funcs, stacks, extra, valgrind, failed, exit_status, calls, untracked,
                untracked_hint, alloc_stacks)


PROGRAMS = [
    prog("leaks", "leaks.c",
         funcs={
             "leak_one": Fn(300, 3, 300, 3, "DEF_LEAK_ONE"),          # 3 x malloc(100)
             "leak_three": Fn(2000, 2, 2000, 2, "DEF_LEAK_THREE"),    # 2 x malloc(1000)
             "leak_five": Fn(385, 5, 385, 5, "DEF_LEAK_FIVE"),        # 5 x malloc(77)
             "calloc_leak": Fn(480, 2, 480, 2, "DEF_CALLOC_LEAK"),    # 2 x calloc(10, 24)
             "zero_leak": Fn(0, 1, 0, 1, "DEF_ZERO_LEAK"),            # malloc(0)
             "churn": Fn(0, 0, 640, 10, "DEF_CHURN"),                 # 10 x malloc(64), freed
             "half_freed": Fn(512, 2, 1024, 4, "DEF_HALF_FREED"),     # 4 x malloc(256), 2 freed
         },
         stacks=[
             Stack([F("leak_one", "LEAK_ONE"), F("main", "CALL_LEAK_ONE")], 300, 3),
             Stack([F("leak_three", "LEAK_THREE"), F("depth3_b", "CALL_LEAK_THREE"),
                    F("depth3_a", "CALL_DEPTH3_B"), F("main", "CALL_DEPTH3_A")], 2000, 2),
             Stack([F("leak_five", "LEAK_FIVE"), F("depth5_d", "CALL_LEAK_FIVE"),
                    F("depth5_c", "CALL_DEPTH5_D"), F("depth5_b", "CALL_DEPTH5_C"),
                    F("depth5_a", "CALL_DEPTH5_B"), F("main", "CALL_DEPTH5_A")], 385, 5),
             Stack([F("calloc_leak", "CALLOC_LEAK"), F("main", "CALL_CALLOC_LEAK")], 480, 2),
             Stack([F("zero_leak", "ZERO_LEAK"), F("main", "CALL_ZERO_LEAK")], 0, 1),
             Stack([F("half_freed", "HALF_FREED"), F("main", "CALL_HALF_FREED")], 512, 2),
         ],
         calls=27 + 12),  # allocations, frees (free(NULL) never reaches the probe)

    prog("aligned", "aligned.c",
         funcs={
             "pm_leak": Fn(400, 2, 400, 2, "DEF_PM_LEAK"),            # 2 x posix_memalign(64, 200)
             "aa_leak": Fn(256, 1, 256, 1, "DEF_AA_LEAK"),            # aligned_alloc(128, 256)
             "ma_leak": Fn(300, 3, 300, 3, "DEF_MA_LEAK"),            # 3 x memalign(32, 100)
             "va_leak": Fn(1000, 1, 1000, 1, "DEF_VA_LEAK"),          # valloc(1000)
             "aligned_churn": Fn(0, 0, 192, 2, "DEF_ALIGNED_CHURN"),  # 128 + 64, freed
         },
         stacks=[
             Stack([F("pm_leak", "PM_LEAK"), F("main", "CALL_PM_LEAK")], 400, 2),
             Stack([F("aa_leak", "AA_LEAK"), F("main", "CALL_AA_LEAK")], 256, 1),
             Stack([F("ma_leak", "MA_LEAK"), F("main", "CALL_MA_LEAK")], 300, 3),
             Stack([F("va_leak", "VA_LEAK"), F("main", "CALL_VA_LEAK")], 1000, 1),
         ],
         calls=9 + 2),

    prog("pvalloc", "pvalloc.c",
         funcs={
             "pva_leak": Fn(8192, 1, 8192, 1, "DEF_PVA_LEAK"),        # pvalloc(5000) -> 2 pages
             "pva_churn": Fn(0, 0, 12288, 1, "DEF_PVA_CHURN"),        # pvalloc(3 pages), freed
         },
         stacks=[
             Stack([F("pva_leak", "PVA_LEAK"), F("main", "CALL_PVA_LEAK")], 8192, 1),
         ],
         valgrind="valgrind 3.19 aborts on pvalloc (\"Program aborting because of call to pvalloc\")",
         calls=2 + 1),

    prog("realloc", "realloc.c",
         funcs={
             # malloc(10) -> realloc 100 -> realloc 1000: 3 allocations, 1000 kept
             "realloc_chain": Fn(1000, 1, 1110, 3, "DEF_REALLOC_CHAIN"),
             "realloc_null": Fn(300, 1, 300, 1, "DEF_REALLOC_NULL"),          # realloc(NULL, 300)
             "realloc_zero": Fn(0, 0, 50, 1, "DEF_REALLOC_ZERO"),             # malloc(50), realloc(p, 0)
             "rarray": Fn(320, 1, 480, 2, "DEF_RARRAY"),                      # 160 -> 320 kept
             "realloc_shrink": Fn(0, 0, 9000, 3, "DEF_REALLOC_SHRINK"),       # 4000 -> 2000 -> 3000, freed
         },
         stacks=[
             Stack([F("realloc_chain", "CHAIN_REALLOC_1000"), F("main", "CALL_REALLOC_CHAIN")], 1000, 1),
             Stack([F("realloc_null", "REALLOC_NULL"), F("main", "CALL_REALLOC_NULL")], 300, 1),
             Stack([F("rarray", "RARRAY_GROW"), F("main", "CALL_RARRAY")], 320, 1),
         ],
         calls=3 + 1 + 2 + 2 + 4,  # a realloc is one call: one allocation and one free
         alloc_stacks=[
             Stack([F("realloc_chain", "CHAIN_MALLOC"), F("main", "CALL_REALLOC_CHAIN")], 10, 1),
             Stack([F("realloc_chain", "CHAIN_REALLOC_100"), F("main", "CALL_REALLOC_CHAIN")], 100, 1),
             Stack([F("realloc_chain", "CHAIN_REALLOC_1000"), F("main", "CALL_REALLOC_CHAIN")], 1000, 1),
             Stack([F("realloc_null", "REALLOC_NULL"), F("main", "CALL_REALLOC_NULL")], 300, 1),
             Stack([F("realloc_zero", "REALLOC_ZERO_MALLOC"), F("main", "CALL_REALLOC_ZERO")], 50, 1),
             Stack([F("rarray", "RARRAY_NEW"), F("main", "CALL_RARRAY")], 160, 1),
             Stack([F("rarray", "RARRAY_GROW"), F("main", "CALL_RARRAY")], 320, 1),
             Stack([F("realloc_shrink", "SHRINK_MALLOC"), F("main", "CALL_REALLOC_SHRINK")], 4000, 1),
             Stack([F("realloc_shrink", "SHRINK_REALLOC_2000"), F("main", "CALL_REALLOC_SHRINK")], 2000, 1),
             Stack([F("realloc_shrink", "SHRINK_REALLOC_3000"), F("main", "CALL_REALLOC_SHRINK")], 3000, 1),
         ]),

    prog("failures", "failures.c",
         funcs={
             "fail_realloc": Fn(40, 1, 40, 1, "DEF_FAIL_REALLOC"),    # malloc(40), two failed reallocs
         },
         stacks=[
             Stack([F("fail_realloc", "FAIL_REALLOC_MALLOC"), F("main", "CALL_FAIL_REALLOC")], 40, 1),
         ],
         # realloc, reallocarray, malloc, calloc, posix_memalign, aligned_alloc, memalign
         failed=7,
         calls=8),

    prog("threads", "threads.c",
         funcs={
             # thread i: 2000 x (100 * (i + 1)) bytes, keeps 100: sizes sum to 1000
             "worker": Fn(100 * 1000, 4 * 100, 2000 * 1000, 4 * 2000, "DEF_WORKER"),
         },
         stacks=[
             Stack([F("worker", "WORKER_MALLOC")], 100 * 1000, 400),
         ],
         extra="pthread_create allocates each thread's TLS (DTV) with calloc",
         # 4 threads x (the tcache + the one block each leaves in it): see the hint.
         untracked=8,
         untracked_hint="glibc's tcache_thread_shutdown, as each thread exits, frees the blocks left in "
                        "the thread's tcache (already freed once by the program) and the tcache itself "
                        "(allocated by _int_malloc, never through malloc) through free()"),

    prog("shapes", "shapes.cpp",
         funcs={
             "shapes::Grid::grow": Fn(1536, 3, 1536, 3, "DEF_GRID_GROW"),         # 3 x 512
             "shapes::Grid::scratch": Fn(0, 0, 128, 2, "DEF_GRID_SCRATCH"),       # 2 x 64, freed
             "shapes::Box<long>::fill": Fn(56, 1, 56, 1, "DEF_BOX_FILL"),         # calloc(7, 8)
         },
         stacks=[
             Stack([F("shapes::Grid::grow", "GRID_GROW"), F("main", "CALL_GRID_GROW")], 1536, 3),
             Stack([F("shapes::Box<long>::fill", "BOX_FILL"), F("main", "CALL_BOX_FILL")], 56, 1),
         ],
         extra="libstdc++ allocates its emergency exception pool before main"),

    prog("inline", "inline.c",
         funcs={
             "inl_alloc": Fn(96, 1, 96, 1, "DEF_INL_ALLOC"),          # inlined into outer_fn
             "outer_fn": Fn(0, 0, 0, 0, "DEF_OUTER_FN"),              # flat 0, cum 96
             "plain_o2": Fn(48, 1, 48, 1, "DEF_PLAIN_O2"),
         },
         stacks=[
             Stack([F("inl_alloc", "INL_MALLOC", inlined=True), F("outer_fn", "CALL_INL_ALLOC"),
                    F("main", "CALL_OUTER_FN")], 96, 1),
             Stack([F("plain_o2", "PLAIN_O2"), F("main", "CALL_PLAIN_O2")], 48, 1),
         ],
         calls=2),

    prog("exit7", "exit7.c",
         funcs={
             "leak_123": Fn(123, 1, 123, 1, "DEF_LEAK_123"),
         },
         stacks=[
             Stack([F("leak_123", "LEAK_123"), F("main", "CALL_LEAK_123")], 123, 1),
         ],
         exit_status=7,
         calls=1),
]

BY_NAME = {p.name: p for p in PROGRAMS}

# sizes.c, at the edges of the size histogram's classes: not in PROGRAMS,
# because its blocks of 1 to 4 bytes are not reproduced exactly by -s 1
# (test_sample_modes); valgrind and the histogram tests check it.
SIZES = prog("sizes", "sizes.c",
             funcs={
                 # malloc of 0, 1, 2, 3, 4, 1023, 1024, 1025, kept
                 "class_edges": Fn(3082, 8, 3082, 8, "DEF_CLASS_EDGES"),
                 "calloc_edges": Fn(2047, 2, 2047, 2, "DEF_CALLOC_EDGES"),    # calloc(3, 341), calloc(2, 512)
                 "realloc_edge": Fn(4096, 1, 8191, 2, "DEF_REALLOC_EDGE"),    # malloc(4095) -> realloc 4096
                 "huge": Fn(0, 0, 2 ** 31 - 1, 2, "DEF_HUGE"),                # 2^30 - 1 and 2^30, freed
                 "churn": Fn(0, 0, 600, 6, "DEF_CHURN"),                      # 6 x malloc(100), freed
             },
             stacks=[
                 Stack([F("class_edges", "CLASS_EDGES"), F("main", "CALL_CLASS_EDGES")], 3082, 8),
                 Stack([F("calloc_edges", "CALLOC_EDGES"), F("main", "CALL_CALLOC_EDGES")], 2047, 2),
                 Stack([F("realloc_edge", "REALLOC_EDGE"), F("main", "CALL_REALLOC_EDGE")], 4096, 1),
             ],
             calls=8 + 2 + 2 + 4 + 12)  # a realloc is one call; huge and churn free what they allocate

# The size asked for of every allocation a program makes (realloc: the new
# size), from its source, for the size histogram; test_ground_truth checks
# them against funcs (their count and sum are the program's alloc totals).
ALLOC_SIZES = {
    "leaks": [100] * 3 + [1000] * 2 + [77] * 5 + [240] * 2 + [0] + [64] * 10 + [256] * 4,
    "realloc": [10, 100, 1000, 300, 50, 160, 320, 4000, 2000, 3000],
    "sizes": [0, 1, 2, 3, 4, 1023, 1024, 1025, 1023, 1024, 4095, 4096, 2 ** 30 - 1, 2 ** 30]
             + [100] * 6,
}

# mmapper.c under --mmap: what it mallocs (glibc maps both blocks itself:
# heap blocks) and what it maps itself (mremap: the new size).
MMAPPER_HEAP_SIZES = [4 << 20, 2 << 20]
MMAPPER_MMAP_SIZES = [1 << 20, 8192, 4096, 16384]

# waiter.c, traced with -p after it has allocated WAITER_PRE blocks of 32
# bytes: those are freed while traced (untracked frees), then waiter_leak
# and waiter_churn run.
WAITER_PRE = 5
WAITER_PRE_SIZE = 32
WAITER = prog("waiter", "waiter.c",
              funcs={
                  "waiter_leak": Fn(2100, 3, 2100, 3, "DEF_WAITER_LEAK"),     # 3 x 700
                  "waiter_churn": Fn(0, 0, 500, 10, "DEF_WAITER_CHURN"),      # 10 x 50, freed
              },
              stacks=[
                  Stack([F("waiter_leak", "WAITER_LEAK"), F("main", "CALL_WAITER_LEAK")], 2100, 3),
              ],
              calls=5 + 3 + 10 + 10)  # traced part: the PRE frees, the leaks, churn's mallocs and frees


def fn_total(p, metric):
    return sum(getattr(f, metric) for f in p.funcs.values())


def totals(p):
    """Totals implied by funcs (valid when not p.extra)."""
    return {m: fn_total(p, m) for m in METRICS}
