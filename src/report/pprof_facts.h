/* SPDX-License-Identifier: MIT */
/*
 * pprof_facts.h: memtrace's header facts (struct mt_summary) as pprof
 * comments, written by pprof_write.c and read back by pprof_read.c.
 *
 * pprof's Profile.comment is a list of free-form strings that `go tool
 * pprof` only shows with -comments and otherwise ignores.  memtrace writes
 * one comment "KEY: VALUE" per fact: the first is "memtrace: VERSION", which
 * marks the others as memtrace's; then target, allocator, "mmap: traced"
 * (with --mmap) and every counter of bpf/memleak.h under a name of its own
 * ("events: 2616", "drops stack map full: 0", ...).  The duration and the
 * sampling period are Profile fields (duration_nanos, period).  A profile
 * without the "memtrace" comment, or without a counter, has those facts
 * marked as not recorded (mt_summary.missing), never read as 0.
 */
#ifndef MEMTRACE_PPROF_FACTS_H
#define MEMTRACE_PPROF_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

/* The key of the first comment, the mark of memtrace's profiles. */
#define MT_FACTS_MARK "memtrace"

/* How many comments mt_facts_comment may give (indices 0..N-1). */
size_t mt_facts_count(void);

/*
 * Comment I (0 <= I < mt_facts_count()) for SUM as a malloc'd string in
 * *OUT, or *OUT = NULL when that fact is not written (an empty allocator,
 * mmap not traced).  Returns 0 or -ENOMEM.
 */
int mt_facts_comment(const struct mt_summary *sum, size_t i, char **out);

/*
 * Read the facts from the N comments COMMENTS into SUM: target, allocator,
 * mmap and counters, when the comments are memtrace's.  Sets the bits of
 * SUM->missing for what they lack (all of enum mt_fact's but the duration
 * when they are not memtrace's), and *COUNTERS_READ when the alloc/free
 * counters were there (else the caller derives them from the samples).
 */
void mt_facts_read(const char *const *comments, size_t n,
		   struct mt_summary *sum, bool *counters_read);

#endif
