/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwind_defer.h: deferred unwinding, the BPF side (struct mt_defer_copy
 * in memleak.h).  A walk that stopped at a frame whose file has no table
 * yet (UW_DEFER, unwind.h) leaves its state in this CPU's scratch; here
 * the user stack above that frame is copied, with that state, into the
 * unwind_copies ring buffer, and the allocation gets a provisional stack
 * id of its own, which the loader turns into the whole stack once it has
 * unwound the copy (src/loader/unwind/deferred_unwind.c).
 *
 * The includer defines count(), mix() and MT_MIX_SEED, and includes
 * unwind.h first.
 */
#ifndef MEMTRACE_BPF_UNWIND_DEFER_H
#define MEMTRACE_BPF_UNWIND_DEFER_H

/* Copies in flight to the loader; sized by the loader (a hidden knob,
 * MEMTRACE_DEFER_RING, for the tests of a full ring). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} unwind_copies SEC(".maps");

/* A copy being made, per CPU (too large for the BPF stack), and the
 * sequence its provisional ids are drawn from. */
struct defer_scratch {
	__u64 seq;
	struct mt_defer_copy c;
	__u8 slack[MT_DEFER_CHUNK]; /* for the verifier: see defer_copy() */
};

/* One per CPU (by bpf_get_smp_processor_id(), sized by the loader): a
 * plain array, as a per-CPU value cannot hold 32 KiB. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct defer_scratch);
} defer_scratch SEC(".maps");

#include "vma_dump.h"

/* Copies a process has before it gives way in a ring three quarters
 * full; eight times as many, half full; 64 times, a quarter full. */
#define MT_DEFER_FAIR_COPIES 1024

/* Does a process that had COPIES stacks copied give way to the others,
 * the ring holding AVAIL of SIZE bytes?  A program's first run (a few
 * thousand copies: python3's 5,000) before a busy process's (a compiler
 * met at its start, hundreds of thousands), before none. */
static __always_inline bool defer_gives_way(__u64 copies, __u64 avail,
					    __u64 size)
{
	if (copies < MT_DEFER_FAIR_COPIES)
		return false;
	if (copies < 8 * MT_DEFER_FAIR_COPIES)
		return avail > size / 4 * 3;
	if (copies < 64 * MT_DEFER_FAIR_COPIES)
		return avail > size / 2;
	return avail > size / 4;
}

/*
 * The walk in SC stopped at a frame with no table (UW_DEFER), its N
 * frames (that one included) in FR: copy what the loader needs to go
 * on.  Returns the provisional stack id, or MT_STACK_NONE when the copy
 * could not be made (then the stack stays as it is, counted truncated).
 */
static __noinline __u64 defer_copy(struct unwind_scratch *sc,
				   struct uw_frames *fr, __u32 n)
{
	const struct mt_unwind_state *u;
	__u32 len = 0, pos = 0, fbytes, cpu = bpf_get_smp_processor_id();
	struct defer_scratch *d = bpf_map_lookup_elem(&defer_scratch, &cpu);
	__u32 max = MT_DEFER_STACK_MAX;
	struct vma_mark *mark;
	struct mt_defer_copy *c;
	struct mm_struct *mm;
	__u64 id, size;

	if (!d || !sc || !fr)
		return MT_STACK_NONE;
	u = &sc->u;
	/* The loader learns where the files are before it reads the copy. */
	vma_dump(u->pid);
	/* Fair shares: as the ring fills, a process that had many stacks
	 * copied already (a busy one whose files were met at the start)
	 * gives way to those that had fewer (a program's first run). */
	mark = bpf_map_lookup_elem(&vma_marks, &u->pid);
	if (mark) {
		if (defer_gives_way(mark->copies,
				    bpf_ringbuf_query(&unwind_copies, BPF_RB_AVAIL_DATA),
				    bpf_ringbuf_query(&unwind_copies, BPF_RB_RING_SIZE))) {
			count(MT_CNT_DEFER_LOST, 1);
			return MT_STACK_NONE;
		}
		__sync_fetch_and_add(&mark->copies, 1);
	}
	/* The main thread's stack above its first frame holds argv and the
	 * environment, never a frame: not copied. */
	mm = bpf_get_current_task_btf()->mm;
	if ((__u32)bpf_get_current_pid_tgid() == u->pid && mm) {
		__u64 top = mm->start_stack;

		if (top > u->sp && top - u->sp < max)
			max = (__u32)(top - u->sp);
	}
	c = &d->c;
	id = mix(mix(MT_MIX_SEED ^ 0xdefe44edULL, cpu), ++d->seq);
	if (id == MT_STACK_NONE)
		id = 1;
	c->id = id;
	c->pid = u->pid;
	c->n = n > 0 ? n - 1 : 0;
	c->pc = u->pc;
	c->sp = u->sp;
	c->bp = u->bp;
	c->steps = u->steps;
	c->vm_start = u->vm_start;
	c->vm_end = u->vm_end;
	c->vm_delta = u->vm_delta;
	c->file = sc->defer_file;
	/* The stack from sp up, a page at a time (the first to its page's
	 * end), past the pages that cannot be read (never touched), to the
	 * last one that can (the stack's top, or the bound). */
	c->pages_read = 0;
	c->flags = max == MT_DEFER_STACK_MAX ? MT_DEFER_BOUNDED : 0;
	for (int i = 0; i < MT_DEFER_STACK_MAX / MT_DEFER_CHUNK + 1; i++) {
		__u64 at = u->sp + pos;
		__u32 l = MT_DEFER_CHUNK - (__u32)(at & (MT_DEFER_CHUNK - 1));

		if (pos >= max)
			break;
		if (l > max - pos)
			l = max - pos;
		/* The bounds below always hold (the slack after the copy
		 * lets the verifier check them apart). */
		asm volatile("" : "+r"(l));
		asm volatile("" : "+r"(pos));
		if (l > MT_DEFER_CHUNK || pos >= MT_DEFER_STACK_MAX)
			break;
		if (bpf_probe_read_user(c->stack + pos, l, (void *)at) == 0) {
			c->pages_read |= 1U << (i & 31);
			len = pos + l;
		}
		pos += l;
	}
	c->len = len;
	/* The frames walked before, after the stack (MT_DEFER_FRAMES). */
	fbytes = c->n * 8;
	asm volatile("" : "+r"(len));
	asm volatile("" : "+r"(fbytes));
	if (len > MT_DEFER_STACK_MAX || fbytes > 8 * MT_MAX_STACK_DEPTH ||
	    bpf_probe_read_kernel(c->stack + len, fbytes, fr->ips)) {
		count(MT_CNT_DEFER_LOST, 1);
		return MT_STACK_NONE;
	}
	size = offsetof(struct mt_defer_copy, stack) + len + fbytes;
	asm volatile("" : "+r"(size));
	if (size > sizeof(*c) ||
	    bpf_ringbuf_output(&unwind_copies, c, size, 0)) {
		count(MT_CNT_DEFER_LOST, 1);
		return MT_STACK_NONE;
	}
	count(MT_CNT_DEFER_COPIES, 1);
	return id;
}

#endif /* MEMTRACE_BPF_UNWIND_DEFER_H */
