/* SPDX-License-Identifier: MIT */
/*
 * memleak.h: the one header shared by the BPF program (bpf/memleak.bpf.c)
 * and the userspace loader.  It holds the map key/value layouts and the
 * indices of the counters, nothing else.
 */
#ifndef MEMTRACE_MEMLEAK_H
#define MEMTRACE_MEMLEAK_H

/* Deepest user stack recorded: deep C++ template code (clang) has stacks
 * of a few hundred frames.  A stack is kept in segments of MT_STACK_SEG
 * frames (struct mt_stack), at most MT_STACK_SEGS of them. */
#define MT_MAX_STACK_DEPTH 1024
#define MT_STACK_SEG 23
#define MT_STACK_SEGS 45
_Static_assert(MT_STACK_SEG * MT_STACK_SEGS >= MT_MAX_STACK_DEPTH,
	       "the segments hold the deepest stack");
/* Segments the stacks map holds for each of --max-stacks: a stack takes
 * one up to 23 frames and shares its outer ones with others (clang-14's
 * 54,923 stacks of 69 frames on average take 67,664).  Its buckets are
 * made at the start (16 bytes each): 2 MiB of an idle trace. */
#define MT_STACK_SEGS_PER_STACK 2

/* Stack id 0 means "no stack could be recorded" (see the drop counters). */
#define MT_STACK_NONE 0ULL

/* Default map sizes; both can be changed with --max-allocs/--max-stacks.
 * Ceilings: "allocs" holds what is live (made on demand), its bucket
 * array alone (16 bytes per power-of-two bucket) is made at the start. */
#define MT_DEFAULT_MAX_ALLOCS (1U << 20)
#define MT_DEFAULT_MAX_STACKS (1U << 16)
/* Processes kept at once: names, execs, followed, timeline slots. */
#define MT_MAX_PROCS 32768
/* The signal ld.so's hook sends a process held for the loader (dl_hold). */
#define MT_DL_HOLD_SIGNAL 23 /* SIGURG */
/* dl_hold's value for a process held at every later call of the hook (its
 * dlopens), once its exec's stops are done; 1 and 2 count those stops. */
#define MT_HOLD_DLOPEN 3
/* Unwind table rows (8 bytes each): libc has some 25k, python3 61k,
 * clang-14 with its libraries (libLLVM, libclang-cpp, libz3, ...) some
 * 3.2M.  A ceiling (128 MiB): rows and page indices are kept in chunks
 * made as the tables loaded need them (src/loader/bpf/map_chunks.c), so only
 * what is loaded costs kernel memory. */
#define MT_DEFAULT_MAX_UNWIND_ROWS (1U << 24)
#define MT_UW_ROWS_CHUNK_SHIFT 15   /* 32,768 rows (256 KiB) a chunk */
#define MT_UW_PAGES_CHUNK_SHIFT 12  /* 4,096 page indices (32 KiB) a chunk */

/*
 * Kinds of probed functions, by where their arguments are and what their
 * result means: the attach cookie of every entry probe, and what a thread
 * is in the middle of (struct mt_inflight.kind).
 */
enum mt_call_kind {
	MT_CALL_MALLOC = 1,     /* (size): malloc, mallocx, operator new, ... */
	MT_CALL_CALLOC,         /* (n, size) */
	MT_CALL_REALLOC,        /* (ptr, size): realloc, rallocx */
	MT_CALL_REALLOCARRAY,   /* (ptr, n, size) */
	MT_CALL_POSIX_MEMALIGN, /* (memptr, align, size) -> 0 */
	MT_CALL_ALIGNED_ALLOC,  /* (align, size): aligned_alloc, memalign */
	MT_CALL_VALLOC,         /* (size) */
	MT_CALL_PVALLOC,        /* (size), rounded up to pages */
	MT_CALL_XALLOCX,        /* (ptr, size, extra, flags) -> real size */
	MT_CALL_FREE,           /* (ptr), no return probe: free, dallocx, ... */
	MT_CALL_DELETE,         /* (ptr), with return probe: operator delete */
	MT_CALL_MMAP,           /* (addr, len, prot, flags, fd, off) -> addr */
	MT_CALL_MUNMAP,         /* (addr, len), no return probe */
	MT_CALL_MREMAP,         /* (old, old_len, new_len, flags, ...) -> addr */
	/* Not an allocator: ld.so's _dl_debug_state, which the dynamic loader
	 * calls (as it does for debuggers) around mapping the objects of a
	 * dlopen: the unwinder asks the loader for their tables at once. */
	MT_CALL_DL_STATE,
};

/*
 * The attach cookie of an entry probe is its kind, plus MT_COOKIE_LEAF for
 * a function known to call no other probed function (glibc's, jemalloc's
 * and tcmalloc's malloc and calloc, without --mmap): when sampling skips
 * such a call, its return probe can be skipped too (uprobe sessions).
 */
#define MT_COOKIE_KIND_MASK 0xffU
#define MT_COOKIE_LEAF 0x100U

/* What a block is: from the allocator, or an anonymous mapping (--mmap). */
enum mt_category {
	MT_CAT_HEAP = 0,
	MT_CAT_MMAP = 1,
};
#define MT_NCATEGORIES 2

/*
 * The size histogram (the per-CPU "sizes" array): what was allocated, by
 * category and power-of-two class of the size asked for (bpf/size_class.h):
 * class 0 is size 0, class k sizes 2^(k-1) to 2^k - 1, the last class
 * 2^MT_SIZE_LAST_SHIFT (1 GiB) and more.  Entry MT_SIZE_INDEX(cat, class)
 * adds up est_objects and est_bytes (struct mt_alloc_info), as the totals
 * do: estimates when sampling.
 */
#define MT_SIZE_LAST_SHIFT 30
#define MT_SIZE_CLASSES (MT_SIZE_LAST_SHIFT + 2)
#define MT_SIZE_INDEX(cat, cls) ((cat) * MT_SIZE_CLASSES + (cls))
#define MT_SIZE_ENTRIES (MT_NCATEGORIES * MT_SIZE_CLASSES)

struct mt_size_count {
	__u64 objects;
	__u64 bytes;
};

/* Indices into the per-CPU "counters" array. */
enum mt_counter {
	MT_CNT_EVENTS,          /* allocator calls seen (outermost only) */
	/* The four totals below are estimates when sampling (-s). */
	MT_CNT_ALLOC_OBJECTS,   /* successful allocations */
	MT_CNT_ALLOC_BYTES,
	/* Frees of tracked blocks: not counted in BPF (a free only deletes
	 * the block), but by the loader: allocated less still outstanding. */
	MT_CNT_FREE_OBJECTS,
	MT_CNT_FREE_BYTES,
	MT_CNT_UNTRACKED_FREES, /* frees of blocks allocated before attach */
	MT_CNT_FAILED_ALLOCS,   /* calls that returned NULL / an error */
	/* Drops: each is a record that could not be kept. */
	MT_CNT_DROP_ALLOCS_FULL,   /* outstanding-allocation map full */
	MT_CNT_DROP_STACKS_FULL,   /* stack map full */
	MT_CNT_DROP_STACK_ERRORS,  /* no user stack could be walked */
	MT_CNT_DROP_STATS_FULL,    /* per-stack totals map full */
	MT_CNT_DROP_THREADS_FULL,  /* no per-thread state (task storage) */
	MT_CNT_DROP_READ_ERRORS,   /* could not read posix_memalign's result */
	/* Not a drop: a stack kept, but cut short where the walk met a frame
	 * it could not follow (or at MT_MAX_STACK_DEPTH frames). */
	MT_CNT_STACKS_TRUNCATED,
	/* --mmap: anonymous mappings made by the program itself. */
	MT_CNT_MMAP_OBJECTS,
	MT_CNT_MMAP_BYTES,
	MT_CNT_MUNMAP_OBJECTS,  /* by the loader, as the frees */
	MT_CNT_MUNMAP_BYTES,
	/* -s: allocations sampled (each stands for its estimate). */
	MT_CNT_SAMPLES,
	/* Not a drop: a record a snapshot taken while tracing needed could
	 * not be written (the journal ring buffer was full); that snapshot
	 * is off by as many events. */
	MT_CNT_SNAPSHOT_SKEW,
	/* Timeline: allocator events of processes that got no slot in the
	 * per-process totals (MT_MAX_PROCS of them already): not in the
	 * timeline, still in the report. */
	MT_CNT_TIMELINE_FULL,
	/* Deferred unwinding (struct mt_defer_copy): stacks that met a file
	 * with no table yet, copied for the loader to unwind, and those
	 * whose copy could not be taken (the ring buffer was full: the
	 * stack is kept cut short, and counted truncated). */
	MT_CNT_DEFER_COPIES,
	MT_CNT_DEFER_LOST,
	/* MT_CNT_STACKS_TRUNCATED by reason: MT_CNT_TRUNC + enum
	 * mt_trunc_reason (every truncated stack counts in one). */
	MT_CNT_TRUNC,
	MT_CNT_TRUNC_LAST = MT_CNT_TRUNC + 8, /* MT_TRUNC__COUNT - 1 */
	MT_CNT__COUNT
};

/* Why a stack was cut short (the counters MT_CNT_TRUNC + reason). */
enum mt_trunc_reason {
	MT_TRUNC_NO_TABLE = 0, /* its file's unwind table was not loaded yet */
	MT_TRUNC_NO_CFI,       /* code with no CFI and no usable frame
				* pointer (JIT code; --unwind cfi: any) */
	MT_TRUNC_BAD_STACK,    /* the stack does not unwind: a CFA or return
				* address that cannot be (corrupt, or a stack
				* switched by a coroutine library) */
	MT_TRUNC_DEPTH,        /* MT_MAX_STACK_DEPTH frames */
	MT_TRUNC_CFI_RULE,     /* a CFI rule the unwinder cannot follow */
	MT_TRUNC_VMA_BUSY,     /* the kernel could not look up a mapping then
				* (its lock was taken: a thread mapping) */
	MT_TRUNC_COPY_LOST,    /* a stack's copy lost to a full ring buffer
				* (deferred unwinding) */
	MT_TRUNC_UNREADABLE,   /* its file, named by the kernel, could not be
				* opened for its table (deleted, and its
				* process gone) */
	MT_TRUNC_COPY_SHORT,   /* the next frame lies above the
				* MT_DEFER_STACK_MAX bytes of a stack's copy
				* (frames with large buffers: deferred
				* unwinding) */
	MT_TRUNC__COUNT
};
_Static_assert(MT_CNT_TRUNC_LAST == MT_CNT_TRUNC + MT_TRUNC__COUNT - 1,
	       "a counter for every reason");

/* The stacks of one process cut short in the BPF walk (or whose copy was
 * lost), by reason: the "trunc_procs" map, by pid, for -v (which
 * processes the header's truncated stacks are of). */
#define MT_TRUNC_PROCS 4096

struct mt_trunc_proc {
	char comm[16];
	__u64 n[MT_TRUNC__COUNT];
};

/* Key of the outstanding allocations. */
struct mt_alloc_key {
	__u32 pid;
	__u32 category;   /* enum mt_category */
	__u64 addr;
};

/* One outstanding (not yet freed) allocation. */
struct mt_alloc_info {
	__u64 size;
	__u64 stack_id;   /* key into the stacks map; MT_STACK_NONE if unknown */
	__u64 timestamp;  /* bpf_ktime_get_ns() at allocation */
	/* What the block counts for in the totals: size and 1, or when
	 * sampling the estimate it stands for (bpf/sampling.h). */
	__u64 est_bytes;
	__u64 est_objects;
};

/* Key of the per-(process, stack) totals. */
struct mt_stat_key {
	__u32 pid;
	__u32 category;   /* enum mt_category */
	__u64 stack_id;
};

/*
 * Per-(process, stack) totals of what was allocated.  What is still in
 * use is the sum of the stack's outstanding blocks ("allocs"), so a free
 * needs to touch nothing but the block: the loader derives the freed.
 */
struct mt_stat {
	/* Objects first: the BPF program adds the bytes, then the objects,
	 * and a reader copies objects, then bytes; so a reader that sees an
	 * allocation's objects sees its bytes (struct mt_journal). */
	__u64 alloc_objects;
	__u64 alloc_bytes;
};

/*
 * A snapshot while tracing (the loader sets journal_on, then takes its
 * instant T0, then reads the maps as they change): every allocation and
 * every free recorded meanwhile is also written to the "journal" ring
 * buffer, so that the loader can give each figure its value at T0.  An
 * allocation after T0 is taken out of its stack's totals when the totals
 * read count it (the stack's alloc_objects after it, stat_count, is at
 * most what was read); a block freed after T0 but allocated before is put
 * back among the blocks held.
 */
enum mt_journal_kind { MT_JOURNAL_ALLOC = 1, MT_JOURNAL_FREE = 2 };

/* Bits of the BPF program's journal_state (set by the loader). */
#define MT_JOURNAL_IDX 1U
#define MT_JOURNAL_ON 2U

struct mt_journal {
	__u32 kind;         /* enum mt_journal_kind */
	__u32 pid;
	__u32 category;
	__u32 pad;
	__u64 addr;
	__u64 ns;           /* when it happened (bpf_ktime_get_ns) */
	struct mt_alloc_info info;  /* the block (freed, or allocated) */
	__u64 stat_count;   /* ALLOC: the stack's alloc_objects after it; 0:
			     * its totals were not kept (stats map full) */
};

/*
 * A segment of a user stack in the "stacks" map (bpf/stack_segs.h): up to
 * MT_STACK_SEG frames, leaf (the allocator's caller) first, zero-padded,
 * then the frames of the segment whose key is next (0: the stack ends
 * here).  Segments are cut from the outermost frame: every segment but a
 * stack's first (its leaf end) is full, so stacks that share their outer
 * frames share those segments.  A segment's key is a hash of its frames
 * and next; a stack's id is its first segment's key.  The last segment
 * is stored first: a segment found has all its next ones.  192 bytes: a
 * map element of 256 bytes in the kernel (a 127-frame array took 2 KiB).
 */
struct mt_stack {
	__u64 next;
	__u64 ips[MT_STACK_SEG];
};

/* The name of a process that allocated (system-wide: it may be gone soon). */
struct mt_comm {
	char comm[16];
};

/* A traced process exec'd: when (bpf_ktime_get_ns), and its new name. */
struct mt_exec {
	__u64 ns;
	char comm[16];
};

/* A process -- CMD follows: who forked it (0: CMD itself). */
struct mt_follow {
	__u32 parent;
	__u32 pad;
};

/* Per-thread state from an allocator's entry to its return. */
struct mt_inflight {
	__u64 sp;     /* stack pointer at the outermost entry */
	__u64 size;   /* requested size in bytes */
	__u64 arg;    /* realloc: old pointer; posix_memalign: memptr */
	__u32 kind;   /* enum mt_call_kind */
	__u32 depth;  /* nesting of family calls inside the allocator */
	/* The last free since the last allocation: one free-like function
	 * tail-calling another (tcmalloc's sized free) is one free. */
	__u64 freed_ptr;
	__u64 freed_sp;
	/* -s: bytes this thread still allocates before its next sample. */
	__u64 sample_left;
	__u32 sample_ready;  /* sample_left has been drawn */
	__u32 sampled;       /* the call in flight is sampled */
	/* The call in flight began before recording did (enum mt_trace_state):
	 * its event is counted at its return, if it is recorded. */
	__u32 uncounted;
	/* Timeline: this thread's process's slot in "proc_totals", plus 1
	 * (0: not looked up yet); checked against the slot's pid. */
	__u32 tl_slot;
};

/*
 * Timeline (--timeline-interval, bpf/proc_totals.h): one process's totals,
 * in a slot of the BPF_F_MMAPABLE array "proc_totals", which the loader
 * reads with plain loads every interval.  Heap blocks only (not --mmap's
 * mappings), counted as the report counts them: est_bytes/est_objects
 * when sampling.  Since the slot was given to the process:
 *   alloc_*   what it allocated (a block the allocs map could not keep
 *             counts as allocated and freed at once, as in the report)
 *   free_*    what it freed, including the blocks of an image it
 *             replaced by an exec
 *   inuse_*   alloc_* - free_*
 *   peak_bytes  the largest inuse_bytes reached since the loader last
 *             exchanged it for 0
 * 72 bytes a slot, not padded to a cache line.
 */
struct mt_proc_totals {
	__u64 inuse_bytes;
	__u64 inuse_objects;
	__u64 alloc_bytes;
	__u64 alloc_objects;
	__u64 free_bytes;
	__u64 free_objects;
	__u64 peak_bytes;
	/* bpf_ktime_get_ns() of its last exec: blocks allocated before were
	 * released then, a later free of one is not counted again. */
	__u64 exec_ns;
	__u32 pid;        /* 0: the slot is free */
	__u32 pad;
};

/*
 * Where tracing is (the BPF program's trace_state, set by the loader).  An
 * allocation is recorded when its return is seen while RECORDING, a free
 * when its entry is: the maps then describe what happened between two
 * instants, although probes are attached and detached one at a time.
 */
enum mt_trace_state {
	MT_TRACE_ATTACHING = 0, /* calls are followed, nothing is recorded */
	MT_TRACE_RECORDING = 1,
	MT_TRACE_STOPPED = 2,   /* every program returns at once */
};

/*
 * Unwind tables (bpf/unwind.h walks the user stack with them).  The call
 * frame information of every executable file a target maps is compiled
 * by the loader (src/loader/unwind/unwind_table.c) into rows sorted by file
 * offset: row i says how to find the caller's frame for the code from
 * its pc to the next row's.  One table serves every process that maps
 * the file: it is found by the file's identity (struct mt_file_key).
 */
#define MT_UW_PAGE_SHIFT 12

enum mt_uw_kind {
	MT_UW_NONE = 0,  /* no CFI covers this code: step by frame pointer */
	MT_UW_RSP,       /* CFA = rsp + 8 * cfa_off8 */
	MT_UW_RBP,       /* CFA = rbp + 8 * cfa_off8 */
	MT_UW_PLT,       /* CFA = rsp + 8 * cfa_off8, + 8 when
			  * (pc & 15) >= rbp_off8 (a lazy-binding PLT entry) */
	MT_UW_END,       /* the return address is undefined: outermost frame */
	MT_UW_STOP,      /* a rule the unwinder cannot follow: the walk ends,
			  * the stack counts as truncated */
};
#define MT_UW_KIND_MASK 0x0fU
#define MT_UW_RBP_LOST 0x10U  /* the caller's rbp cannot be recovered */
#define MT_UW_SKIP 0x20U      /* code of the allocator's (operator new calling
			       * malloc): a frame here at the top of a stack
			       * is left out, so the first is new's caller */

/* The return address is always at CFA - 8 (rows where it is not say STOP). */
struct mt_unwind_row {
	__u32 pc;        /* file offset of the first byte of code it covers */
	__u8 kind;       /* enum mt_uw_kind, | MT_UW_RBP_LOST */
	__s8 rbp_off8;   /* caller's rbp saved at CFA + 8 * rbp_off8; 0: kept */
	__u16 cfa_off8;
};

/* A file as the kernel knows it: its inode's superblock dev_t and number. */
struct mt_file_key {
	__u64 dev;       /* kernel encoding: major << 20 | minor */
	__u64 ino;
};

/* One executable file mapping of a process, as the kernel maps it (the
 * vma_files iterator's record). */
struct mt_vma_file {
	__u64 start, end;
	struct mt_file_key file;
};

/*
 * Where a file's table is in the row and page arrays.  pages[page_first
 * + k] is the index (from row_first) of the row that covers the file
 * offset (first_page + k) << MT_UW_PAGE_SHIFT, for k in [0, npages]: the
 * row of an offset in page k lies between pages[k] and pages[k + 1].
 * nrows == 0: the file has no CFI (frame pointers are followed).
 */
struct mt_unwind_module {
	__u32 row_first;
	__u32 nrows;
	__u32 page_first;
	__u32 npages;
	__u64 first_page;
};

/*
 * --bench-part: how much of the work the programs do, so that a benchmark
 * can tell what each part costs (the traps, the table of blocks, the
 * stacks, the walk).  Anything but MT_PART_ALL is for benchmarks.
 */
enum mt_bench_part {
	MT_PART_ALL = 0,     /* everything (the default) */
	MT_PART_TRAPS,       /* nothing: every program returns at once */
	MT_PART_BLOCKS,      /* blocks and totals, with no stack */
	MT_PART_CALLER,      /* everything, with one-frame stacks: no walk */
};

/* --unwind. */
enum mt_unwind_mode {
	MT_UNWIND_FP = 0,    /* frame pointers only */
	MT_UNWIND_CFI,       /* unwind tables only; code without one ends the walk */
	MT_UNWIND_AUTO,      /* tables, and frame pointers where there is none */
};

/*
 * A stack met a mapped file that has no table yet: the loader makes one.
 * With no file (dev and ino 0), process PID has mapped new objects (a
 * dlopen): the loader makes the tables of its files it has none of.
 */
struct mt_unwind_missing {
	struct mt_file_key file;
	__u32 pid;
	__u32 pad;
	__u64 start;     /* the mapping, to open it by /proc/PID/map_files */
	__u64 end;
};

/*
 * Deferred unwinding: a walk that meets a mapped file with no table yet
 * does not stop there.  The BPF program copies the user stack from that
 * frame's stack pointer up (at most MT_DEFER_STACK_MAX bytes, up to the
 * last page that can be read) with the walk's state into the "unwind_copies" ring
 * buffer, and files the allocation under a provisional stack id of its
 * own (id), whose frames in "stacks" are those walked so far.  The loader
 * unwinds the copy once the tables are there, with the same step
 * (bpf/unwind_step.h), and counts the provisional stack as the whole one
 * from then on (src/loader/unwind/deferred_unwind.c).
 */
#define MT_DEFER_STACK_MAX 32768
/* How long after a file was first met without a table its stacks are
 * copied (then they are cut short there, as without deferring). */
#define MT_DEFER_WINDOW_NS (2ULL * 1000 * 1000 * 1000)
#define MT_DEFER_CHUNK 4096
/* mt_defer_copy.flags: the copy could run to MT_DEFER_STACK_MAX bytes (a
 * thread's stack, or the main thread's with its top further): a frame
 * above that bound was not copied, not missing from the stack. */
#define MT_DEFER_BOUNDED 1U

struct mt_defer_copy {
	__u64 id;          /* the provisional stack id */
	__u32 pid;
	__u32 n;           /* frames walked before (ips[0..n)) */
	__u64 pc, sp, bp;  /* the walk's state at the frame with no table */
	__u32 steps;       /* frames stepped past before it */
	__u32 len;         /* bytes of stack copied, from sp */
	/* Bit i: the stack's page i (from sp's) could be read; a page never
	 * touched (a large buffer of a frame's) cannot, and is left as a
	 * hole, as unreadable to the loader as it was to the BPF walk. */
	__u32 pages_read;
	__u32 flags;       /* MT_DEFER_BOUNDED */
	/* The executable mapping that holds pc, and its file. */
	__u64 vm_start, vm_end, vm_delta;
	struct mt_file_key file;
	/* The len bytes of stack copied, then the n frames walked before
	 * (8-byte words, leaf first): only what there is goes in the ring
	 * buffer (MT_DEFER_FRAMES()). */
	__u8 stack[MT_DEFER_STACK_MAX + 8 * MT_MAX_STACK_DEPTH];
};
/* The frames walked before, in copy C. */
#define MT_DEFER_FRAMES(c) ((c)->stack + (c)->len)

/*
 * A process's executable file mappings as the kernel has them, sent by the
 * BPF program on the unwind_copies ring buffer ahead of the copies that
 * need them (bpf/vma_dump.h): at a process's first stack, and again at a
 * copy when its mappings changed.  A process may be gone (and its /proc
 * with it) before the loader reads a copy: this is what lets the loader
 * find and open its files then.  One record per mapping; the first of a
 * dump has MT_VMA_FIRST (the mappings before are replaced).  kind is
 * where a copy has its id, which is never 0.
 */
#define MT_VMA_PATH_MAX 256
#define MT_VMA_FIRST 1U      /* flags: the first mapping of a dump */
#define MT_VMA_PATH_CUT 2U   /* path: not up to the root (too deep, long) */
#define MT_VMA_NEW_MM 4U     /* with FIRST: a new address space (an exec) */

struct mt_vma_record {
	__u64 kind;        /* 0: not a copy */
	__u32 pid;
	__u32 flags;
	__u64 start, end;
	__u64 offset;      /* the file offset at start */
	struct mt_file_key file;
	__u32 path_len;    /* bytes of path used */
	__u32 pad;
	/* The file's path from the process's root, its components leaf
	 * first, each ended by a NUL ("libc.so.6\0x86_64-linux-gnu\0lib\0"). */
	char path[MT_VMA_PATH_MAX];
};

#endif /* MEMTRACE_MEMLEAK_H */
