/* SPDX-License-Identifier: MIT */
/* jemalloc_read.c: jemalloc's heap_v2 dump (see jemalloc_read.h). */
#include "jemalloc_read.h"

#include <errno.h>
#include <inttypes.h>
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

/* "  t*: C: B [AC: AB]": the figures of all threads. */
static bool totals(const char *line, struct mt_heap_record *rec)
{
	int n = 0;

	return sscanf(line, " t*: %" SCNd64 ": %" SCNd64 " [ %" SCNd64 ": %" SCNd64
		      " ]%n", &rec->inuse_objects, &rec->inuse_bytes,
		      &rec->alloc_objects, &rec->alloc_bytes, &n) == 4 && n > 0;
}

static bool blank(const char *line)
{
	size_t k = strspn(line, " \t\r");

	return line[k] == '\n' || line[k] == '\0';
}

struct state {
	struct mt_raw_profile *raw;
	uint64_t period;
	uint64_t *ips;        /* the stack of the last "@" line, or NULL */
	size_t nips;
	bool have_stack, maps;
};

static int line_of(struct state *st, const char *line)
{
	struct mt_heap_record rec = { 0 };
	int err;

	if (strncmp(line, "MAPPED_LIBRARIES:", 17) == 0) {
		st->maps = true;
		return 0;
	}
	if (st->maps)
		return mt_maps_text_line(&st->raw->procs[0], line);
	if (line[0] == '@') {
		free(st->ips);
		st->have_stack = false;
		err = mt_heap_text_addrs(line + 1, &st->ips, &st->nips);
		st->have_stack = !err;
		return err;
	}
	if (blank(line) || strncmp(line, "  t", 3) != 0)
		return blank(line) ? 0 : -EINVAL;
	if (!totals(line, &rec))
		return strncmp(line, "  t*", 4) == 0 ? -EINVAL : 0;
	if (!st->have_stack)
		return 0;  /* the profile's totals, before the first stack */
	rec.ips = st->ips;
	rec.nips = st->nips;
	st->have_stack = false;
	return mt_heap_text_add(st->raw, &rec, st->period);
}

int mt_jemalloc_parse(const char *text, struct mt_raw_profile *raw, char *err,
		      size_t errlen)
{
	struct state st = { .raw = raw };
	const char *line;
	size_t lineno = 1;
	int ret = 0;

	memset(raw, 0, sizeof(*raw));
	raw->procs = calloc(1, sizeof(*raw->procs));
	if (!raw->procs)
		goto nomem;
	raw->nprocs = 1;
	if (sscanf(text, MAGIC "%" SCNu64, &st.period) != 1 || st.period == 0) {
		snprintf(err, errlen, "line 1: \"heap_v2/N\" expected");
		return -EINVAL;
	}
	raw->sum.sample_bytes = st.period > 1 ? st.period : 0;
	for (line = strchr(text, '\n'); line && !ret; line = strchr(line, '\n')) {
		line++;
		lineno++;
		if (!*line)
			break;
		ret = line_of(&st, line);
	}
	free(st.ips);
	if (ret == -EINVAL)
		snprintf(err, errlen, "line %zu: malformed line", lineno);
	else if (ret)
		snprintf(err, errlen, "out of memory");
	if (ret)
		return ret;
	mt_maps_text_finish(&raw->procs[0]);
	mt_heap_text_strip(raw, "jemalloc");
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}
