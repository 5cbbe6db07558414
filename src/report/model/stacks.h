/* SPDX-License-Identifier: MIT */
/*
 * stacks.h: samples merged by stack.  Symbolisation can turn two raw
 * stacks into the same source-level stack (and a process can reach the
 * same stack twice); the writers want one entry per distinct stack.
 */
#ifndef MEMTRACE_STACKS_H
#define MEMTRACE_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

struct mt_stack_group {
	size_t sample;            /* a sample with this stack (its frames, pid) */
	int64_t v[MT_NVALUES];    /* summed over the group */
};

/*
 * Group P's samples by frames (and by pid when BY_PID).  Every sample is
 * in exactly one group; *GROUPS is malloc'ed.  When GROUP_OF is not NULL,
 * *GROUP_OF (malloc'ed, one entry per sample) receives each sample's group.
 * Returns 0 or -ENOMEM.
 */
int mt_stacks_group(const struct mt_profile *p, bool by_pid,
		    struct mt_stack_group **groups, size_t *ngroups,
		    size_t **group_of);

/* Sort GROUPS by METRIC, largest first; ties by sample index. */
void mt_stacks_sort(struct mt_stack_group *groups, size_t n,
		    enum mt_value metric);

#endif
