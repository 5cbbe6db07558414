// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * memleak.bpf.c: the kernel side of memtrace.
 *
 * Entry uprobes remember, per thread, which allocator function was called
 * and with what arguments; the return probe decides what happened (a block
 * allocated, a realloc moving a block, a failure) and records it.  free()
 * needs no return probe.  A family function called from inside another one
 * (realloc -> malloc, reallocarray -> realloc) is nested and ignored, so
 * every call the program makes counts once.
 *
 * Maps: "allocs" (outstanding blocks), "stats" (per process and stack
 * allocation totals), "stacks" (user stacks by hash), "inflight"
 * (per-thread call state), "counters" (totals and drop counters, per
 * CPU) and "sizes" (what was allocated, by size class, per CPU).  A free
 * only deletes its block from "allocs": what each stack still holds is
 * the sum of its outstanding blocks, and the loader derives what was
 * freed from it.
 *
 * With -s (sample_bytes), only the allocations a per-thread Poisson
 * process picks are recorded, each counting for the estimate it stands
 * for (bpf/sampling.h).  Where the kernel has uprobe sessions, one program
 * (uprobe_session) serves a function's entry and return, and an entry
 * that records nothing cancels the return probe.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "memleak.h"
#include "sampling.h"
#include "size_class.h"

#define EEXIST 17
#define MT_MAP_ANONYMOUS 0x20

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set by the loader before load. */
const volatile __u64 page_size = 4096;
/* --bench-part (enum mt_bench_part); --probe-only is MT_PART_TRAPS: every
 * program returns at once (the cost of the traps alone). */
const volatile __u32 bench_part = MT_PART_ALL;
/* memtrace's own process, never traced (system-wide tracing sees it too). */
const volatile __u32 self_tgid = 0;
/* -s: mean bytes between samples (0: every allocation is recorded), and
 * the tables of bpf/sampling.h, filled by the loader. */
const volatile __u64 sample_bytes = 0;
const volatile __u32 log2_tab[MT_LOG2_STEPS + 1];
const volatile __u32 g_tab[MT_G_ENTRIES];

/* enum mt_trace_state, set by the loader through the skeleton's .bss. */
volatile __u32 trace_state;
/*
 * A snapshot is being read: every change is journaled too (memleak.h).
 * MT_JOURNAL_ON: journal; MT_JOURNAL_IDX: which of the two "active"
 * counters a program that starts now counts itself in, so that the loader
 * can wait for every program that started before a change of state.
 */
volatile __u32 journal_state;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} active SEC(".maps");

/* A program begins: counted in this CPU's active[idx] until it ends (a
 * program does not migrate while it runs). */
static __always_inline __u64 *activity_begin(void)
{
	__u32 idx = journal_state & MT_JOURNAL_IDX;
	__u64 *a = bpf_map_lookup_elem(&active, &idx);

	if (a)
		__sync_fetch_and_add(a, 1);
	return a;
}

static __always_inline void activity_end(__u64 *a)
{
	if (a)
		__sync_fetch_and_add(a, -1);
}

static __always_inline bool journaling(void)
{
	return journal_state & MT_JOURNAL_ON;
}

/* Uprobe sessions (kernels from 6.13): is this the return half? */
extern bool bpf_session_is_return(void) __ksym __weak;

/*
 * bpf_session_is_return() as 0 or 1 for the verifier: it knows nothing
 * of the kfunc's bool, and a session program must return 0 or 1 (6.18
 * refuses "return is_return ? 0 : 1" compiled to an XOR of the whole
 * register: the load failed and memtrace fell back to two probes per
 * call).
 */
static __always_inline int session_is_return(void)
{
	int r = bpf_session_is_return();

	asm volatile("" : "+r"(r)); /* the mask below is kept */
	return r & 1;
}

/*
 * Made on demand, so that the kernel memory follows what is live (a
 * preallocated map of the default 1,048,576 entries took 126 MB at the
 * start): an element comes from the kernel's BPF allocator, whose per-CPU
 * cache is refilled by irq_work (a self-IPI) every 48 allocations while
 * the blocks held grow, some 500 ns of each allocation's return program
 * then on a VM; a program that frees as much as it allocates pays
 * nothing more.  The update fails (a counted drop) once max_entries are
 * held: --max-allocs is a ceiling.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_DEFAULT_MAX_ALLOCS);
	__type(key, struct mt_alloc_key);
	__type(value, struct mt_alloc_info);
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_DEFAULT_MAX_STACKS);
	__type(key, struct mt_stat_key);
	__type(value, struct mt_stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_DEFAULT_MAX_STACKS);
	__type(key, __u64);
	__type(value, struct mt_stack);
} stacks SEC(".maps");

/* Per-thread state: "threads", or task storage (thread_slots.h). */
#include "thread_slots.h"

/*
 * The per-process hash maps (comms, followed, execs, proc_slots,
 * unwind_vmas) are not preallocated: a few entries are used in most runs,
 * and making 32,768 of each cost some 4 ms of start-up per map.  An
 * update still fails once max_entries are in (E2BIG), as before.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct mt_comm);
} comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} journal SEC(".maps");

/* Pids seen for the first time, so that their mappings are read at once. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} new_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_CNT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The size histogram: entries MT_SIZE_INDEX(category, class). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_SIZE_ENTRIES);
	__type(key, __u32);
	__type(value, struct mt_size_count);
} sizes SEC(".maps");

static __always_inline void count(enum mt_counter c, __u64 v)
{
	__u32 key = c;
	__u64 *p = bpf_map_lookup_elem(&counters, &key);

	if (p)
		__sync_fetch_and_add(p, v);
}

/* One word into a 64-bit hash: stack ids, and the check words of the
 * unwinder's per-CPU caches (unwind.h). */
#define MT_MIX_SEED 0xcbf29ce484222325ULL

static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

#include "unwind.h"
#include "stack_segs.h"
#include "unwind_defer.h"
#include "proc_totals.h"

/* The current thread's state, created on first use; NULL if unavailable. */
static __always_inline struct mt_inflight *thread_state(void)
{
	struct mt_inflight *f = thread_find(true);

	if (!f)
		count(MT_CNT_DROP_THREADS_FULL, 1);
	return f;
}

/*
 * hash_stack: the one place where a stack is taken.  Walks the user stack
 * into this CPU's frames and returns the id it is stored under in
 * "stacks" (its first segment's key, a hash of all its frames:
 * stack_segs.h), or MT_STACK_NONE when it could not be taken.  It is
 * stored only when a new (process, stack) pair needs it (store_stack).
 * A global function, so that the verifier checks its loops once, not
 * once for every path of every caller.
 */
__noinline __u64 hash_stack(struct pt_regs *ctx)
{
	struct unwind_scratch *sc;
	struct uw_frames *fr;
	__u64 h;
	int n;

	if (bench_part == MT_PART_BLOCKS)
		return MT_STACK_NONE; /* not a stack error: none is taken */
	sc = unwind_scratch_get();
	fr = unwind_frames_get();
	if (!sc || !fr)
		return MT_STACK_NONE;
	if (bench_part == MT_PART_CALLER) {
		fr->ips[0] = PT_REGS_IP(ctx); /* the return address */
		n = 1;
	} else {
		n = unwind_user_stack(ctx, sc, fr);
	}
	fr->n = n > 0 ? n : 0;
	if (n <= 0 || !fr->ips[0]) {
		count(MT_CNT_DROP_STACK_ERRORS, 1);
		return MT_STACK_NONE;
	}
	h = stack_segs_hash(fr, 0);
	/* Deferred: filed under a provisional id, the copy's, which keys
	 * the first segment of the frames walked so far; a copy not taken
	 * leaves the stack cut short. */
	if (bench_part != MT_PART_CALLER && sc->u.status == UW_DEFER) {
		__u64 p = defer_copy(sc, fr, fr->n);

		if (p != MT_STACK_NONE) {
			stack_segs_hash(fr, p);
			fr->seg_ids[0] = p;
			return p;
		}
		uw_count_cut(MT_TRUNC_COPY_LOST);
	}
	return h;
}

/* Keep the stack hash_stack() just took under id H; false if full. */
static __always_inline bool store_stack(__u64 h)
{
	struct uw_frames *fr = unwind_frames_get();

	if (!fr || bpf_map_lookup_elem(&stacks, &h))
		return fr != NULL;
	if (stack_segs_store(fr)) {
		count(MT_CNT_DROP_STACKS_FULL, 1);
		return false;
	}
	return true;
}

/*
 * The totals of process PID's blocks of category CAT from stack *ID, made
 * on first use.  Only then is the stack itself stored: a known pair means
 * a known stack.  A stack that cannot be stored turns *ID into
 * MT_STACK_NONE.
 */
static __always_inline struct mt_stat *stat_of(__u32 pid, __u32 cat,
					       __u64 *id)
{
	struct mt_stat_key key = { .pid = pid, .category = cat,
				   .stack_id = *id };
	struct mt_stat zero = {};
	struct mt_stat *s = bpf_map_lookup_elem(&stats, &key);

	if (s)
		return s;
	if (*id != MT_STACK_NONE && !store_stack(*id)) {
		*id = key.stack_id = MT_STACK_NONE;
		s = bpf_map_lookup_elem(&stats, &key);
		if (s)
			return s;
	}
	/* A new stack, perhaps a new process: remember its name. */
	if (!bpf_map_lookup_elem(&comms, &pid)) {
		struct mt_comm c;

		bpf_get_current_comm(c.comm, sizeof(c.comm));
		if (bpf_map_update_elem(&comms, &pid, &c, BPF_NOEXIST) == 0) {
			bpf_ringbuf_output(&new_pids, &pid, sizeof(pid), 0);
			vma_dump(pid);
		}
	}
	bpf_map_update_elem(&stats, &key, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&stats, &key);
	if (!s)
		count(MT_CNT_DROP_STATS_FULL, 1);
	return s;
}

/*
 * A block of category CAT at ADDR is released: it leaves the outstanding
 * blocks, which is all there is to do for the report (see struct
 * mt_stat); the timeline subtracts what it counted for, when this delete
 * is the one that took it.  Returns false when no such block is known
 * (for the heap: an untracked free, counted by the caller).  F: the
 * thread's state, or NULL.
 */
static __always_inline bool record_free(struct mt_inflight *f, __u32 pid,
					__u64 addr, __u32 cat, __u64 now)
{
	struct mt_alloc_key key = { .pid = pid, .category = cat, .addr = addr };
	bool tl = timeline && cat == MT_CAT_HEAP;
	struct mt_alloc_info *info;
	__u64 bytes, objects, ts;
	struct mt_journal j;

	if (!journaling() && !tl)
		return bpf_map_delete_elem(&allocs, &key) == 0;
	/* A snapshot is read (the loader may need the block back), or the
	 * timeline needs what it counted for. */
	info = bpf_map_lookup_elem(&allocs, &key);
	if (!info)
		return false;
	bytes = info->est_bytes;
	objects = info->est_objects;
	ts = info->timestamp;
	if (!journaling()) {
		if (bpf_map_delete_elem(&allocs, &key))
			return false; /* freed by another thread meanwhile */
		tl_free(f, pid, bytes, objects, ts);
		return true;
	}
	j.kind = MT_JOURNAL_FREE;
	j.pid = pid;
	j.category = cat;
	j.pad = 0;
	j.addr = addr;
	j.info = *info;
	j.stat_count = 0;
	if (bpf_map_delete_elem(&allocs, &key))
		return false; /* freed by another thread meanwhile */
	if (tl)
		tl_free(f, pid, bytes, objects, ts);
	j.ns = now;
	if (bpf_ringbuf_output(&journal, &j, sizeof(j), 0))
		count(MT_CNT_SNAPSHOT_SKEW, 1);
	return true;
}

/* A snapshot is read: a new block, and its stack's count after it. */
static __always_inline void journal_alloc(__u32 pid, __u64 addr, __u32 cat,
					  const struct mt_alloc_info *info,
					  __u64 stat_count)
{
	struct mt_journal j = {
		.kind = MT_JOURNAL_ALLOC, .pid = pid, .category = cat,
		.addr = addr, .ns = info->timestamp, .info = *info,
		.stat_count = stat_count,
	};

	if (bpf_ringbuf_output(&journal, &j, sizeof(j), 0))
		count(MT_CNT_SNAPSHOT_SKEW, 1);
}

/*
 * Sampling, most blocks freed were never recorded, and looking each up in
 * "allocs" (1M buckets: a cache and TLB miss) was most of a free's cost.
 * "sampled" counts the heap blocks recorded, by a hash of (pid, address):
 * a free whose slot counts none is of no recorded block and skips the
 * map.  A slot is counted up before its block is kept and down after it
 * is released, so a block in "allocs" always has its slot above 0 (a
 * block replaced unseen, or released by the loader, leaves it too high:
 * a free is then looked up for nothing, no more).
 */
#define MT_SAMPLED_BITS 14

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1U << MT_SAMPLED_BITS); /* 1 without -s */
	__type(key, __u32);
	__type(value, __u32);
} sampled SEC(".maps");

static __always_inline __u32 *sampled_slot(__u32 pid, __u64 addr)
{
	__u64 h = (addr ^ ((__u64)pid << 40)) * 0x9e3779b97f4a7c15ULL;
	__u32 key = (__u32)(h >> (64 - MT_SAMPLED_BITS));

	return bpf_map_lookup_elem(&sampled, &key);
}

/* A heap block is freed; sampling, most blocks are rightly unknown. */
static __always_inline void free_heap(struct mt_inflight *f, __u32 pid,
				      __u64 addr, __u64 now)
{
	__u32 *n = sample_bytes ? sampled_slot(pid, addr) : NULL;

	if (n && !*n)
		return; /* no recorded block there */
	if (record_free(f, pid, addr, MT_CAT_HEAP, now)) {
		if (n)
			__sync_fetch_and_add(n, -1);
	} else if (!sample_bytes) {
		count(MT_CNT_UNTRACKED_FREES, 1);
	}
}

/*
 * Keep block KEY; the timeline releases a block it replaces first.  0,
 * or the update's error.
 */
static __always_inline int keep_block(struct mt_inflight *f,
				      struct mt_alloc_key *key,
				      struct mt_alloc_info *info)
{
	struct mt_alloc_info *old;
	int err;

	if (!timeline || key->category != MT_CAT_HEAP)
		return bpf_map_update_elem(&allocs, key, info, BPF_ANY);
	err = bpf_map_update_elem(&allocs, key, info, BPF_NOEXIST);
	if (err != -EEXIST)
		return err;
	old = bpf_map_lookup_elem(&allocs, key);
	if (old)
		tl_free(f, key->pid, old->est_bytes, old->est_objects,
			old->timestamp);
	return bpf_map_update_elem(&allocs, key, info, BPF_ANY);
}

/* -s: whether the next allocation, of SIZE bytes, is sampled. */
static __always_inline bool sample(struct mt_inflight *f, __u64 size)
{
	if (!f->sample_ready) {
		f->sample_left = mt_sample_interval(bpf_get_prandom_u32(),
						    sample_bytes, log2_tab);
		f->sample_ready = 1;
	}
	if (!mt_sample_hit(&f->sample_left, size))
		return false;
	f->sample_left = mt_sample_interval(bpf_get_prandom_u32(), sample_bytes,
					    log2_tab);
	return true;
}

/* What a new block of SIZE bytes counts for in the totals. */
static __always_inline void estimate(struct mt_alloc_info *info, __u64 size)
{
	__u64 q16;

	if (!sample_bytes) {
		info->est_bytes = size;
		info->est_objects = 1;
		return;
	}
	mt_sample_weight(size, sample_bytes, g_tab, &info->est_bytes, &q16);
	/* 1/p objects, rounded up or down at random: unbiased, and whole. */
	info->est_objects = (q16 >> 16) +
		((bpf_get_prandom_u32() & 0xffff) < (q16 & 0xffff));
	count(MT_CNT_SAMPLES, 1);
}

/* A new block of category CAT in the size histogram, as it counts in the
 * totals (INFO's estimate). */
static __always_inline void count_size(__u32 cat,
				       const struct mt_alloc_info *info)
{
	__u32 key = MT_SIZE_INDEX(cat, mt_size_class(info->size));
	struct mt_size_count *c = bpf_map_lookup_elem(&sizes, &key);

	if (c) {
		__sync_fetch_and_add(&c->objects, info->est_objects);
		__sync_fetch_and_add(&c->bytes, info->est_bytes);
	}
}

static __always_inline void record_alloc(void *ctx, struct mt_inflight *f,
					 __u32 pid, __u64 addr, __u64 size,
					 __u32 cat, __u64 now)
{
	struct mt_alloc_key key = { .pid = pid, .category = cat, .addr = addr };
	__u64 id = hash_stack(ctx);
	struct mt_stat *s = stat_of(pid, cat, &id);
	struct mt_alloc_info info = {
		.size = size,
		.stack_id = id,
		.timestamp = now,
	};
	__u64 stat_count = 0;
	__u32 *n = NULL;
	int err;

	estimate(&info, size);
	count_size(cat, &info);
	if (sample_bytes && cat == MT_CAT_HEAP)
		n = sampled_slot(pid, addr);
	if (n)
		__sync_fetch_and_add(n, 1);
	/* A block at the same address is replaced: it was released by a path
	 * not seen, and leaving the outstanding blocks counts it as freed. */
	err = keep_block(f, &key, &info);
	if (err) {
		count(MT_CNT_DROP_ALLOCS_FULL, 1);
		if (n)
			__sync_fetch_and_add(n, -1);
	}
	if (cat == MT_CAT_HEAP)
		tl_alloc(f, pid, info.est_bytes, info.est_objects, !err);
	if (s) {
		/* Bytes, then objects (see struct mt_stat). */
		__sync_fetch_and_add(&s->alloc_bytes, info.est_bytes);
		stat_count = __sync_fetch_and_add(&s->alloc_objects,
						  info.est_objects) +
			     info.est_objects;
	}
	if (journaling())
		journal_alloc(pid, addr, cat, &info, stat_count);
	count(cat == MT_CAT_MMAP ? MT_CNT_MMAP_OBJECTS : MT_CNT_ALLOC_OBJECTS,
	      info.est_objects);
	count(cat == MT_CAT_MMAP ? MT_CNT_MMAP_BYTES : MT_CNT_ALLOC_BYTES,
	      info.est_bytes);
}

/*
 * True when the current thread is already inside a traced family call: a
 * call made from it runs deeper in the stack, or at the same depth when it
 * is a tail call (libstdc++'s operator delete jumps to free).
 */
static __always_inline bool nested(struct mt_inflight *f, __u64 sp)
{
	return f && f->depth > 0 && sp <= f->sp;
}

/* What an entry program returns in a uprobe session. */
#define RUN_RETURN 0
#define SKIP_RETURN 1

/*
 * A call of KIND, for SIZE bytes (ARG: its pointer argument) begins.
 * SESSION: the return half runs only if this returns RUN_RETURN; without
 * sessions it always runs, and nested calls are counted in f->depth.
 */
static __always_inline int enter(struct pt_regs *ctx, __u32 kind, __u64 size,
				 __u64 arg, bool leaf, bool session)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct mt_inflight *f = thread_state();
	bool sampled = true;

	if (!f)
		return SKIP_RETURN;
	if (nested(f, sp)) {
		if (session)
			return SKIP_RETURN; /* its return would do nothing */
		f->depth++;
		return RUN_RETURN;
	}
	f->uncounted = trace_state != MT_TRACE_RECORDING;
	if (!f->uncounted)
		count(MT_CNT_EVENTS, 1);
	f->freed_ptr = 0; /* a block freed before may come back now */
	if (sample_bytes && kind != MT_CALL_DELETE)
		sampled = sample(f, size);
	if (session && leaf && !sampled) {
		f->depth = 0;
		return SKIP_RETURN; /* nothing to record, nothing inside */
	}
	f->sp = sp;
	f->size = size;
	f->arg = arg;
	f->kind = kind;
	f->depth = 1;
	f->sampled = sampled;
	return RUN_RETURN;
}

/* n * size, saturated: an overflowing calloc fails anyway. */
static __always_inline __u64 mul_size(__u64 n, __u64 size)
{
	__u64 r = n * size;

	if ((n | size) >> 32 == 0)
		return r;
	asm volatile("" : "+r"(r)); /* keep clang from a 128-bit multiply */
	return n && r / n != size ? ~0ULL : r;
}

/* free() and munmap(): released at entry, no return probe needed. */
static __always_inline int enter_release(struct pt_regs *ctx, __u64 ptr,
					 __u32 cat)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 sp = PT_REGS_SP(ctx);
	struct mt_inflight *f = thread_state();

	/* The allocator's own munmap (or free) inside a traced call. */
	if (nested(f, sp) || trace_state != MT_TRACE_RECORDING)
		return 0;
	if (cat == MT_CAT_MMAP) {
		count(MT_CNT_EVENTS, 1);
		if (ptr)
			record_free(f, pid_tgid >> 32, ptr, cat,
				    bpf_ktime_get_ns());
		return 0;
	}
	/* The same free again, tail-called by the free-like function. */
	if (f && ptr && f->freed_ptr == ptr && f->freed_sp == sp)
		return 0;
	count(MT_CNT_EVENTS, 1);
	if (!ptr)
		return 0;
	free_heap(f, pid_tgid >> 32, ptr,
		  journaling() ? bpf_ktime_get_ns() : 0);
	if (f) {
		f->freed_ptr = ptr;
		f->freed_sp = sp;
	}
	return 0;
}

/*
 * The entry half of every probed function: the attach cookie says which
 * kind of function it is (enum mt_call_kind), hence where its arguments
 * are.  Returns RUN_RETURN or SKIP_RETURN (see enter()).
 */
static __always_inline int on_entry(struct pt_regs *ctx, bool session)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 kind = (__u32)cookie & MT_COOKIE_KIND_MASK;
	bool leaf = cookie & MT_COOKIE_LEAF;
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx);
	__u64 a2 = PT_REGS_PARM3(ctx);

	if (bench_part == MT_PART_TRAPS ||
	    bpf_get_current_pid_tgid() >> 32 == self_tgid)
		return SKIP_RETURN;
	switch (kind) {
	case MT_CALL_MALLOC:
	case MT_CALL_VALLOC:
		return enter(ctx, kind, a0, 0, leaf, session);
	case MT_CALL_CALLOC:
		return enter(ctx, kind, mul_size(a0, a1), 0, leaf, session);
	case MT_CALL_REALLOC:
	case MT_CALL_XALLOCX:
		return enter(ctx, kind, a1, a0, leaf, session);
	case MT_CALL_REALLOCARRAY:
		return enter(ctx, kind, mul_size(a1, a2), a0, leaf, session);
	case MT_CALL_POSIX_MEMALIGN:
		return enter(ctx, kind, a2, a0, leaf, session);
	case MT_CALL_ALIGNED_ALLOC:
		return enter(ctx, kind, a1, 0, leaf, session);
	case MT_CALL_PVALLOC:
		return enter(ctx, kind, (a0 + page_size - 1) & ~(page_size - 1),
			     0, leaf, session);
	case MT_CALL_FREE:
		enter_release(ctx, a0, MT_CAT_HEAP);
		return SKIP_RETURN;
	case MT_CALL_DELETE:
		return enter(ctx, kind, 0, a0, leaf, session);
	case MT_CALL_MMAP:
		return enter(ctx, kind, a1, PT_REGS_PARM4(ctx), leaf, session);
	case MT_CALL_MUNMAP:
		enter_release(ctx, a0, MT_CAT_MMAP);
		return SKIP_RETURN;
	case MT_CALL_MREMAP:
		return enter(ctx, kind, a2, a0, leaf, session);
	default:
		return SKIP_RETURN;
	}
}

/* The return half: what the outermost call did, from its result. */
static __always_inline int on_return(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32;
	__u64 addr = PT_REGS_RC(ctx), size, arg;
	/* One time for all this call did (a realloc's free and allocation
	 * fall on the same side of a snapshot's instant). */
	__u64 now;
	struct mt_inflight *f;
	__u32 kind, cat = MT_CAT_HEAP;
	bool record, release = false;

	if (bench_part == MT_PART_TRAPS)
		return 0;
	f = thread_find(false);
	if (!f || f->depth == 0)
		return 0;
	if (--f->depth > 0 || trace_state != MT_TRACE_RECORDING)
		return 0;
	now = bpf_ktime_get_ns();
	if (f->uncounted)
		count(MT_CNT_EVENTS, 1); /* began before recording did */
	kind = f->kind;
	size = f->size;
	arg = f->arg;
	/* Sampling: frees still count, an unsampled block is not recorded. */
	record = !sample_bytes || f->sampled;

	/* Each case says whether the call released a heap block (RELEASE)
	 * and allocated one (RECORD); both are done once, below, so that
	 * the verifier checks each in one place, not in every case. */
	switch (kind) {
	case MT_CALL_DELETE:
		/* The free inside operator delete was nested: count it here. */
		release = arg != 0;
		record = false;
		break;
	case MT_CALL_XALLOCX:
		/* Resized in place when the new real size covers the request. */
		if (addr < size)
			return 0;
		release = true;
		addr = arg;
		break;
	case MT_CALL_MMAP:
		/* Only anonymous mappings are memory the program allocates. */
		if (addr == ~0ULL || !(arg & MT_MAP_ANONYMOUS))
			return 0;
		cat = MT_CAT_MMAP;
		break;
	case MT_CALL_MREMAP:
		if (addr == ~0ULL || !record_free(f, pid, arg, MT_CAT_MMAP, now))
			return 0;
		cat = MT_CAT_MMAP;
		break;
	case MT_CALL_POSIX_MEMALIGN:
		if ((int)PT_REGS_RC(ctx) != 0) {
			count(MT_CNT_FAILED_ALLOCS, 1);
			return 0;
		}
		if (!record)
			return 0;
		if (bpf_probe_read_user(&addr, sizeof(addr), (void *)arg) ||
		    !addr) {
			count(MT_CNT_DROP_READ_ERRORS, 1);
			return 0;
		}
		break;
	case MT_CALL_REALLOC:
	case MT_CALL_REALLOCARRAY:
		if (!addr) {
			/* realloc(p, 0) frees p; any other NULL is a failure. */
			if (size != 0 || !arg) {
				count(MT_CNT_FAILED_ALLOCS, 1);
				return 0;
			}
			record = false;
		}
		release = arg != 0;
		break;
	default:
		if (!addr) {
			count(MT_CNT_FAILED_ALLOCS, 1);
			return 0;
		}
		break;
	}
	if (release)
		free_heap(f, pid, arg, now);
	if (record)
		record_alloc(ctx, f, pid, addr, size, cat, now);
	return 0;
}

/*
 * -- CMD follows its children (the default; not with --no-follow):
 * "followed" holds CMD and every process forked by one in it
 * (follow_fork, at the end), which the loader then gives probes of its
 * own, links that carry its pid (src/loader/follow/per_pid_probes.c).  The kernel runs
 * the programs of such a link for that process alone, so the entry
 * programs need not look the process up (a hash lookup on every call): a
 * process not followed has no probe of memtrace's to hit.
 */
const volatile bool follow_only = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct mt_follow);
} followed SEC(".maps");

/* One entry program for every probed function (cookie: its kind). */
SEC("uprobe")
int BPF_KPROBE(uprobe_entry)
{
	__u64 *a;

	if (trace_state == MT_TRACE_STOPPED)
		return 0;
	a = activity_begin();
	on_entry(ctx, false);
	activity_end(a);
	return 0;
}

/* One return program serves every function with a return probe. */
SEC("uretprobe")
int BPF_KRETPROBE(uprobe_return)
{
	__u64 *a;

	if (trace_state == MT_TRACE_STOPPED)
		return 0;
	a = activity_begin();
	on_return(ctx);
	activity_end(a);
	return 0;
}

/*
 * Processes held at ld.so's hook until the loader has seen what ld.so
 * mapped (-- CMD: a process that just exec'd, whose allocator may come
 * with its LD_PRELOAD, its chroot or its own libc).  The hook sends the
 * thread MT_DL_HOLD_SIGNAL, which the loader, its ptrace tracer, takes
 * and never delivers (SIGURG: ignored by default, and no handler of the
 * program is installed while ld.so loads it).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* 2.6 MB preallocated */
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u8);
} dl_hold SEC(".maps");

/*
 * The threads a hold's signal was sent to, until the loader takes it: a
 * MT_DL_HOLD_SIGNAL of anyone else's (a socket's urgent data) is the
 * program's, and delivered.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u8);
} hold_sent SEC(".maps");

/*
 * Whether this thread can be held now: its tracer (memtrace: only the
 * processes of -- CMD are in dl_hold) takes the signal at its delivery,
 * which is at once only when the thread is traced (a thread a process
 * made itself is not) and does not block the signal.  Otherwise it would
 * reach the program.
 */
static __always_inline bool holdable(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return (BPF_CORE_READ(t, ptrace) & 1) &&  /* PT_PTRACED */
	       !(BPF_CORE_READ(t, blocked.sig[0]) & (1ULL << (MT_DL_HOLD_SIGNAL - 1)));
}

/*
 * ld.so's hook for debuggers (MT_CALL_DL_STATE), hit around the mapping of
 * a dlopen's objects, and twice as it loads a program: the unwinder asks
 * for their tables now.  A program of its own, so that uprobe_entry's runs
 * are the allocator calls.
 */
SEC("uprobe")
int BPF_KPROBE(dl_mapped)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&dl_hold, &pid) && holdable() &&
	    !bpf_map_update_elem(&hold_sent, &tid, &one, BPF_ANY))
		bpf_send_signal_thread(MT_DL_HOLD_SIGNAL);
	if (bench_part != MT_PART_TRAPS && trace_state != MT_TRACE_STOPPED) {
		bool told = vma_told(pid);

		/* System-wide, not at every process's start: its first
		 * stacks ask for the tables they need. */
		if (told || !vma_system)
			unwind_tell_mapped(pid);
		if (told)
			vma_mapped(pid); /* its new files, before it runs them */
	}
	return 0;
}

/*
 * Both halves in one program, for uprobe sessions (loaded only where the
 * kernel has them): the entry's result says whether the return runs.
 */
SEC("uprobe")
int BPF_KPROBE(uprobe_session)
{
	__u64 *a;
	int ret;

	if (trace_state == MT_TRACE_STOPPED)
		return session_is_return() ^ SKIP_RETURN;
	a = activity_begin();
	ret = session_is_return() ? on_return(ctx) : on_entry(ctx, true);
	activity_end(a);
	return ret;
}

/*
 * Following processes.  An exec replaces a process's image: its name
 * changes, and the blocks the old image held are gone with its address
 * space.  "execs" keeps, per traced process, when it last exec'd and its
 * new name: the loader releases its blocks allocated before (mt_collect).
 * Its entry in "comms" goes, so that its first allocation after the exec
 * names it again and tells the loader (new_pids), which then reads the
 * mappings of the new image, its libraries loaded.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct mt_exec);
} execs SEC(".maps");

SEC("tp_btf/sched_process_exec")
int BPF_PROG(follow_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct mt_exec e = { .ns = bpf_ktime_get_ns() };

	/* A process known by its allocations, or (-- CMD) one followed
	 * that has not allocated yet: the loader may have its old name from
	 * /proc, read between its fork and this exec. */
	if (trace_state != MT_TRACE_RECORDING ||
	    (!bpf_map_lookup_elem(&comms, &pid) &&
	     !(follow_only && bpf_map_lookup_elem(&followed, &pid))))
		return 0;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	bpf_map_update_elem(&execs, &pid, &e, BPF_ANY);
	bpf_map_delete_elem(&comms, &pid);
	tl_exec(pid, e.ns);
	return 0;
}

/* A thread exits: its slot of "threads" is free for another. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit)
{
	__u64 id = bpf_get_current_pid_tgid();

	thread_release();
	if ((__u32)id == (__u32)(id >> 32)) {
		__u32 tgid = (__u32)(id >> 32);

		bpf_map_delete_elem(&vma_marks, &tgid);
	}
	return 0;
}

/*
 * A process forked (fork, vfork, or clone of a process, not of a thread)
 * by a followed one is followed too, from its first instruction.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct mt_follow f = { .parent = ptgid };
	__u8 *h;

	if (!follow_only || ptgid == ctgid ||
	    !bpf_map_lookup_elem(&followed, &ptgid))
		return 0;
	bpf_map_update_elem(&followed, &ctgid, &f, BPF_ANY);
	/* Held at its dlopens like its parent (not at an exec's stops: the
	 * parent's image is loaded). */
	h = bpf_map_lookup_elem(&dl_hold, &ptgid);
	if (h && *h == MT_HOLD_DLOPEN)
		bpf_map_update_elem(&dl_hold, &ctgid, h, BPF_ANY);
	return 0;
}

/*
 * The kernel's identity of each file a process maps executable: the inode
 * the stack walk finds in a mapping (vma_info_cb), where /proc and stat()
 * may show another (overlayfs: the overlay's file, the mapping the
 * layer's).  Read by the loader with an iterator over one process's
 * mappings (src/loader/registry/vma_files.c), so that unwind tables are made under
 * the key the walk will look for.
 */
SEC("iter/task_vma")
int vma_files(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct mt_vma_file r;
	struct file *f;

	if (!vma || !ctx->task || !(vma->vm_flags & MT_VM_EXEC))
		return 0;
	f = vma->vm_file;
	if (!f)
		return 0;
	r.start = vma->vm_start;
	r.end = vma->vm_end;
	r.file.ino = f->f_inode->i_ino;
	r.file.dev = f->f_inode->i_sb->s_dev;
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
