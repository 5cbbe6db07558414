/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stack_key.h: how a stack of n frames is cut into the segments of the
 * "stacks" map (struct mt_stack in memleak.h) and what each segment's key
 * is, written once for both sides: the BPF program keys the stacks it
 * walks with it (bpf/stack_segs.h), the loader the stacks it unwinds
 * from a copy (src/loader/unwind/deferred_walk.c), so that a stack has
 * one id whichever walked it.
 *
 * Segments are cut from the outermost frame: segment k (0 the leaf end)
 * holds frames [seg_from(n, k), seg_to(n, k)), all full but the first.
 * Its key mixes the next segment's key (0 for the last), then its frames;
 * never 0 (MT_STACK_NONE).  The first segment's key is the stack's id.
 *
 * The includer defines mix() and MT_MIX_SEED, and the types of memleak.h.
 */
#ifndef MEMTRACE_BPF_STACK_KEY_H
#define MEMTRACE_BPF_STACK_KEY_H

/* Segments of a stack of N frames (N <= MT_MAX_STACK_DEPTH). */
static __always_inline __u32 seg_count(__u32 n)
{
	return (n + MT_STACK_SEG - 1) / MT_STACK_SEG;
}

/* The first frame of segment K of a stack of N frames. */
static __always_inline __u32 seg_from(__u32 n, __u32 k)
{
	__u32 pad = seg_count(n) * MT_STACK_SEG - n;

	return k * MT_STACK_SEG > pad ? k * MT_STACK_SEG - pad : 0;
}

/* Past the last frame of segment K of a stack of N frames. */
static __always_inline __u32 seg_to(__u32 n, __u32 k)
{
	return (k + 1) * MT_STACK_SEG - (seg_count(n) * MT_STACK_SEG - n);
}

/* The key of the segment of frames IPS[FROM..TO) followed by the segment
 * keyed NEXT. */
static __always_inline __u64 seg_key(__u64 next, const __u64 *ips,
				     __u32 from, __u32 to)
{
	__u64 h = mix(MT_MIX_SEED, next);

	for (__u32 j = 0; j < MT_STACK_SEG; j++) {
		__u32 at = from + j;

		if (at >= to)
			break;
		/* For the verifier: kept apart from the test above, which
		 * the compiler would otherwise merge it with. */
		asm volatile("" : "+r"(at));
		if (at >= MT_MAX_STACK_DEPTH)
			break;
		h = mix(h, ips[at]);
	}
	return h == MT_STACK_NONE ? 1 : h;
}

#endif /* MEMTRACE_BPF_STACK_KEY_H */
