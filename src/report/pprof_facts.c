/* SPDX-License-Identifier: MIT */
/* pprof_facts.c: header facts as pprof strs (see pprof_facts.h). */
#include "pprof_facts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every counter of bpf/memleak.h, with its key (a counter without one is
 * not kept: test_pprof's round trip of every counter fails). */
static const char *const counter_keys[MT_CNT__COUNT] = {
	[MT_CNT_EVENTS] = "events",
	[MT_CNT_ALLOC_OBJECTS] = "allocated objects",
	[MT_CNT_ALLOC_BYTES] = "allocated bytes",
	[MT_CNT_FREE_OBJECTS] = "freed objects",
	[MT_CNT_FREE_BYTES] = "freed bytes",
	[MT_CNT_UNTRACKED_FREES] = "untracked frees",
	[MT_CNT_FAILED_ALLOCS] = "failed allocator calls",
	[MT_CNT_DROP_ALLOCS_FULL] = "drops allocs map full",
	[MT_CNT_DROP_STACKS_FULL] = "drops stack map full",
	[MT_CNT_DROP_STACK_ERRORS] = "drops stack errors",
	[MT_CNT_DROP_STATS_FULL] = "drops stats map full",
	[MT_CNT_DROP_THREADS_FULL] = "drops thread state unavailable",
	[MT_CNT_DROP_READ_ERRORS] = "drops read errors",
	[MT_CNT_STACKS_TRUNCATED] = "truncated stacks",
	[MT_CNT_MMAP_OBJECTS] = "mmapped objects",
	[MT_CNT_MMAP_BYTES] = "mmapped bytes",
	[MT_CNT_MUNMAP_OBJECTS] = "munmapped objects",
	[MT_CNT_MUNMAP_BYTES] = "munmapped bytes",
	[MT_CNT_SAMPLES] = "sampled allocations",
	[MT_CNT_SNAPSHOT_SKEW] = "snapshot skew",
};

/* Facts before the counters: the mark, target, allocator, mmap. */
enum { C_MARK, C_TARGET, C_ALLOCATOR, C_MMAP, C_DELTA, C_COUNTERS };

size_t mt_facts_count(void)
{
	return C_COUNTERS + MT_CNT__COUNT;
}

static int text(char **out, const char *key, const char *value, size_t len)
{
	if (!value[0])
		return 0;
	if (asprintf(out, MT_FACTS_PREFIX "%s: %.*s", key,
		     (int)strnlen(value, len), value) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int mt_facts_string(const struct mt_summary *sum, size_t i, char **out)
{
	*out = NULL;
	switch (i) {
	case C_MARK:
#ifdef MEMTRACE_VERSION
		return text(out, "version", MEMTRACE_VERSION, SIZE_MAX);
#else
		return text(out, "version", "unknown", SIZE_MAX);
#endif
	case C_TARGET:
		return text(out, "target", sum->target, sizeof(sum->target));
	case C_ALLOCATOR:
		return text(out, "allocator", sum->allocator, sizeof(sum->allocator));
	case C_MMAP:
		return sum->mmap_traced ? text(out, "mmap", "traced", SIZE_MAX) : 0;
	case C_DELTA: {
		char since[32];

		if (!sum->delta)
			return 0;
		snprintf(since, sizeof(since), "%.3f", sum->delta_since_s);
		return text(out, "alloc figures since", since, sizeof(since));
	}
	default:
		break;
	}
	i -= C_COUNTERS;
	if (i >= MT_CNT__COUNT || !counter_keys[i])
		return 0;
	/* A fact the trace did not record stays out of the file. */
	if ((sum->missing & MT_FACT_COUNTERS) && i != MT_CNT_ALLOC_OBJECTS &&
	    i != MT_CNT_ALLOC_BYTES && i != MT_CNT_FREE_OBJECTS &&
	    i != MT_CNT_FREE_BYTES)
		return 0;
	if (asprintf(out, MT_FACTS_PREFIX "%s: %" PRIu64, counter_keys[i],
		     sum->counters[i]) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The text after "memtrace.KEY: " in STRS, or NULL. */
static const char *value_of(const char *const *strs, size_t n, const char *key)
{
	size_t plen = strlen(MT_FACTS_PREFIX), len = strlen(key);

	for (size_t i = 0; i < n; i++) {
		const char *c = strs[i];

		if (strncmp(c, MT_FACTS_PREFIX, plen) != 0)
			continue;
		c += plen;
		if (strncmp(c, key, len) == 0 && c[len] == ':' && c[len + 1] == ' ')
			return c + len + 2;
	}
	return NULL;
}

/* A decimal counter value: digits only, no sign, no overflow. */
static bool number(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

void mt_facts_read(const char *const *strs, size_t n,
		   struct mt_summary *sum, bool *counters_read)
{
	const char *alloc = value_of(strs, n, "allocator");
	const char *target = value_of(strs, n, "target");
	bool ours = value_of(strs, n, "version") != NULL;
	uint64_t v[MT_CNT__COUNT];
	bool all = ours, totals = ours;

	*counters_read = false;
	if (alloc)
		snprintf(sum->allocator, sizeof(sum->allocator), "%s", alloc);
	else
		sum->missing |= MT_FACT_ALLOCATOR;
	if (!ours) {
		sum->missing |= MT_FACT_COUNTERS;
		return;
	}
	if (target)
		snprintf(sum->target, sizeof(sum->target), "%s", target);
	sum->mmap_traced = value_of(strs, n, "mmap") != NULL;
	if (value_of(strs, n, "alloc figures since")) {
		char *end;
		double since = strtod(value_of(strs, n, "alloc figures since"), &end);

		if (*end == '\0' && since >= 0 && since < 1e12) {
			sum->delta = true;
			sum->delta_since_s = since;
		}
	}
	for (int i = 0; i < MT_CNT__COUNT; i++) {
		bool ok = !counter_keys[i] ||
			  number(value_of(strs, n, counter_keys[i]), &v[i]);
		bool total = i == MT_CNT_ALLOC_OBJECTS || i == MT_CNT_ALLOC_BYTES ||
			     i == MT_CNT_FREE_OBJECTS || i == MT_CNT_FREE_BYTES;

		if (!ok || !counter_keys[i])
			v[i] = 0;
		if (!ok && total)
			totals = false;
		/* The sample count is there only for sampled profiles. */
		else if (!ok && i != MT_CNT_SAMPLES && i != MT_CNT_SNAPSHOT_SKEW)
			all = false;
	}
	if (!all)
		sum->missing |= MT_FACT_COUNTERS;
	for (int i = 0; i < MT_CNT__COUNT; i++) {
		bool total = i == MT_CNT_ALLOC_OBJECTS || i == MT_CNT_ALLOC_BYTES ||
			     i == MT_CNT_FREE_OBJECTS || i == MT_CNT_FREE_BYTES;

		if (total ? totals : all || i == MT_CNT_SAMPLES)
			sum->counters[i] = v[i];
	}
	*counters_read = totals;
}
