// SPDX-License-Identifier: MIT
/* folded.c: the folded-stacks writer. */
#include "folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <string.h>

/* A frame name may hold neither the separator nor a line break. */
static void put_name(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		char c = *s;

		if (c == ';')
			c = ':';
		else if (c == '\n' || c == '\r' || c == '\t')
			c = ' ';
		putc(c, out);
	}
}

struct line {
	char *stack;
	int64_t value;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack,
		      ((const struct line *)b)->stack);
}

/* The folded frames of sample S: "[comm (pid);]root;...;leaf". */
static char *fold(const struct mt_profile *p, const struct mt_sample *s,
		  bool multi)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (multi) {
		const char *comm = mt_procs_comm(p->procs, p->nprocs, s->pid);

		put_name(f, comm[0] ? comm : "?");
		fprintf(f, " (%" PRIu32 ")%s", s->pid, s->nframes ? ";" : "");
	}
	for (size_t k = s->nframes; k-- > 0;) {
		put_name(f, p->frames[s->frames[k]].function);
		if (k)
			putc(';', f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int mt_write_folded(FILE *out, const struct mt_profile *p,
		    enum mt_value metric)
{
	bool multi = p->nprocs > 1;
	struct line *lines = calloc(p->nsamples ? p->nsamples : 1, sizeof(*lines));
	size_t n = 0;
	int ret = 0;

	if (!lines)
		return -ENOMEM;
	/* Frames that differ only in their lines fold to the same names. */
	for (size_t i = 0; i < p->nsamples && ret == 0; i++) {
		if (p->samples[i].v[metric] == 0)
			continue;
		lines[n].stack = fold(p, &p->samples[i], multi);
		lines[n].value = p->samples[i].v[metric];
		if (!lines[n++].stack)
			ret = -ENOMEM;
	}
	if (ret == 0)
		qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n && ret == 0; i++) {
		int64_t v = lines[i].value;

		while (i + 1 < n && strcmp(lines[i].stack, lines[i + 1].stack) == 0)
			v += lines[++i].value;
		if (v != 0)
			fprintf(out, "%s %" PRId64 "\n", lines[i].stack, v);
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
	if (ret)
		return ret;
	return ferror(out) ? -EIO : 0;
}
