/* SPDX-License-Identifier: MIT */
/* profile_read.c: any saved heap profile, by its first bytes (profile_read.h). */
#include "profile_read.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "go_text_read.h"
#include "jemalloc_read.h"
#include "profile_input.h"
#include "symbolize.h"
#include "tcmalloc_read.h"
#include "units.h"

/* Header facts of a text profile: what the format records, and not. */
static void text_summary(struct mt_raw_profile *raw, const char *path,
			 const char *allocator)
{
	struct mt_summary *sum = &raw->sum;

	snprintf(sum->target, sizeof(sum->target), "profile %s", path);
	snprintf(sum->allocator, sizeof(sum->allocator), "%s", allocator);
	sum->missing = MT_FACT_COUNTERS | MT_FACT_DURATION | MT_FACT_SIZES |
		       MT_FACT_TIMELINE;
	for (size_t i = 0; i < raw->nstacks; i++) {
		const struct mt_raw_stack *s = &raw->stacks[i];

		sum->counters[MT_CNT_ALLOC_OBJECTS] += s->alloc_objects;
		sum->counters[MT_CNT_ALLOC_BYTES] += s->alloc_bytes;
		sum->counters[MT_CNT_FREE_OBJECTS] += s->free_objects;
		sum->counters[MT_CNT_FREE_BYTES] += s->free_bytes;
	}
}

static int read_text(const char *path, const char *text, size_t len,
		     struct mt_profile *p, char *err, size_t errlen)
{
	struct mt_raw_profile raw = { 0 };
	bool tc = mt_tcmalloc_is(text, len);
	int ret = tc ? mt_tcmalloc_parse(text, len, &raw, err, errlen)
		     : mt_jemalloc_parse(text, len, &raw, err, errlen);

	if (!ret) {
		text_summary(&raw, path, tc ? "tcmalloc (gperftools heap profile)"
					    : "jemalloc (heap profile dump)");
		ret = mt_symbolize(&raw, p);
		if (ret)
			snprintf(err, errlen, "cannot symbolise: %s", strerror(-ret));
	}
	mt_raw_profile_free(&raw);
	return ret;
}

/*
 * A text profile takes at most about 16 times its size (records of a few
 * bytes become a raw stack, then a sample): the budget of decoding a
 * protobuf of that size (pprof_read.h) holds it, unless --max-memory or
 * the 2 GiB cap says otherwise.
 */
static bool text_too_big(const struct mt_pprof_limits *lim, size_t len,
			 char *err, size_t errlen)
{
	size_t need, max = lim->budget ? lim->budget : lim->max_memory;

	if (__builtin_mul_overflow(len, (size_t)MT_PPROF_DECODE_RATIO, &need) ||
	    __builtin_add_overflow(need, MT_PPROF_DECODE_BASE, &need))
		need = SIZE_MAX;
	if (need <= max)
		return false;
	snprintf(err, errlen, "reading this text profile may need %zu bytes "
		 "(64 MiB + %d x its size), more than %zu%s", need,
		 MT_PPROF_DECODE_RATIO, max,
		 lim->budget ? " (--max-memory)" : "; --max-memory raises it");
	return true;
}

static int read_go(const char *path, const char *text, size_t len,
		   struct mt_profile *p, char *err, size_t errlen)
{
	int ret = mt_go_text_parse(text, len, p, err, errlen);

	snprintf(p->sum.target, sizeof(p->sum.target), "profile %s", path);
	snprintf(p->sum.allocator, sizeof(p->sum.allocator),
		 "go (runtime/pprof heap profile, debug=1)");
	p->sum.missing = MT_FACT_COUNTERS | MT_FACT_DURATION | MT_FACT_SIZES |
		       MT_FACT_TIMELINE;
	return ret;
}

/*
 * Every report sums a profile's values (per stack, per function, per
 * process, in all, less a --base) in int64_t: the magnitudes of each value
 * over all samples must add up to at most 2^62, so that no sum of them,
 * nor of two profiles', can overflow.  No real profile comes near (2^62
 * bytes is 4 EiB); one that does is refused.
 */
static int check_totals(const struct mt_profile *p, char *err, size_t errlen)
{
	for (int k = 0; k < MT_NVALUES; k++) {
		uint64_t sum = 0;

		for (size_t i = 0; i < p->nsamples; i++) {
			int64_t v = p->samples[i].v[k];
			uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

			if (__builtin_add_overflow(sum, a, &sum) ||
			    sum > MT_PROFILE_MAX_TOTAL) {
				snprintf(err, errlen, "the samples' %s add up to "
					 "more than 2^62: not a real profile",
					 mt_value_name((enum mt_value)k));
				return -EINVAL;
			}
		}
	}
	return 0;
}

static bool is_text(const char *data, size_t len)
{
	return mt_go_text_is(data, len) || mt_tcmalloc_is(data, len) ||
	       mt_jemalloc_is(data, len);
}

int mt_profile_read(const char *path, const struct mt_pprof_limits *lim,
		    struct mt_profile *p, char *err, size_t errlen)
{
	static const struct mt_pprof_limits defaults = {
		MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO, MT_PPROF_MAX_MEMORY, 0,
	};
	struct mt_input in;
	size_t len;
	char *data;
	int ret;

	memset(p, 0, sizeof(*p));
	if (!lim)
		lim = &defaults;
	ret = mt_input_open(&in, path, lim, err, errlen);
	if (ret)
		return ret;
	/* A text profile too large for its budget is refused unread. */
	if (!in.gzip && in.size != MT_INPUT_SIZE_UNKNOWN && in.size <= SIZE_MAX &&
	    is_text(in.data, in.len) &&
	    text_too_big(lim, (size_t)in.size, err, errlen))
		ret = -EFBIG;
	if (!ret)
		ret = mt_input_read(&in, lim, err, errlen);
	data = in.data;
	len = in.len;
	/* What was gzip is pprof (its bytes decoded as they are). */
	if (ret)
		;
	else if (!in.gzip && is_text(data, len) && text_too_big(lim, len, err, errlen))
		ret = -EFBIG;
	else if (!in.gzip && mt_go_text_is(data, len))
		ret = read_go(path, data, len, p, err, errlen);
	else if (!in.gzip && is_text(data, len))
		ret = read_text(path, data, len, p, err, errlen);
	else
		ret = mt_pprof_decode(data, len, path, lim, p, err, errlen);
	mt_input_close(&in);
	if (!ret)
		ret = check_totals(p, err, errlen);
	if (ret)
		mt_profile_free(p);
	return ret;
}
