/* SPDX-License-Identifier: MIT */
/*
 * text_funcs.c: the function table of the text report.
 *
 * Frames are aggregated by (function name, module).  flat is the metric
 * summed over samples whose leaf frame is the function; cum over samples
 * where it appears anywhere (once per sample, even when recursive).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "text_priv.h"

struct func {
	const char *name;
	const char *module;
	const struct mt_frame *loc;  /* frame whose location is shown */
	int64_t flat, cum;
	size_t last_sample;          /* 1 + last sample added to cum */
};

struct funcs {
	struct func *v;
	size_t n;
	uint32_t *of_frame;          /* frame index -> index into v */
};

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int cmp_frame_by_function(const void *a, const void *b, void *ctx)
{
	const struct mt_frame *frames = ctx;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	int r = strcmp_null(frames[ia].function, frames[ib].function);

	if (!r)
		r = strcmp_null(frames[ia].module, frames[ib].module);
	return r ? r : (ia > ib) - (ia < ib);
}

/* How well a frame locates its function: definition > call site > none. */
static int loc_rank(const struct mt_frame *f)
{
	return f->decl_file ? 2 : f->file ? 1 : 0;
}

/* Group P's frames into functions; F->of_frame maps frames to them. */
static int build_funcs(const struct mt_profile *p, struct funcs *f)
{
	size_t n = p->nframes;
	uint32_t *order = calloc(n ? n : 1, sizeof(*order));

	f->v = calloc(n ? n : 1, sizeof(*f->v));
	f->of_frame = calloc(n ? n : 1, sizeof(*f->of_frame));
	f->n = 0;
	if (!order || !f->v || !f->of_frame) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_frame_by_function, p->frames);
	for (size_t i = 0; i < n; i++) {
		const struct mt_frame *fr = &p->frames[order[i]];
		const struct mt_frame *prev = i ? &p->frames[order[i - 1]] : NULL;
		struct func *cur;

		if (!prev || strcmp_null(prev->function, fr->function) ||
		    strcmp_null(prev->module, fr->module)) {
			cur = &f->v[f->n++];
			*cur = (struct func){ .name = mt_text_function(fr),
					      .module = fr->module,
					      .loc = fr };
		} else {
			cur = &f->v[f->n - 1];
			if (loc_rank(fr) > loc_rank(cur->loc))
				cur->loc = fr;
		}
		f->of_frame[order[i]] = (uint32_t)(f->n - 1);
	}
	free(order);
	return 0;
}

static void accumulate(const struct mt_profile *p, enum mt_value m,
		       struct funcs *f)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[i];
		int64_t v = s->v[m];

		if (s->nframes == 0)
			continue;
		f->v[f->of_frame[s->frames[0]]].flat += v;
		for (size_t k = 0; k < s->nframes; k++) {
			struct func *fn = &f->v[f->of_frame[s->frames[k]]];

			if (fn->last_sample != i + 1) {
				fn->last_sample = i + 1;
				fn->cum += v;
			}
		}
	}
}

struct row_order {
	const struct func *funcs;
	bool by_cum;
};

/* Largest flat (or cum) first; ties by name, then module. */
static int cmp_row(const void *a, const void *b, void *ctx)
{
	const struct row_order *o = ctx;
	const struct func *x = &o->funcs[*(const size_t *)a];
	const struct func *y = &o->funcs[*(const size_t *)b];
	int64_t kx = o->by_cum ? x->cum : x->flat;
	int64_t ky = o->by_cum ? y->cum : y->flat;
	int r;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	r = strcmp(x->name, y->name);
	return r ? r : strcmp_null(x->module, y->module);
}

static void write_row(FILE *out, const struct func *fn, int64_t total,
		      double *sum_pct, const struct mt_text_opts *o)
{
	char flat[MT_TEXT_BUF], flat_pct[MT_TEXT_BUF], sum[MT_TEXT_BUF];
	char cum[MT_TEXT_BUF], cum_pct[MT_TEXT_BUF];

	*sum_pct += total ? 100.0 * (double)fn->flat / (double)total : 0.0;
	snprintf(sum, sizeof(sum), "%.2f%%", *sum_pct);
	fprintf(out, "%10s %6s %6s %10s %6s  %s",
		mt_text_value(flat, sizeof(flat), fn->flat, o->metric, o->unit),
		mt_text_percent(flat_pct, sizeof(flat_pct), fn->flat, total),
		sum,
		mt_text_value(cum, sizeof(cum), fn->cum, o->metric, o->unit),
		mt_text_percent(cum_pct, sizeof(cum_pct), fn->cum, total),
		fn->name);
	if (fn->loc->decl_file)
		mt_text_location(out, " ", fn->loc->decl_file,
				 fn->loc->decl_line);
	else
		mt_text_location(out, " ", fn->loc->file, fn->loc->line);
	fputc('\n', out);
}

int mt_text_functions(FILE *out, const struct mt_profile *p,
		      const struct mt_text_opts *o)
{
	struct funcs f = { 0 };
	size_t *rows = NULL;  /* indices into f.v of the rows shown */
	size_t nrows = 0;
	int64_t total = mt_text_total(p, o->metric);
	char buf[MT_TEXT_BUF];
	int err = build_funcs(p, &f);

	if (!err) {
		rows = calloc(f.n ? f.n : 1, sizeof(*rows));
		err = rows ? 0 : -ENOMEM;
	}
	if (err)
		goto out;
	accumulate(p, o->metric, &f);
	for (size_t i = 0; i < f.n; i++) {
		if (f.v[i].flat != 0 || f.v[i].cum != 0)
			rows[nrows++] = i;
	}
	struct row_order order = { f.v, o->cum };

	qsort_r(rows, nrows, sizeof(*rows), cmp_row, &order);

	size_t shown = o->top_n > 0 && (size_t)o->top_n < nrows
			       ? (size_t)o->top_n
			       : nrows;
	double sum_pct = 0;

	if (o->top_n > 0)
		fprintf(out, "Showing top %zu of %zu functions", shown, nrows);
	else
		fprintf(out, "Showing all %zu functions", nrows);
	fprintf(out, " by %s %s, total %s\n", o->cum ? "cum" : "flat",
		mt_value_name(o->metric),
		mt_text_value(buf, sizeof(buf), total, o->metric, o->unit));
	fprintf(out, "%10s %6s %6s %10s %6s  %s\n", "flat", "flat%", "sum%",
		"cum", "cum%", "function");
	for (size_t i = 0; i < shown; i++)
		write_row(out, &f.v[rows[i]], total, &sum_pct, o);
out:
	free(rows);
	free(f.v);
	free(f.of_frame);
	return err;
}
