/* SPDX-License-Identifier: MIT */
/* tcmalloc_read.c: gperftools' text heap profile (see tcmalloc_read.h). */
#include "tcmalloc_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heap_text.h"
#include "maps_text.h"

#define MAGIC "heap profile:"

bool mt_tcmalloc_is(const char *text, size_t len)
{
	return len >= strlen(MAGIC) && strncmp(text, MAGIC, strlen(MAGIC)) == 0;
}

/* The header's kind: "@ heapprofile" -> 1, "@ heap_v2/N" -> N; false for
 * anything else (a period of 0, or beyond int64_t, cannot be). */
static bool header(struct mt_line l, uint64_t *period)
{
	const char *at = memchr(l.p, '@', (size_t)(l.end - l.p));

	if (!at)
		return false;
	l.p = at + 1;
	if (mt_line_lit(&l, "heapprofile")) {
		*period = 1;
		return mt_line_blank(&l);
	}
	return mt_line_lit(&l, "heap_v2/") && mt_line_u64(&l, INT64_MAX, period) &&
	       *period > 0 && mt_line_blank(&l);
}

struct reader {
	struct mt_raw_profile *raw;
	uint64_t period;
	uint64_t *ips;       /* the addresses of the current record */
	size_t ipscap, stackcap;
};

/* "C: B [AC: AB] @ 0x..." */
static int record(struct reader *r, struct mt_line l)
{
	struct mt_heap_record rec = { 0 };
	int err;

	if (!mt_heap_text_figures(&l, &rec) || !mt_line_lit(&l, "@"))
		return -EINVAL;
	err = mt_heap_text_addrs(&l, &r->ips, &rec.nips, &r->ipscap);
	if (err)
		return err;
	rec.ips = r->ips;
	return mt_heap_text_add(r->raw, &r->stackcap, &rec, r->period);
}

int mt_tcmalloc_parse(const char *text, size_t len, struct mt_raw_profile *raw,
		      char *err, size_t errlen)
{
	struct reader r = { .raw = raw };
	struct mt_maps_text mt = { 0 };
	struct mt_line l;
	size_t pos = 0, lineno = 1;
	bool maps = false;
	int ret = 0;

	memset(raw, 0, sizeof(*raw));
	raw->procs = calloc(1, sizeof(*raw->procs));
	if (!raw->procs)
		goto nomem;
	raw->nprocs = 1;
	mt.proc = &raw->procs[0];
	if (!mt_line_next(text, len, &pos, &l) || !header(l, &r.period)) {
		snprintf(err, errlen, "line 1: not a heap profile header "
			 "(\"@ heapprofile\" or \"@ heap_v2/N\" expected)");
		return -EINVAL;
	}
	raw->sum.sample_bytes = r.period > 1 ? r.period : 0;
	while (!ret && mt_line_next(text, len, &pos, &l)) {
		lineno++;
		if (mt_line_starts(&l, "MAPPED_LIBRARIES:") ||
		    mt_line_starts(&l, "--- Memory map:"))
			maps = true;
		else if (maps)
			ret = mt_maps_text_line(&mt, l);
		else if (!mt_line_blank(&l) && l.p[0] != '#')
			ret = record(&r, l);
	}
	free(r.ips);
	mt_maps_text_free(&mt);
	if (ret)
		mt_heap_text_error(ret, lineno, "malformed record", err, errlen);
	if (ret)
		return ret;
	mt_maps_text_finish(&raw->procs[0]);
	mt_heap_text_strip(raw, "tcmalloc");
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}
