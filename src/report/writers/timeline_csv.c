// SPDX-License-Identifier: MIT
/* timeline_csv.c: the timeline's CSV file, rolled over by size. */
#include "timeline_csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER "t_s,pid,comm,inuse_bytes,inuse_objects,alloc_bytes," \
	       "alloc_objects,free_bytes,free_objects,max_inuse_bytes\n"
/* Room for one row: the numbers, and a name of 15 bytes quoted. */
#define ROW_MAX 320

/* Open c->of on PATH and start it with the header row. */
static int start(struct mt_tl_csv *c, const char *path)
{
	int ret = mt_outfile_open_now(&c->of, path);
	struct stat st;

	if (ret)
		return ret;
	/* A device or FIFO is written in place, never rolled over. */
	c->rolls = fstat(c->of.fd, &st) == 0 && S_ISREG(st.st_mode);
	c->size = 0;
	ret = mt_outfile_write(&c->of, HEADER, strlen(HEADER));
	if (!ret)
		c->size = strlen(HEADER);
	return ret;
}

int mt_tl_csv_open(struct mt_tl_csv *c, const char *path, uint64_t max_size)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->of.fd = -1;
	c->max_size = max_size;
	ret = start(c, path);
	if (ret)
		mt_tl_csv_close(c);
	return ret;
}

/* NAME with a number appended, ".N"; NULL when out of memory. */
static char *numbered(const char *name, int n)
{
	char *s;

	return asprintf(&s, "%s.%d", name, n) < 0 ? NULL : s;
}

/* FILE.K -> FILE.K+1, ..., FILE -> FILE.1, then a new FILE. */
static int roll(struct mt_tl_csv *c)
{
	char *dest = strdup(c->of.dest), *from = NULL, *to = NULL;
	int ret = dest ? mt_outfile_commit(&c->of) : -ENOMEM;

	for (int k = MT_TL_CSV_KEEP; k >= 1 && !ret; k--) {
		from = k > 1 ? numbered(dest, k - 1) : strdup(dest);
		to = numbered(dest, k);
		if (!from || !to)
			ret = -ENOMEM;
		else if ((ret = mt_outfile_rename(from, to)) == -ENOENT)
			ret = 0;
		free(from);
		free(to);
	}
	if (!ret)
		ret = start(c, dest);
	free(dest);
	return ret;
}

int mt_tl_csv_flush(struct mt_tl_csv *c)
{
	int ret = 0;

	if (!c->len)
		return 0;
	if (c->of.fd < 0)
		return -EBADF;
	if (c->rolls && c->size > strlen(HEADER) &&
	    c->size + c->len > c->max_size)
		ret = roll(c);
	if (!ret)
		ret = mt_outfile_write(&c->of, c->buf, c->len);
	if (!ret)
		c->size += c->len;
	c->len = 0;
	return ret;
}

/* Append to the rows kept, as printf would. */
static int put(struct mt_tl_csv *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->cap - c->len < ROW_MAX) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		char *b = realloc(c->buf, cap);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	va_start(ap, fmt);
	n = vsnprintf(c->buf + c->len, c->cap - c->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= c->cap - c->len)
		return -EOVERFLOW;
	c->len += (size_t)n;
	return 0;
}

/* COMM as a CSV field: quoted when it holds a comma, quote or line end. */
static void field(char *out, size_t len, const char *comm)
{
	size_t at = 0;

	if (!comm[strcspn(comm, ",\"\r\n")]) {
		snprintf(out, len, "%s", comm);
		return;
	}
	out[at++] = '"';
	for (const char *p = comm; *p && at + 3 < len; p++) {
		if (*p == '"')
			out[at++] = '"';
		out[at++] = *p;
	}
	out[at++] = '"';
	out[at] = '\0';
}

int mt_tl_csv_add(struct mt_tl_csv *c, double t, uint32_t pid,
		  const char *comm, const struct mt_tl_values *v)
{
	char name[40];

	field(name, sizeof(name), comm);
	return put(c, "%.6f,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", t, pid, name,
		   v->inuse_bytes, v->inuse_objects, v->alloc_bytes,
		   v->alloc_objects, v->free_bytes, v->free_objects,
		   v->max_inuse_bytes);
}

int mt_tl_csv_close(struct mt_tl_csv *c)
{
	int ret = c->of.fd >= 0 ? mt_tl_csv_flush(c) : 0;

	if (c->of.fd >= 0 || c->of.dest) {
		int err = mt_outfile_commit(&c->of);

		ret = ret ? ret : err;
	}
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
	return ret;
}
