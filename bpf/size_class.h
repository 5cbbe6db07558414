/* SPDX-License-Identifier: MIT */
/*
 * size_class.h: the class of an allocation's size in the size histogram
 * (MT_SIZE_* in bpf/memleak.h), so that the BPF program and the reporter
 * (and the unit tests) use the very same code.
 *
 * The class of a size is its bit length, at most the last class: 0 for 0,
 * 1 for 1, 2 for 2 and 3, 3 for 4 to 7, ..., k for 2^(k-1) to 2^k - 1,
 * and MT_SIZE_CLASSES - 1 for 2^MT_SIZE_LAST_SHIFT and more.  The bit
 * length is found by halving the width six times (32, 16, 8, 4, 2, 1
 * bits), each step in shifts and adds without a branch, then capped (one
 * compare): some 40 instructions and no loop, which the verifier walks
 * once.
 */
#ifndef MEMTRACE_SIZE_CLASS_H
#define MEMTRACE_SIZE_CLASS_H

#ifndef __bpf__
#include <linux/types.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif
#include "memleak.h"

/* 1 when X (below 2^32) is not 0, else 0: no comparison, no branch. */
#define MT_NONZERO32(x) (((x) + 0xffffffffULL) >> 32)

static __always_inline __u32 mt_size_class(__u64 size)
{
	__u64 v = size, n = 0, s;

	s = MT_NONZERO32(v >> 32) << 5;
	v >>= s;
	n += s;                 /* v < 2^32 from here on */
	s = MT_NONZERO32(v >> 16) << 4;
	v >>= s;
	n += s;
	s = MT_NONZERO32(v >> 8) << 3;
	v >>= s;
	n += s;
	s = MT_NONZERO32(v >> 4) << 2;
	v >>= s;
	n += s;
	s = MT_NONZERO32(v >> 2) << 1;
	v >>= s;
	n += s;
	s = MT_NONZERO32(v >> 1);
	v >>= s;
	n += s;
	n += v;                 /* v is 0 or 1: n is the bit length */
	return n < MT_SIZE_CLASSES - 1 ? (__u32)n : MT_SIZE_CLASSES - 1;
}

/* The smallest size of class K (0, 1, 2, 4, ...). */
static __always_inline __u64 mt_size_class_min(__u32 k)
{
	return k ? 1ULL << (k - 1) : 0;
}

#endif /* MEMTRACE_SIZE_CLASS_H */
