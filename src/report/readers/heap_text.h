/* SPDX-License-Identifier: MIT */
/*
 * heap_text.h: building a struct mt_raw_profile from the records of a text
 * heap profile (tcmalloc's, jemalloc's): stacks of return addresses with
 * their counts, unbiased by the format's sampling rule.
 */
#ifndef MEMTRACE_HEAP_TEXT_H
#define MEMTRACE_HEAP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "line_scan.h"
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
 * PERIOD <= 1 means every allocation was recorded (no change).  False
 * (and nothing changed) when the figures scaled would not fit an int64_t:
 * no real profile holds them.
 */
bool mt_heap_unbias(int64_t *count, int64_t *size, uint64_t period);

/*
 * Append REC to RAW as a stack of process 0 (unbiased with PERIOD); *CAP
 * is the capacity of raw->stacks (0 at first).  A record without
 * allocation figures (all 0) counts what it holds as allocated; a record
 * of nothing at all is left out.  Returns 0, -EINVAL for negative or
 * inconsistent figures, -ERANGE for figures too large once unbiased, or
 * -ENOMEM.
 */
int mt_heap_text_add(struct mt_raw_profile *raw, size_t *cap,
		     const struct mt_heap_record *rec, uint64_t period);

/*
 * Parse the hex addresses "0x1 0x2 ..." of the rest of L into *IPS (*CAP
 * elements, grown as needed: the caller reuses it and frees it) and *N.
 * Returns 0, -EINVAL or -ENOMEM.
 */
int mt_heap_text_addrs(struct mt_line *l, uint64_t **ips, size_t *n,
		       size_t *cap);

/*
 * "C: B [AC: AB]" at L (spaces around the punctuation optional), the
 * figures of a record, into REC: true (and consumed) or false.
 */
bool mt_heap_text_figures(struct mt_line *l, struct mt_heap_record *rec);

/*
 * The one-line reason for a reader's error RET (-EINVAL: WHAT, -ERANGE,
 * -ENOMEM) at line LINENO, into ERR.
 */
void mt_heap_text_error(int ret, size_t lineno, const char *what, char *err,
			size_t errlen);

/*
 * Drop the leading frames of every stack of RAW that lie in the allocator
 * NAME's own library among process 0's modules (its frames, e.g.
 * jemalloc's backtrace code): the library whose soname is libNAME.so...,
 * libNAME_minimal..., or, when the file is not on this machine, whose file
 * name is.  A program whose name contains NAME keeps its frames.
 */
void mt_heap_text_strip(struct mt_raw_profile *raw, const char *name);

#endif
