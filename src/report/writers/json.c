// SPDX-License-Identifier: MIT
/* json.c: the profile as JSON (json.h, doc/json.md). */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "func_table.h"
#include "units.h"

#ifndef MEMTRACE_VERSION
#error "MEMTRACE_VERSION must be defined by the build (see Makefile)"
#endif

/* S as a JSON string, or null. */
static void jstr(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*c < 0x20 || *c == 0x7f)
				fprintf(out, "\\u%04x", *c);
			else
				fputc(*c, out);
		}
	}
	fputc('"', out);
}

static void jvalues(FILE *out, const int64_t v[MT_NVALUES])
{
	fputc('{', out);
	for (int m = 0; m < MT_NVALUES; m++)
		fprintf(out, "%s\"%s\": %" PRId64, m ? ", " : "",
			mt_value_name((enum mt_value)m), v[m]);
	fputc('}', out);
}

static void jamount(FILE *out, const char *key, uint64_t bytes,
		    uint64_t objects, bool last)
{
	fprintf(out, "    \"%s\": {\"bytes\": %" PRId64 ", \"objects\": %" PRId64 "}%s\n",
		key, (int64_t)bytes, (int64_t)objects, last ? "" : ",");
}

static void header(FILE *out, const struct mt_summary *s)
{
	const uint64_t *c = s->counters;
	bool counters = !(s->missing & MT_FACT_COUNTERS);
	uint64_t drops = 0;

	for (int i = MT_CNT_DROP_ALLOCS_FULL; i <= MT_CNT_DROP_READ_ERRORS; i++)
		drops += c[i];
	fputs("  \"header\": {\n    \"target\": ", out);
	jstr(out, s->target);
	fputs(",\n    \"allocator\": ", out);
	jstr(out, s->missing & MT_FACT_ALLOCATOR ? NULL : s->allocator);
	fputs(",\n    \"duration_s\": ", out);
	if ((s->missing & MT_FACT_DURATION) || !isfinite(s->duration_s))
		fputs("null", out);
	else
		fprintf(out, "%.6f", s->duration_s);
	fprintf(out, ",\n    \"sample_bytes\": %" PRIu64 ",\n", s->sample_bytes);
	fprintf(out, "    \"mmap_traced\": %s,\n", s->mmap_traced ? "true" : "false");
	fputs("    \"view\": ", out);
	jstr(out, s->view);
	fputs(",\n", out);
	if (counters)
		fprintf(out, "    \"events\": %" PRIu64 ",\n    \"failed\": %" PRIu64
			",\n    \"drops\": %" PRIu64 ",\n", c[MT_CNT_EVENTS],
			c[MT_CNT_FAILED_ALLOCS], drops);
	else
		fputs("    \"events\": null,\n    \"failed\": null,\n    \"drops\": null,\n", out);
	jamount(out, "in_use", c[MT_CNT_ALLOC_BYTES] - c[MT_CNT_FREE_BYTES],
		c[MT_CNT_ALLOC_OBJECTS] - c[MT_CNT_FREE_OBJECTS], false);
	jamount(out, "allocated", c[MT_CNT_ALLOC_BYTES],
		c[MT_CNT_ALLOC_OBJECTS], false);
	jamount(out, "freed", c[MT_CNT_FREE_BYTES], c[MT_CNT_FREE_OBJECTS], false);
	jamount(out, "mmap_in_use", c[MT_CNT_MMAP_BYTES] - c[MT_CNT_MUNMAP_BYTES],
		c[MT_CNT_MMAP_OBJECTS] - c[MT_CNT_MUNMAP_OBJECTS], true);
	fputs("  },\n", out);
}

static void functions(FILE *out, const struct mt_func_table *t,
		      const size_t *rows, size_t n)
{
	fputs("  \"functions\": [", out);
	for (size_t i = 0; i < n; i++) {
		const struct mt_func *f = &t->v[rows[i]];
		const char *file = f->loc->decl_file ? f->loc->decl_file : f->loc->file;
		int line = f->loc->decl_file ? f->loc->decl_line : f->loc->line;

		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		jstr(out, f->name);
		fputs(", \"module\": ", out);
		jstr(out, f->module);
		fputs(", \"file\": ", out);
		jstr(out, file);
		fprintf(out, ", \"line\": %d,\n     \"flat\": ", file ? line : 0);
		jvalues(out, f->flat);
		fputs(",\n     \"cum\": ", out);
		jvalues(out, f->cum);
		fputc('}', out);
	}
	fputs(n ? "\n  ],\n" : "],\n", out);
}

static void frame(FILE *out, const struct mt_frame *f, bool first)
{
	fputs(first ? "\n       {\"function\": " : ",\n       {\"function\": ", out);
	jstr(out, f->function ? f->function : "??");
	fputs(", \"file\": ", out);
	jstr(out, f->file);
	fprintf(out, ", \"line\": %d, \"module\": ", f->file ? f->line : 0);
	jstr(out, f->module);
	fprintf(out, ", \"inlined\": %s}", f->inlined ? "true" : "false");
}

struct stack_order {
	const struct mt_sample *s;
	enum mt_value m;
};

static int cmp_stack(const void *a, const void *b, void *ctx)
{
	const struct stack_order *o = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int64_t vx = o->s[x].v[o->m], vy = o->s[y].v[o->m];

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return (x > y) - (x < y);
}

static int stacks(FILE *out, const struct mt_profile *p, enum mt_value m)
{
	size_t *order = calloc(p->nsamples ? p->nsamples : 1, sizeof(*order));
	struct stack_order o = { p->samples, m };

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++)
		order[i] = i;
	qsort_r(order, p->nsamples, sizeof(*order), cmp_stack, &o);
	fputs("  \"stacks\": [", out);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[order[i]];

		fprintf(out, "%s\n    {\"pid\": %" PRIu32 ", \"values\": ",
			i ? "," : "", s->pid);
		jvalues(out, s->v);
		fputs(",\n     \"frames\": [", out);
		for (size_t k = 0; k < s->nframes; k++)
			frame(out, &p->frames[s->frames[k]], k == 0);
		fputs(s->nframes ? "\n     ]}" : "]}", out);
	}
	fputs(p->nsamples ? "\n  ]\n" : "]\n", out);
	free(order);
	return 0;
}

int mt_write_json(FILE *out, const struct mt_profile *p, enum mt_value metric,
		  bool by_cum)
{
	struct mt_func_table t;
	int64_t total[MT_NVALUES] = { 0 };
	size_t *rows, nrows;
	int err;

	if ((unsigned)metric >= MT_NVALUES)
		return -EINVAL;
	err = mt_func_table_build(p, &t);
	if (err)
		return err;
	rows = mt_func_table_order(&t, metric, by_cum, &nrows);
	if (!rows) {
		mt_func_table_free(&t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		for (int m = 0; m < MT_NVALUES; m++)
			total[m] += p->samples[i].v[m];
	fprintf(out, "{\n  \"format\": \"memtrace-profile\",\n  \"schema_version\": 1,\n"
		"  \"memtrace_version\": \"%s\",\n", MEMTRACE_VERSION);
	header(out, &p->sum);
	fprintf(out, "  \"metric\": \"%s\",\n  \"total\": ", mt_value_name(metric));
	jvalues(out, total);
	fputs(",\n  \"processes\": [", out);
	for (size_t i = 0; i < p->nprocs; i++) {
		char comm[sizeof(p->procs[i].comm) + 1];

		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(p->procs[i].comm),
			 p->procs[i].comm);
		fprintf(out, "%s{\"pid\": %" PRIu32 ", \"comm\": ", i ? ", " : "",
			p->procs[i].pid);
		jstr(out, comm);
		fputc('}', out);
	}
	fputs("],\n", out);
	functions(out, &t, rows, nrows);
	err = stacks(out, p, metric);
	fputs("}\n", out);
	free(rows);
	mt_func_table_free(&t);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
