// SPDX-License-Identifier: MIT
/* func_table.c: functions and their flat and cum values (func_table.h). */
#include "func_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static const char *name_of(const struct mt_frame *f)
{
	return f->function ? f->function : "??";
}

static int cmp_frame(const void *a, const void *b, void *ctx)
{
	const struct mt_frame *frames = ctx;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	int r = strcmp(name_of(&frames[ia]), name_of(&frames[ib]));

	if (!r)
		r = strcmp_null(frames[ia].module, frames[ib].module);
	return r ? r : (ia > ib) - (ia < ib);
}

/* How well a frame locates its function: definition > call site > none. */
static int loc_rank(const struct mt_frame *f)
{
	return f->decl_file ? 2 : f->file ? 1 : 0;
}

static void accumulate(const struct mt_profile *p, struct mt_func_table *t)
{
	size_t *last = calloc(t->n ? t->n : 1, sizeof(*last));

	for (size_t i = 0; last && i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[i];

		if (!s->nframes)
			continue;
		for (int m = 0; m < MT_NVALUES; m++)
			t->v[t->of_frame[s->frames[0]]].flat[m] += s->v[m];
		for (size_t k = 0; k < s->nframes; k++) {
			uint32_t f = t->of_frame[s->frames[k]];

			if (last[f] == i + 1)
				continue;
			last[f] = i + 1;
			for (int m = 0; m < MT_NVALUES; m++)
				t->v[f].cum[m] += s->v[m];
		}
	}
	free(last);
}

int mt_func_table_build(const struct mt_profile *p, struct mt_func_table *t)
{
	size_t n = p->nframes;
	uint32_t *order = calloc(n ? n : 1, sizeof(*order));

	memset(t, 0, sizeof(*t));
	t->v = calloc(n ? n : 1, sizeof(*t->v));
	t->of_frame = calloc(n ? n : 1, sizeof(*t->of_frame));
	if (!order || !t->v || !t->of_frame) {
		free(order);
		mt_func_table_free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_frame, p->frames);
	for (size_t i = 0; i < n; i++) {
		const struct mt_frame *fr = &p->frames[order[i]];
		const struct mt_frame *prev = i ? &p->frames[order[i - 1]] : NULL;
		struct mt_func *cur;

		if (!prev || strcmp(name_of(prev), name_of(fr)) != 0 ||
		    strcmp_null(prev->module, fr->module) != 0) {
			cur = &t->v[t->n++];
			*cur = (struct mt_func){ .name = name_of(fr),
						 .module = fr->module, .loc = fr };
		} else {
			cur = &t->v[t->n - 1];
			if (loc_rank(fr) > loc_rank(cur->loc))
				cur->loc = fr;
		}
		t->of_frame[order[i]] = (uint32_t)(t->n - 1);
	}
	free(order);
	accumulate(p, t);
	return 0;
}

struct order_ctx {
	const struct mt_func_table *t;
	enum mt_value m;
	bool by_cum;
};

static int cmp_func(const void *a, const void *b, void *ctx)
{
	const struct order_ctx *o = ctx;
	const struct mt_func *x = &o->t->v[*(const size_t *)a];
	const struct mt_func *y = &o->t->v[*(const size_t *)b];
	int64_t kx = o->by_cum ? x->cum[o->m] : x->flat[o->m];
	int64_t ky = o->by_cum ? y->cum[o->m] : y->flat[o->m];
	int r;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	r = strcmp(x->name, y->name);
	return r ? r : strcmp_null(x->module, y->module);
}

size_t *mt_func_table_order(const struct mt_func_table *t, enum mt_value m,
			    bool by_cum, size_t *n)
{
	size_t *rows = calloc(t->n ? t->n : 1, sizeof(*rows));
	struct order_ctx o = { t, m, by_cum };

	*n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		bool any = false;

		for (int k = 0; k < MT_NVALUES; k++)
			any |= t->v[i].flat[k] || t->v[i].cum[k];
		if (any)
			rows[(*n)++] = i;
	}
	qsort_r(rows, *n, sizeof(*rows), cmp_func, &o);
	return rows;
}

void mt_func_table_free(struct mt_func_table *t)
{
	free(t->v);
	free(t->of_frame);
	t->v = NULL;
	t->of_frame = NULL;
	t->n = 0;
}
