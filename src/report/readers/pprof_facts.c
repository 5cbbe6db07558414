/* SPDX-License-Identifier: MIT */
/* pprof_facts.c: header facts as pprof strs (see pprof_facts.h). */
#include "pprof_facts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "size_class.h"

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
	[MT_CNT_TIMELINE_FULL] = "timeline table full",
	[MT_CNT_DEFER_COPIES] = "deferred stack copies",
	[MT_CNT_DEFER_LOST] = "deferred stack copies lost",
	/* By reason (trunc_reason.h: the header's words). */
	[MT_CNT_TRUNC + MT_TRUNC_NO_TABLE] = "truncated stacks no table",
	[MT_CNT_TRUNC + MT_TRUNC_NO_CFI] = "truncated stacks no CFI",
	[MT_CNT_TRUNC + MT_TRUNC_BAD_STACK] = "truncated stacks bad stack",
	[MT_CNT_TRUNC + MT_TRUNC_DEPTH] = "truncated stacks depth",
	[MT_CNT_TRUNC + MT_TRUNC_CFI_RULE] = "truncated stacks CFI rule",
	[MT_CNT_TRUNC + MT_TRUNC_VMA_BUSY] = "truncated stacks mapping busy",
	[MT_CNT_TRUNC + MT_TRUNC_COPY_LOST] = "truncated stacks copy lost",
	[MT_CNT_TRUNC + MT_TRUNC_UNREADABLE] = "truncated stacks file unreadable",
	[MT_CNT_TRUNC + MT_TRUNC_COPY_SHORT] = "truncated stacks copy short",
};

/* Counters a profile of an older memtrace may lack, read then as 0. */
static bool optional(int i)
{
	return i == MT_CNT_SAMPLES || i == MT_CNT_SNAPSHOT_SKEW ||
	       i == MT_CNT_TIMELINE_FULL || i == MT_CNT_DEFER_COPIES ||
	       i == MT_CNT_DEFER_LOST ||
	       (i >= MT_CNT_TRUNC && i <= MT_CNT_TRUNC_LAST);
}

/* Facts before the counters: the mark, target, allocator, mmap, delta; after
 * them, the size histogram's mark, then its classes, then the timeline and
 * each process's peak. */
enum {
	C_MARK, C_TARGET, C_ALLOCATOR, C_PROBES, C_MMAP, C_DELTA, C_AT,
	C_COUNTERS,
	C_SIZES = C_COUNTERS + MT_CNT__COUNT,
	C_SIZE_CLASSES,
	C_TIMELINE = C_SIZE_CLASSES + MT_NCATEGORIES * MT_SIZE_CLASSES,
	C_PEAKS,
	C_END = C_PEAKS + MT_TL_SUM_PROCS
};

/* The size histogram: its mark, and the start of each class's fact. */
#define SIZES_KEY "size classes"
#define SIZES_VALUE "powers of two"
#define SIZE_CLASS_KEY "size class "
static const char *const category_names[MT_NCATEGORIES] = {
	[MT_CAT_HEAP] = "heap",
	[MT_CAT_MMAP] = "mmap",
};

size_t mt_facts_count(void)
{
	return C_END;
}

/*
 * "memtrace.timeline: processes N cells C of S s" and, for each process
 * kept, "memtrace.peak K: pid P bytes B at T cells V,V,- ... comm NAME"
 * (a cell it did not live through is "-"; the name last, as it may hold
 * spaces).  Times with %.17g: read back, they print the same.
 */
static int timeline_fact(const struct mt_summary *sum, size_t k, char **out)
{
	const struct mt_tl_summary *tl = &sum->timeline;
	const struct mt_tl_peak *pk = &tl->procs[k];
	char *cells = NULL, *more;
	size_t len = 0;
	FILE *f;

	if (k >= tl->nkept)
		return 0;
	f = open_memstream(&cells, &len);
	if (!f)
		return -ENOMEM;
	for (size_t c = 0; c < tl->ncells; c++) {
		if (pk->cells[c] == MT_TL_CELL_NONE)
			fprintf(f, "%s-", c ? "," : "");
		else
			fprintf(f, "%s%" PRIu64, c ? "," : "", pk->cells[c]);
	}
	if (fclose(f))
		return -ENOMEM;
	if (asprintf(&more, MT_FACTS_PREFIX "peak %zu: pid %u bytes %" PRIu64
		     " at %.17g cells %s comm %.*s", k, pk->pid, pk->bytes, pk->t,
		     cells, (int)strnlen(pk->comm, sizeof(pk->comm)),
		     pk->comm) < 0)
		more = NULL;
	free(cells);
	*out = more;
	return more ? 0 : -ENOMEM;
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

/*
 * Fact I of the size histogram: 0 is its mark, then one fact per class
 * that is not empty, "size class heap 1024: 3 objects, 3200 bytes" (the
 * class's smallest size; bpf/size_class.h).
 */
static int size_fact(const struct mt_summary *sum, size_t i, char **out)
{
	const struct mt_size_count *c;
	size_t cat, k;

	if (sum->missing & MT_FACT_SIZES)
		return 0;
	if (i == 0)
		return text(out, SIZES_KEY, SIZES_VALUE, SIZE_MAX);
	cat = (i - 1) / MT_SIZE_CLASSES;
	k = (i - 1) % MT_SIZE_CLASSES;
	if (cat >= MT_NCATEGORIES)
		return 0;
	c = &sum->sizes[cat][k];
	if (!c->objects && !c->bytes)
		return 0;
	if (asprintf(out, MT_FACTS_PREFIX SIZE_CLASS_KEY "%s %" PRIu64
		     ": %" PRIu64 " objects, %" PRIu64 " bytes",
		     category_names[cat], (uint64_t)mt_size_class_min((__u32)k),
		     (uint64_t)c->objects, (uint64_t)c->bytes) < 0) {
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
	case C_PROBES: {
		char probes[64];

		if (!sum->probes)
			return 0;
		snprintf(probes, sizeof(probes), "%" PRIu32 " stepped %" PRIu32,
			 sum->probes, sum->probes_stepped);
		return text(out, "probes", probes, sizeof(probes));
	}
	case C_MMAP:
		return sum->mmap_traced ? text(out, "mmap", "traced", SIZE_MAX) : 0;
	case C_AT: {
		char at[48];

		if (sum->at != MT_AT_PEAK && sum->at != MT_AT_TIME)
			return 0;
		snprintf(at, sizeof(at), "%s %.3f",
			 sum->at == MT_AT_PEAK ? "peak" : "time", sum->at_s);
		return text(out, "moment", at, sizeof(at));
	}
	case C_DELTA: {
		char since[32];

		if (!sum->delta)
			return 0;
		snprintf(since, sizeof(since), "%.9f", sum->delta_since_s);
		return text(out, "alloc figures since", since, sizeof(since));
	}
	default:
		break;
	}
	if (i >= C_TIMELINE && (sum->missing & MT_FACT_TIMELINE))
		return 0;
	if (i == C_TIMELINE) {
		const struct mt_tl_summary *tl = &sum->timeline;

		if (asprintf(out, MT_FACTS_PREFIX "timeline: processes %zu cells %zu of %.17g s",
			     tl->nprocs, tl->ncells, tl->cell_s) < 0) {
			*out = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	if (i >= C_PEAKS)
		return timeline_fact(sum, i - C_PEAKS, out);
	if (i >= C_SIZES)
		return size_fact(sum, i - C_SIZES, out);
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

/* Digits at *S (no sign, no overflow) into *V; *S moves past them. */
static bool digits(const char **s, uint64_t *v)
{
	char *end;

	if (**s < '0' || **s > '9')
		return false;
	errno = 0;
	*v = strtoull(*s, &end, 10);
	*s = end;
	return errno == 0;
}

/* LIT at *S; *S moves past it. */
static bool literal(const char **s, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*s, lit, n) != 0)
		return false;
	*s += n;
	return true;
}

/*
 * One class's fact C (after "memtrace.size class ") into SIZES; SEEN has
 * a bit per class already read.  False when it is not one this version
 * writes (or a class comes twice).
 */
static bool read_size_class(const char *c,
			    struct mt_size_count sizes[MT_NCATEGORIES][MT_SIZE_CLASSES],
			    uint64_t seen[MT_NCATEGORIES])
{
	uint64_t min, objects, bytes;
	size_t cat = MT_NCATEGORIES;
	__u32 k;

	for (size_t i = 0; i < MT_NCATEGORIES && cat == MT_NCATEGORIES; i++) {
		if (literal(&c, category_names[i]))
			cat = i;
	}
	if (cat == MT_NCATEGORIES || !literal(&c, " ") || !digits(&c, &min) ||
	    !literal(&c, ": ") || !digits(&c, &objects) ||
	    !literal(&c, " objects, ") || !digits(&c, &bytes) ||
	    !literal(&c, " bytes") || *c)
		return false;
	k = mt_size_class(min);
	if (mt_size_class_min(k) != min || (seen[cat] >> k & 1))
		return false;
	seen[cat] |= 1ULL << k;
	sizes[cat][k] = (struct mt_size_count){ objects, bytes };
	return true;
}

/* The size histogram among STRS into SUM, or MT_FACT_SIZES missing. */
static void read_sizes(const char *const *strs, size_t n,
		       struct mt_summary *sum)
{
	static const char key[] = MT_FACTS_PREFIX SIZE_CLASS_KEY;
	struct mt_size_count sizes[MT_NCATEGORIES][MT_SIZE_CLASSES] = { 0 };
	uint64_t seen[MT_NCATEGORIES] = { 0 };
	const char *mark = value_of(strs, n, SIZES_KEY);
	bool ok = mark && strcmp(mark, SIZES_VALUE) == 0;

	for (size_t i = 0; i < n && ok; i++) {
		if (strncmp(strs[i], key, sizeof(key) - 1) == 0)
			ok = read_size_class(strs[i] + sizeof(key) - 1, sizes,
					     seen);
	}
	if (!ok) {
		sum->missing |= MT_FACT_SIZES;
		return;
	}
	memcpy(sum->sizes, sizes, sizeof(sizes));
}

/* The cells of a peak fact ("1,2,-,3") into PK; false if malformed. */
static bool read_cells(const char *s, size_t ncells, struct mt_tl_peak *pk)
{
	for (size_t c = 0; c < ncells; c++) {
		char *end;

		if (c && *s++ != ',')
			return false;
		if (*s == '-') {
			pk->cells[c] = MT_TL_CELL_NONE;
			s++;
			continue;
		}
		if (*s < '0' || *s > '9')
			return false;
		errno = 0;
		pk->cells[c] = strtoull(s, &end, 10);
		if (errno)
			return false;
		s = end;
	}
	return strncmp(s, " comm ", 6) == 0;
}

/* The timeline's facts, or MT_FACT_TIMELINE missing when absent or bad. */
static void read_timeline(const char *const *strs, size_t n,
			  struct mt_summary *sum)
{
	struct mt_tl_summary *tl = &sum->timeline;
	const char *v = value_of(strs, n, "timeline");
	int at = 0;

	memset(tl, 0, sizeof(*tl));
	if (!v || sscanf(v, "processes %zu cells %zu of %lf s%n", &tl->nprocs,
			 &tl->ncells, &tl->cell_s, &at) != 3 || v[at] ||
	    tl->ncells > MT_TL_CELLS) {
		memset(tl, 0, sizeof(*tl));
		sum->missing |= MT_FACT_TIMELINE;
		return;
	}
	for (size_t k = 0; k < MT_TL_SUM_PROCS && k < tl->nprocs; k++) {
		struct mt_tl_peak *pk = &tl->procs[k];
		char key[32];
		const char *c;

		snprintf(key, sizeof(key), "peak %zu", k);
		v = value_of(strs, n, key);
		at = 0;
		if (!v || sscanf(v, "pid %u bytes %" SCNu64 " at %lf cells %n",
				 &pk->pid, &pk->bytes, &pk->t, &at) != 3 || !at)
			break;
		c = strstr(v + at, " comm ");
		if (!read_cells(v + at, tl->ncells, pk) || !c)
			break;
		snprintf(pk->comm, sizeof(pk->comm), "%s", c + 6);
		tl->nkept = k + 1;
	}
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
		sum->missing |= MT_FACT_COUNTERS | MT_FACT_SIZES |
				MT_FACT_TIMELINE;
		return;
	}
	read_sizes(strs, n, sum);
	if (target)
		snprintf(sum->target, sizeof(sum->target), "%s", target);
	sum->mmap_traced = value_of(strs, n, "mmap") != NULL;
	if (value_of(strs, n, "probes")) {
		uint32_t all, stepped;

		if (sscanf(value_of(strs, n, "probes"), "%" SCNu32 " stepped %" SCNu32,
			   &all, &stepped) == 2 && stepped <= all) {
			sum->probes = all;
			sum->probes_stepped = stepped;
		}
	}
	if (value_of(strs, n, "moment")) {
		const char *m = value_of(strs, n, "moment");
		char *end;
		bool peak = strncmp(m, "peak ", 5) == 0;
		double at = strtod(m + 5, &end);

		if ((peak || strncmp(m, "time ", 5) == 0) && *end == '\0' &&
		    at >= 0 && at < 1e12) {
			sum->at = peak ? MT_AT_PEAK : MT_AT_TIME;
			sum->at_s = at;
		}
	}
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
		else if (!ok && !optional(i))
			all = false;
	}
	if (!all)
		sum->missing |= MT_FACT_COUNTERS;
	for (int i = 0; i < MT_CNT__COUNT; i++) {
		bool total = i == MT_CNT_ALLOC_OBJECTS || i == MT_CNT_ALLOC_BYTES ||
			     i == MT_CNT_FREE_OBJECTS || i == MT_CNT_FREE_BYTES;

		if (total ? totals : all || optional(i))
			sum->counters[i] = v[i];
	}
	*counters_read = totals;
	read_timeline(strs, n, sum);
}
