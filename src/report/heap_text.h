/* SPDX-License-Identifier: MIT */
/*
 * heap_text.h: building a struct mt_raw_profile from the records of a text
 * heap profile (tcmalloc's, jemalloc's): stacks of return addresses with
 * their counts, unbiased by the format's sampling rule.
 */
#ifndef MEMTRACE_HEAP_TEXT_H
#define MEMTRACE_HEAP_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

/* One record: a stack and what it holds and allocated, as written. */
struct mt_heap_record {
	const uint64_t *ips;  /* return addresses, leaf first */
	size_t nips;
	int64_t inuse_objects, inuse_bytes;
	int64_t alloc_objects, alloc_bytes;
};

/*
 * pprof's rule for Poisson-sampled heap profiles (tcmalloc heap_v2, Go,
 * jemalloc): a record of COUNT blocks of SIZE bytes in all was sampled with
 * probability 1 - exp(-(SIZE/COUNT)/PERIOD); both are divided by it.
 * PERIOD <= 1 means every allocation was recorded (no change).
 */
void mt_heap_unbias(int64_t *count, int64_t *size, uint64_t period);

/*
 * Append REC to RAW as a stack of process 0 (unbiased with PERIOD).  A
 * record without allocation figures (all 0) counts what it holds as
 * allocated; a record of nothing at all is left out.  Returns 0, -EINVAL
 * for negative or inconsistent figures, or
 * -ENOMEM.
 */
int mt_heap_text_add(struct mt_raw_profile *raw, const struct mt_heap_record *rec,
		     uint64_t period);

/*
 * Parse the hex addresses "0x1 0x2 ..." of S (up to the end of the line)
 * into *IPS (malloc'd) and *N.  Returns 0, -EINVAL or -ENOMEM.
 */
int mt_heap_text_addrs(const char *s, uint64_t **ips, size_t *n);

/*
 * Drop the leading frames of every stack of RAW that lie in the allocator
 * NAME's own library among process 0's modules (its frames, e.g.
 * jemalloc's backtrace code): the library whose soname is libNAME.so...,
 * libNAME_minimal..., or, when the file is not on this machine, whose file
 * name is.  A program whose name contains NAME keeps its frames.
 */
void mt_heap_text_strip(struct mt_raw_profile *raw, const char *name);

#endif
