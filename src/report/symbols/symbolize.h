/* SPDX-License-Identifier: MIT */
/* symbolize.h: struct mt_raw_profile -> struct mt_profile (profile.h). */
#ifndef MEMTRACE_SYMBOLIZE_H
#define MEMTRACE_SYMBOLIZE_H

#include "profile.h"

/*
 * Symbolise RAW into OUT (overwritten; free it with mt_profile_free).
 * One sample per raw stack, frames leaf first with inlined functions as
 * frames of their own; identical frames are stored once.  A stack with no
 * ips becomes a single "[unknown stack]" frame.  Samples are in the order
 * of RAW's stacks: sample I comes from raw->stacks[I].  Outstanding blocks
 * are not copied (mt_profile_add_blocks in blocks.h does that).  RAW is
 * not modified (its module descriptors are duplicated, not consumed).
 * Returns 0 or -errno; on failure OUT is left empty.
 */
int mt_symbolize(const struct mt_raw_profile *raw, struct mt_profile *out);

/*
 * What symbolising one profile learns (each file's libdwfl session, the
 * frames of every address of a file, the frames of addresses outside
 * files per process) kept for the next: a trace's tenth report costs far
 * less than its first.  A process's new files (a dlopen) are added; what
 * its other files gave is kept.  One cache may serve several threads (a
 * trace's reports and its HTTP server): each call holds its lock.
 */
struct mt_symcache;

struct mt_symcache *mt_symcache_new(void);
void mt_symcache_free(struct mt_symcache *c);

/*
 * mt_symbolize with CACHE (NULL: none).  Nothing of RAW is kept by the
 * cache (files are known by their identity, not by where RAW holds them);
 * OUT's frames are the cache's frames so far, copied.
 */
int mt_symbolize_cached(const struct mt_raw_profile *raw,
			struct mt_profile *out, struct mt_symcache *cache);

/*
 * What a cache has done so far (for tests and benchmarks): the libdwfl
 * sessions it opened (one per file) and the addresses it resolved (an
 * address of a file another process, or an earlier profile, resolved at
 * the same place is not counted).
 */
struct mt_symcache_stats {
	size_t sessions;
	size_t resolutions;
};

void mt_symcache_get_stats(struct mt_symcache *c,
			   struct mt_symcache_stats *stats);

#endif /* MEMTRACE_SYMBOLIZE_H */
