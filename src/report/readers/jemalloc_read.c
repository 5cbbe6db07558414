/* SPDX-License-Identifier: MIT */
/* jemalloc_read.c: jemalloc's heap_v2 dump (see jemalloc_read.h). */
#include "jemalloc_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heap_text.h"
#include "maps_text.h"

#define MAGIC "heap_v2/"

bool mt_jemalloc_is(const char *text, size_t len)
{
	return len >= strlen(MAGIC) && strncmp(text, MAGIC, strlen(MAGIC)) == 0;
}

struct state {
	struct mt_raw_profile *raw;
	uint64_t period;
	uint64_t *ips;        /* the stack of the last "@" line */
	size_t nips, ipscap, stackcap;
	bool have_stack, maps;
	struct mt_maps_text mt;
};

static int line_of(struct state *st, struct mt_line l)
{
	struct mt_heap_record rec = { 0 };
	bool all;
	int err;

	if (mt_line_starts(&l, "MAPPED_LIBRARIES:")) {
		st->maps = true;
		return 0;
	}
	if (st->maps)
		return mt_maps_text_line(&st->mt, l);
	if (mt_line_starts(&l, "@")) {
		err = mt_heap_text_addrs(&l, &st->ips, &st->nips, &st->ipscap);
		st->have_stack = !err;
		return err;
	}
	if (mt_line_blank(&l))
		return 0;
	/* "  t*: C: B [AC: AB]" for all threads, "  tN: ..." for one. */
	if (!mt_line_starts(&l, "  t"))
		return -EINVAL;
	all = mt_line_starts(&l, "*");
	if (!all)
		return 0;
	if (!mt_line_lit(&l, ":") || !mt_heap_text_figures(&l, &rec) ||
	    !mt_line_blank(&l))
		return -EINVAL;
	if (!st->have_stack)
		return 0;  /* the profile's totals, before the first stack */
	rec.ips = st->ips;
	rec.nips = st->nips;
	st->have_stack = false;
	return mt_heap_text_add(st->raw, &st->stackcap, &rec, st->period);
}

int mt_jemalloc_parse(const char *text, size_t len, struct mt_raw_profile *raw,
		      char *err, size_t errlen)
{
	struct state st = { .raw = raw };
	struct mt_line l;
	size_t pos = 0, lineno = 1;
	int ret = 0;

	memset(raw, 0, sizeof(*raw));
	raw->procs = calloc(1, sizeof(*raw->procs));
	if (!raw->procs)
		goto nomem;
	raw->nprocs = 1;
	st.mt.proc = &raw->procs[0];
	/* The sampling period: neither 0 nor beyond int64_t. */
	if (!mt_line_next(text, len, &pos, &l) || !mt_line_starts(&l, MAGIC) ||
	    !mt_line_u64(&l, INT64_MAX, &st.period) || st.period == 0 ||
	    !mt_line_blank(&l)) {
		snprintf(err, errlen, "line 1: \"heap_v2/N\" expected (N from 1 to 2^63-1)");
		return -EINVAL;
	}
	raw->sum.sample_bytes = st.period > 1 ? st.period : 0;
	while (!ret && mt_line_next(text, len, &pos, &l)) {
		lineno++;
		ret = line_of(&st, l);
	}
	free(st.ips);
	mt_maps_text_free(&st.mt);
	if (ret)
		mt_heap_text_error(ret, lineno, "malformed line", err, errlen);
	if (ret)
		return ret;
	mt_maps_text_finish(&raw->procs[0]);
	mt_heap_text_strip(raw, "jemalloc");
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}
