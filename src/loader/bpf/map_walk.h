/* SPDX-License-Identifier: MIT */
/* map_walk.h: reading a BPF hash map in batches, one process's entries or all. */
#ifndef MEMTRACE_MAP_WALK_H
#define MEMTRACE_MAP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Which entries to visit: all (n == 0), or those whose key begins with one
 * of the sorted PIDS (a map whose keys do not begin with a pid takes
 * n == 0); with REMOVE, delete the visited ones afterwards.
 */
struct mt_pid_filter {
	const uint32_t *pids;
	size_t n;
	bool remove;
};

/* Sort PIDS for a filter. */
void mt_pids_sort(uint32_t *pids, size_t n);

/* Called for every entry visited; returns 0, or -errno to stop the walk. */
typedef int (*mt_visit_fn)(const void *key, const void *value, void *ctx);

/*
 * Visit the entries of hash map FD (keys of KSIZE bytes, values of VSIZE)
 * that F wants, reading them with bpf_map_lookup_batch (hash maps have
 * batch operations from Linux 5.6; memtrace needs 5.11 for task storage).
 * With f->remove, they are deleted after the walk, which deleting would
 * disturb, and only when it succeeded: a walk that failed (VISIT, memory,
 * the map) deletes nothing.  Returns 0 or -errno.
 */
int mt_map_walk(int fd, size_t ksize, size_t vsize,
		const struct mt_pid_filter *f, mt_visit_fn visit, void *ctx);

#endif
