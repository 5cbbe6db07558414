/* SPDX-License-Identifier: MIT */
/*
 * sampling.h: the arithmetic of Poisson byte sampling (-s/--sample-bytes),
 * in integers only, so that the BPF program (bpf/memleak.bpf.c) and the
 * unit tests (tests/unit/test_sampling.c) run the very same code.
 *
 * Each thread samples the allocation in which the next sample point falls,
 * sample points being a Poisson process of rate 1/N on the bytes it
 * allocates (as tcmalloc and Go do).  The distance to the next point is
 * drawn as -N ln U, U uniform in (0, 1]; an allocation of s bytes is then
 * sampled with probability p = 1 - exp(-s/N), whatever came before, and a
 * sampled one stands for s/p bytes and 1/p objects (an unbiased estimate
 * of each allocation, hence of every sum of them).
 *
 * Two tables, filled by the loader from libm (src/loader/bpf/sampling.c) and
 * interpolated linearly here:
 *   log2 table: log2(1 + j/256), j = 0..256, in Q24;
 *   g table:    g(x) = x / (1 - exp(-x)) at x = i/128, i = 0..4096, in
 *               Q24 (g(0) = 1).  s/p = N g(s/N), and g(x) = x to within
 *               1e-13 from x = 32 on.
 * Either result is within 1e-5 of the exact one; an interval also within
 * 2e-6 of the mean (the interpolated log2 is off by 2.8e-6 at most), which
 * moves the chance of sampling by as little.
 */
#ifndef MEMTRACE_SAMPLING_H
#define MEMTRACE_SAMPLING_H

#ifdef __bpf__
#define MT_TAB const volatile __u32
#else
#include <linux/types.h>
#define MT_TAB const __u32
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif

#define MT_LOG2_STEPS 256             /* log2 table: 257 entries */
#define MT_G_STEPS_PER_UNIT 128       /* g table: x in steps of 1/128 ... */
#define MT_G_MAX_X 32                 /* ... up to 32: 4097 entries */
#define MT_G_ENTRIES (MT_G_MAX_X * MT_G_STEPS_PER_UNIT + 1)
#define MT_Q24 (1ULL << 24)
/* The largest mean interval: keeps every product below in 64 bits. */
#define MT_SAMPLE_BYTES_MAX (1ULL << 32)

/* ln 2 in Q24. */
#define MT_LN2_Q24 11629080ULL

/*
 * Bytes to the next sample point for a mean of MEAN bytes (at most
 * MT_SAMPLE_BYTES_MAX), from 32 random bits R: -MEAN ln((R + 1) / 2^32).
 */
static __always_inline __u64 mt_sample_interval(__u32 r, __u64 mean,
						MT_TAB *log2_tab)
{
	__u64 u = (__u64)r + 1;  /* 1 .. 2^32 */
	__u64 k = 0, frac, j, rem, lg, neg;

	/* k = floor(log2 u), by halving. */
	if (u >> 32) { k += 32; u >>= 32; }
	if (u >> 16) { k += 16; u >>= 16; }
	if (u >> 8) { k += 8; u >>= 8; }
	if (u >> 4) { k += 4; u >>= 4; }
	if (u >> 2) { k += 2; u >>= 2; }
	if (u >> 1) { k += 1; }
	/* The bits below the leading one, as a fraction of 2^32. */
	frac = (((__u64)r + 1) << (32 - k)) & 0xffffffffULL;
	j = (frac >> 24) & (MT_LOG2_STEPS - 1);
	rem = frac & 0xffffff;
	lg = log2_tab[j] + (((__u64)(log2_tab[j + 1] - log2_tab[j]) * rem) >> 24);
	/* -log2(u / 2^32) = 32 - k - lg, in Q24; at most 32 * 2^24. */
	neg = ((32 - k) << 24) - lg;
	return (((mean * neg) >> 24) * MT_LN2_Q24) >> 24;
}

/*
 * Whether an allocation of SIZE bytes holds the next sample point, *LEFT
 * bytes ahead; if not, the point comes SIZE bytes closer.  After a hit the
 * caller draws the next distance with mt_sample_interval() (the overshoot
 * is forgotten, which the exponential distribution allows).  *LEFT is the
 * distance rounded down, so the point falls inside iff *LEFT < SIZE; the
 * rounding shortens the mean interval by about a byte, a bias of 1/mean.
 */
static __always_inline int mt_sample_hit(__u64 *left, __u64 size)
{
	if (size <= *left) {
		*left -= size;
		return 0;
	}
	return 1;
}

/*
 * The estimate a sampled allocation of SIZE bytes stands for, at a mean of
 * MEAN bytes: *bytes = SIZE / p, and *objects_q16 = 1 / p in Q16.
 */
static __always_inline void mt_sample_weight(__u64 size, __u64 mean,
					     MT_TAB *g_tab, __u64 *bytes,
					     __u64 *objects_q16)
{
	__u64 x, i, rem, g;

	if (size == 0 || mean == 0 || size >= mean * MT_G_MAX_X) {
		*bytes = size;
		*objects_q16 = 1ULL << 16;
		return;
	}
	/* x = size / mean in Q24: size < 32 * 2^32, so no overflow. */
	x = (size << 24) / mean;
	i = x >> 17;  /* steps of 1/128 */
	if (i >= MT_G_ENTRIES - 1)
		i = MT_G_ENTRIES - 2;
	rem = x & 0x1ffff;
	g = g_tab[i] + (((__u64)(g_tab[i + 1] - g_tab[i]) * rem) >> 17);
	*bytes = (mean * g) >> 24;   /* mean * g < 2^32 * 2^29 */
	*objects_q16 = ((mean * g) / size) >> 8;
}

#endif /* MEMTRACE_SAMPLING_H */
