// SPDX-License-Identifier: MIT
/* source_list.c: annotated source lines (source_list.h). */
#include "source_list.h"

#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "text_priv.h"

#define MARGIN 5  /* pprof's lines before the first / after the last */

/* One (function, file, line) with a value: pprof's node of "lines". */
struct lnode {
	const char *func;
	const char *file;
	int line;
	int start;            /* the function's first line, or 0 */
	int64_t flat, cum;
	size_t last_sample;   /* 1 + the last sample counted in cum */
};

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int cmp_node(const void *a, const void *b)
{
	const struct lnode *x = a, *y = b;
	int r = strcmp(x->func, y->func);

	if (!r)
		r = strcmp_null(x->file, y->file);
	return r ? r : (x->line > y->line) - (x->line < y->line);
}

/* pprof's Function.Filename: the file of the frame's line, else the
 * definition's. */
static const char *file_of(const struct mt_frame *f)
{
	return f->file ? f->file : f->decl_file;
}

/* The node of frame F among N (found by a linear scan of the few kept). */
static struct lnode *node_of(struct lnode **vp, size_t *n, size_t *cap,
			     const struct mt_frame *f, int *err)
{
	struct lnode *v = *vp;
	const char *name = f->function ? f->function : "??";
	const char *file = file_of(f);
	int line = file ? f->line : 0;
	struct lnode *nv;

	for (size_t i = 0; i < *n; i++)
		if (v[i].line == line && strcmp(v[i].func, name) == 0 &&
		    strcmp_null(v[i].file, file) == 0)
			return &v[i];
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		nv = realloc(v, *cap * sizeof(*v));
		if (!nv) {
			*err = -ENOMEM;
			return NULL;
		}
		*vp = v = nv;
	}
	v[*n] = (struct lnode){ .func = name, .file = file, .line = line,
				.start = f->decl_line > 0 ? f->decl_line : 0 };
	return &v[(*n)++];
}

/* Lines of PATH, split in place: *LINES[i] is line i + 1. */
static char *read_lines(const char *path, char ***lines, size_t *n, int *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, nl = 0;
	char **v;

	*lines = NULL;
	*n = 0;
	if (!f) {
		*err = errno;
		return NULL;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = 2 * (len + 4096 + 1));

			if (!nb)
				break;
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len - 1, f);

		len += r;
		if (r == 0)
			break;
	}
	*err = ferror(f) ? EIO : 0;
	fclose(f);
	if (!buf || *err) {
		free(buf);
		*err = *err ? *err : ENOMEM;
		return NULL;
	}
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		nl += buf[i] == '\n';
	v = calloc(nl + 2, sizeof(*v));
	if (!v) {
		free(buf);
		*err = ENOMEM;
		return NULL;
	}
	for (char *p = buf; *p;) {
		char *e = strchr(p, '\n');

		v[(*n)++] = p;
		if (!e)
			break;
		*e = '\0';
		p = e + 1;
	}
	*lines = v;
	return buf;
}

static const char *value_or_dot(char *buf, size_t len, int64_t v,
				enum mt_value m, enum mt_unit u)
{
	return v ? mt_text_value(buf, len, v, m, u) : ".";
}

/* One function in one file: nodes V[0..N), sorted by line. */
static void write_routine(FILE *out, const struct lnode *v, size_t n,
			  int64_t total, enum mt_value m, enum mt_unit u)
{
	char a[MT_TEXT_BUF], b[MT_TEXT_BUF], pct[MT_TEXT_BUF];
	int64_t flat = 0, cum = 0;
	int start = v[0].start ? v[0].start : v[0].line - MARGIN;
	int end = v[n - 1].line + MARGIN;
	char **lines, *text;
	size_t nlines, k = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		flat += v[i].flat;
		cum += v[i].cum;
		if (v[i].start == 0 && v[i].line - MARGIN < start)
			start = v[i].line - MARGIN;
	}
	if (start < 1)
		start = 1;
	fprintf(out, "ROUTINE ======================== %s in %s\n", v[0].func,
		v[0].file);
	fprintf(out, "%10s %10s (flat, cum) %s of Total\n",
		mt_text_value(a, sizeof(a), flat, m, u),
		mt_text_value(b, sizeof(b), cum, m, u),
		mt_text_percent(pct, sizeof(pct), cum, total));
	text = read_lines(v[0].file, &lines, &nlines, &err);
	if (!text)
		fprintf(out, " (source not available: %s)\n", strerror(err));
	for (int line = text ? start : v[0].line; line <= end; line++) {
		int64_t lf = 0, lc = 0;

		while (k < n && v[k].line < line)
			k++;
		for (size_t j = k; j < n && v[j].line == line; j++) {
			lf += v[j].flat;
			lc += v[j].cum;
		}
		if (text && (size_t)line > nlines)
			break;
		if (!text && !lf && !lc)
			continue;
		fprintf(out, "%10s %10s %6d:%s\n",
			value_or_dot(a, sizeof(a), lf, m, u),
			value_or_dot(b, sizeof(b), lc, m, u), line,
			text ? lines[line - 1] : "");
	}
	free(lines);
	free(text);
}

int mt_write_source_list(FILE *out, const struct mt_profile *p,
			 const char *regex, enum mt_value metric,
			 enum mt_unit unit)
{
	struct lnode *v = NULL;
	size_t n = 0, cap = 0;
	int64_t total = mt_text_total(p, metric);
	char buf[MT_TEXT_BUF];
	bool any = false;
	regex_t re;
	int err = 0;

	if (regcomp(&re, regex, REG_EXTENDED | REG_NOSUB))
		return -EINVAL;
	for (size_t i = 0; i < p->nsamples && !err; i++) {
		const struct mt_sample *s = &p->samples[i];

		for (size_t k = 0; k < s->nframes && !err; k++) {
			const struct mt_frame *f = &p->frames[s->frames[k]];
			struct lnode *nd;

			if (regexec(&re, f->function ? f->function : "??", 0,
				    NULL, 0) != 0)
				continue;
			any = true;
			if (!file_of(f))
				continue;
			nd = node_of(&v, &n, &cap, f, &err);
			if (!nd)
				break;
			if (k == 0)
				nd->flat += s->v[metric];
			if (nd->last_sample != i + 1) {
				nd->last_sample = i + 1;
				nd->cum += s->v[metric];
			}
		}
	}
	regfree(&re);
	if (err) {
		free(v);
		return err;
	}
	if (!any) {
		free(v);
		fprintf(stderr, "memtrace: --list: no function with samples matches '%s'\n",
			regex);
		return -ESRCH;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_node);
	fprintf(out, "Total: %s\n", mt_text_value(buf, sizeof(buf), total, metric, unit));
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && strcmp(v[j].func, v[i].func) == 0 &&
		       strcmp_null(v[j].file, v[i].file) == 0)
			j++;
		write_routine(out, v + i, j - i, total, metric, unit);
		i = j;
	}
	free(v);
	return ferror(out) ? -EIO : 0;
}
