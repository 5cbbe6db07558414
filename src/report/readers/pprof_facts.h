/* SPDX-License-Identifier: MIT */
/*
 * pprof_facts.h: memtrace's header facts (struct mt_summary) in a pprof
 * profile, written by pprof_write.c and read back by pprof_read.c.
 *
 * They are strings of the profile's string table that nothing refers to:
 * `go tool pprof` ignores them (comments it would print above every
 * report), protobuf-c keeps them.  Each is "memtrace.KEY: VALUE"; the first,
 * "memtrace.version: VERSION", marks the others as memtrace's; then target,
 * allocator, "memtrace.mmap: traced" (with --mmap) and every counter of
 * bpf/memleak.h under a name of its own ("memtrace.events: 2616",
 * "memtrace.drops stack map full: 0", ...), then the size histogram:
 * "memtrace.size classes: powers of two", and each class that is not
 * empty, by category and smallest size ("memtrace.size class heap 1024:
 * 3 objects, 3200 bytes").  The duration and the sampling period are
 * Profile fields (duration_nanos, period).  A profile without the mark,
 * without a counter or without the histogram's mark (or with a class this
 * version does not write) has those facts marked as not recorded
 * (mt_summary.missing), never read as 0.
 */
#ifndef MEMTRACE_PPROF_FACTS_H
#define MEMTRACE_PPROF_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

/* The prefix of every fact's key. */
#define MT_FACTS_PREFIX "memtrace."

/* How many facts mt_facts_string may give (indices 0..N-1). */
size_t mt_facts_count(void);

/*
 * Fact I (0 <= I < mt_facts_count()) of SUM as a malloc'd string in
 * *OUT, or *OUT = NULL when that fact is not written (an empty allocator,
 * mmap not traced).  Returns 0 or -ENOMEM.
 */
int mt_facts_string(const struct mt_summary *sum, size_t i, char **out);

/*
 * Read the facts among the N strings STRS (a string table) into SUM: target, allocator,
 * mmap, counters and size histogram, when the comments are memtrace's.  Sets the bits of
 * SUM->missing for what they lack (all of enum mt_fact's but the duration
 * when there are none), and *COUNTERS_READ when the alloc/free
 * counters were there (else the caller derives them from the samples).
 */
void mt_facts_read(const char *const *strs, size_t n,
		   struct mt_summary *sum, bool *counters_read);

#endif
