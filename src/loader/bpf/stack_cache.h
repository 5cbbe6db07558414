/* SPDX-License-Identifier: MIT */
/*
 * stack_cache.h: the frames of the BPF "stacks" map, kept across reads.
 * A stack is stored once under its id (a hash of its frames) and never
 * changed or deleted, so what was read once stays true: a report reads
 * only the stacks it has not seen (one lookup a segment, or one walk of
 * the map in batches when many are new), not the whole map every time.
 * A stack is stored as segments of 23 frames (struct mt_stack), each
 * naming the next: the cache keeps each stack's frames whole.
 */
#ifndef MEMTRACE_STACK_CACHE_H
#define MEMTRACE_STACK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "itab.h"

struct mt_stack_cache {
	uint32_t map_id;          /* the stacks map it caches (0: none yet) */
	struct mt_itab index;
	struct mt_cached_stack {
		uint64_t id;
		uint32_t nips;
		uint64_t *ips;
	} *st;
	size_t n, cap;
	/* For -v and the tests: stacks copied from the map so far. */
	uint64_t read;
};

/*
 * Make the N stack ids IDS known, from stacks map FD: those not cached
 * are read.  A cache of another map (a new BPF object) is emptied first.
 * An id the map does not hold (MT_STACK_NONE) stays unknown.  0 or -errno.
 */
int mt_stack_cache_fill(struct mt_stack_cache *c, int fd, const uint64_t *ids,
			size_t n);

/* The frames of stack ID: true with *IPS and *N, or false when unknown. */
bool mt_stack_cache_get(const struct mt_stack_cache *c, uint64_t id,
			const uint64_t **ips, uint32_t *n);

void mt_stack_cache_free(struct mt_stack_cache *c);

#endif
