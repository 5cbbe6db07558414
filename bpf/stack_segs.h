/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stack_segs.h: a stack walked (struct uw_frames, unwind.h) as the
 * segments of the "stacks" map (struct mt_stack in memleak.h, cut and
 * keyed as bpf/stack_key.h says): their keys (stack_segs_hash), computed
 * from the last segment to the first, so that the first's key, the
 * stack's id, stands for every frame; and their storing
 * (stack_segs_store), the last first.  Both run in bpf_loop(), once a
 * segment, so that the verifier checks a segment's loop once, whatever
 * the depth.
 *
 * The includer defines the "stacks" map, mix() and MT_MIX_SEED, and
 * includes unwind.h first.
 */
#ifndef MEMTRACE_BPF_STACK_SEGS_H
#define MEMTRACE_BPF_STACK_SEGS_H

#include "stack_key.h"

/* bpf_loop()'s context, which must be on the stack. */
struct seg_loop {
	struct uw_frames *fr;
};

/* bpf_loop() callback, I-th call: the key of segment nseg - 1 - I. */
static long seg_hash_cb(__u64 i, void *ctx)
{
	struct uw_frames *fr = ((struct seg_loop *)ctx)->fr;
	__u64 tail;
	__u32 k, n;

	if (!fr)
		return 1;
	/* In a register: not a load from one of two addresses, which the
	 * verifier cannot bound. */
	tail = fr->tail;
	asm volatile("" : "+r"(tail));
	n = fr->n;
	k = fr->nseg - 1 - (__u32)i;
	if (k >= MT_STACK_SEGS || n > MT_MAX_STACK_DEPTH)
		return 1;
	fr->seg_ids[k] = seg_key(k + 1 < fr->nseg && k + 1 < MT_STACK_SEGS ?
					 fr->seg_ids[k + 1] : tail,
				 fr->ips, seg_from(n, k), seg_to(n, k));
	return 0;
}

/* The keys of the segments of the FR->n frames; the stack's id (the
 * first's key), or MT_STACK_NONE for no frame.  TAIL: 0, or a provisional
 * stack's id, mixed into every key so that no other stack shares its
 * segments (they are deleted once it is unwound: deferred_unwind.c); its
 * segments' "next" links are the same either way. */
static __always_inline __u64 stack_segs_hash(struct uw_frames *fr, __u64 tail)
{
	struct seg_loop l = { fr };

	fr->tail = tail;
	fr->nseg = seg_count(fr->n);
	if (fr->nseg > MT_STACK_SEGS || !fr->nseg)
		return MT_STACK_NONE;
	bpf_loop(fr->nseg, seg_hash_cb, &l, 0);
	return fr->seg_ids[0];
}

/* bpf_loop() callback, I-th call: store segment nseg - 1 - I. */
static long seg_store_cb(__u64 i, void *ctx)
{
	struct uw_frames *fr = ((struct seg_loop *)ctx)->fr;
	__u32 k, n, from, to;
	long err;

	if (!fr)
		return 1;
	n = fr->n;
	k = fr->nseg - 1 - (__u32)i;
	if (k >= MT_STACK_SEGS || n > MT_MAX_STACK_DEPTH)
		return 1;
	fr->seg.next = k + 1 < fr->nseg && k + 1 < MT_STACK_SEGS ?
			       fr->seg_ids[k + 1] : 0;
	from = seg_from(n, k);
	to = seg_to(n, k);
	for (__u32 j = 0; j < MT_STACK_SEG; j++) {
		__u32 at = from + j;
		__u64 ip = 0;

		if (at < to) {
			asm volatile("" : "+r"(at)); /* as in seg_key() */
			if (at < MT_MAX_STACK_DEPTH)
				ip = fr->ips[at];
		}
		fr->seg.ips[j] = ip;
	}
	err = bpf_map_update_elem(&stacks, &fr->seg_ids[k], &fr->seg,
				  BPF_NOEXIST);
	if (err && err != -EEXIST) {
		fr->err = 1;
		return 1;
	}
	return 0;
}

/* Store the segments stack_segs_hash() keyed: 0, or -1 if the map is
 * full (the segments stored stay, as unused ends of stacks). */
static __always_inline int stack_segs_store(struct uw_frames *fr)
{
	struct seg_loop l = { fr };

	fr->err = 0;
	if (fr->nseg > MT_STACK_SEGS || !fr->nseg)
		return -1;
	bpf_loop(fr->nseg, seg_store_cb, &l, 0);
	return fr->err ? -1 : 0;
}

#endif /* MEMTRACE_BPF_STACK_SEGS_H */
