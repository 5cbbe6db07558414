/* SPDX-License-Identifier: MIT */
/* tcmalloc_read.c: gperftools' text heap profile (see tcmalloc_read.h). */
#include "tcmalloc_read.h"

#include <errno.h>
#include <inttypes.h>
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

/* "@ heapprofile" -> 1, "@ heap_v2/N" -> N; false for anything else. */
static bool header(const char *line, uint64_t *period)
{
	const char *at = strchr(line, '@');
	char kind[32];
	int n = 0;

	if (!at || sscanf(at, "@ %31[a-z_0-9]%n", kind, &n) != 1)
		return false;
	if (strcmp(kind, "heapprofile") == 0) {
		*period = 1;
		return true;
	}
	return strcmp(kind, "heap_v2") == 0 &&
	       sscanf(at + n, "/%" SCNu64, period) == 1;
}

/* "C: B [AC: AB] @ 0x..." */
static int record(const char *line, struct mt_raw_profile *raw, uint64_t period)
{
	struct mt_heap_record rec = { 0 };
	uint64_t *ips;
	int n = 0, err;

	if (sscanf(line, " %" SCNd64 ": %" SCNd64 " [ %" SCNd64 ": %" SCNd64 " ] @%n",
		   &rec.inuse_objects, &rec.inuse_bytes, &rec.alloc_objects,
		   &rec.alloc_bytes, &n) != 4 || n == 0)
		return -EINVAL;
	err = mt_heap_text_addrs(line + n, &ips, &rec.nips);
	if (err)
		return err;
	rec.ips = ips;
	err = mt_heap_text_add(raw, &rec, period);
	free(ips);
	return err;
}

static bool blank(const char *line)
{
	return line[strspn(line, " \t\r")] == '\n' || line[strspn(line, " \t\r")] == '\0';
}

int mt_tcmalloc_parse(const char *text, struct mt_raw_profile *raw, char *err,
		      size_t errlen)
{
	const char *line = text;
	uint64_t period = 0;
	bool maps = false;
	size_t lineno = 1;
	int ret = 0;

	memset(raw, 0, sizeof(*raw));
	raw->procs = calloc(1, sizeof(*raw->procs));
	if (!raw->procs)
		goto nomem;
	raw->nprocs = 1;
	if (!header(line, &period)) {
		snprintf(err, errlen, "line 1: not a heap profile header "
			 "(\"@ heapprofile\" or \"@ heap_v2/N\" expected)");
		return -EINVAL;
	}
	raw->sum.sample_bytes = period > 1 ? period : 0;
	for (line = strchr(line, '\n'); line && !ret; line = strchr(line, '\n')) {
		line++;
		lineno++;
		if (!*line)
			break;
		if (strncmp(line, "MAPPED_LIBRARIES:", 17) == 0 ||
		    strncmp(line, "--- Memory map:", 15) == 0)
			maps = true;
		else if (maps)
			ret = mt_maps_text_line(&raw->procs[0], line);
		else if (!blank(line) && line[0] != '#')
			ret = record(line, raw, period);
	}
	if (ret == -EINVAL)
		snprintf(err, errlen, "line %zu: malformed record", lineno);
	else if (ret)
		snprintf(err, errlen, "out of memory");
	if (ret)
		return ret;
	mt_maps_text_finish(&raw->procs[0]);
	mt_heap_text_strip(raw, "tcmalloc");
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}
