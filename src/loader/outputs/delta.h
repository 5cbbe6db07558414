/* SPDX-License-Identifier: MIT */
/*
 * delta.h: --delta.  Each report's alloc_objects and alloc_space sample
 * values cover only what was allocated since the previous report; in-use
 * values stay the state at the report's moment, and the header's totals
 * stay those of the whole trace (its "alloc figures" line says since
 * when the samples count).  Go's /debug/pprof/allocs?seconds=N does the
 * same.
 */
#ifndef MEMTRACE_DELTA_H
#define MEMTRACE_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "itab.h"
#include "profile.h"

struct mt_delta {
	struct mt_delta_prev {
		uint32_t pid, category;
		uint64_t stack_id;
		uint64_t alloc_bytes, alloc_objects;
	} *prev;
	size_t nprev;
	struct mt_itab index;    /* (pid, category, stack) -> prev */
	double since_s;          /* trace time of the previous report */
};

/*
 * PROF was symbolised from RAW (sample i from raw->stacks[i]): make its
 * alloc values the change since the last call, and remember RAW's totals
 * for the next; prof->sum.delta_since_s says since when.  The first call
 * leaves the values as they are (the change since tracing began).
 * PROF NULL: only remember RAW's totals (the start of a delta).
 * Returns 0 or -ENOMEM.
 */
int mt_delta_apply(struct mt_delta *d, const struct mt_raw_profile *raw,
		   struct mt_profile *prof);

void mt_delta_free(struct mt_delta *d);

#endif
