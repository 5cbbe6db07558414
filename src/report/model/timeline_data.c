// SPDX-License-Identifier: MIT
/* timeline_data.c: the points of a timeline, bounded (timeline_data.h). */
#include "timeline_data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mt_tl_series_new(struct mt_tl_data *d, uint32_t pid, const char *comm,
		     size_t *idx)
{
	struct mt_tl_series *s;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;

		s = realloc(d->series, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		d->series = s;
		d->cap = cap;
	}
	s = &d->series[d->n];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	snprintf(s->comm, sizeof(s->comm), "%s", comm);
	s->span = 1;
	*idx = d->n++;
	return 0;
}

/* Merge each two neighbours: half the points, each for twice the time. */
static void halve(struct mt_tl_series *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i += 2) {
		struct mt_tl_point p = s->pts[i];

		if (i + 1 < s->n) {
			const struct mt_tl_point *q = &s->pts[i + 1];

			p.t_ms = q->t_ms;
			p.inuse = q->inuse;
			p.ticks += q->ticks;
			if (q->max > p.max)
				p.max = q->max;
		}
		s->pts[n++] = p;
	}
	s->n = n;
	s->span *= 2;
}

int mt_tl_point_add(struct mt_tl_data *d, size_t idx, double t,
		    const struct mt_tl_values *v)
{
	struct mt_tl_series *s = &d->series[idx];
	struct mt_tl_point *last = s->n ? &s->pts[s->n - 1] : NULL;
	double ms = t * 1000.0 + 0.5;
	uint32_t t_ms = ms < 0 ? 0 : ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;

	if (!last) {
		s->first_t = t > d->interval ? t - d->interval : 0;
		s->peak_t = t;
	}
	if (v->max_inuse_bytes > s->peak) {
		s->peak = v->max_inuse_bytes;
		s->peak_t = t;
	}
	s->last = *v;
	s->last_t = t;
	if (t > d->end_t)
		d->end_t = t;
	if (last && last->ticks < s->span) {
		last->t_ms = t_ms;
		last->ticks++;
		last->inuse = v->inuse_bytes;
		if (v->max_inuse_bytes > last->max)
			last->max = v->max_inuse_bytes;
		return 0;
	}
	if (s->n == MT_TL_MAX_POINTS) {
		halve(s);
		return mt_tl_point_add(d, idx, t, v) ? -ENOMEM : 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct mt_tl_point *p = realloc(s->pts, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pts = p;
		s->cap = cap;
	}
	s->pts[s->n++] = (struct mt_tl_point){ t_ms, 1, v->inuse_bytes,
					       v->max_inuse_bytes };
	return 0;
}

/* Series by peak, the largest first (then by pid, then as sampled). */
static int cmp_peak(const void *a, const void *b)
{
	const struct mt_tl_series *x = *(const struct mt_tl_series *const *)a;
	const struct mt_tl_series *y = *(const struct mt_tl_series *const *)b;

	if (x->peak != y->peak)
		return x->peak > y->peak ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* S's cells of CELL_S seconds each, over a run of END seconds. */
static void cells_of(const struct mt_tl_series *s, size_t ncells,
		     double cell_s, double end, uint64_t *cells)
{
	double until = s->gone ? s->last_t : end;
	uint64_t carry = 0;
	size_t p = 0;

	for (size_t c = 0; c < ncells; c++) {
		double lo = (double)c * cell_s, hi = lo + cell_s;
		uint64_t v = carry;

		/* The points that end in (lo, hi]; the last cell takes the
		 * rest. */
		while (p < s->n && ((double)s->pts[p].t_ms / 1000.0 <= hi + 1e-9 ||
				    c + 1 == ncells)) {
			if (s->pts[p].max > v)
				v = s->pts[p].max;
			carry = s->pts[p].inuse;
			p++;
		}
		cells[c] = hi <= s->first_t + 1e-9 || lo >= until - 1e-9 ?
			   MT_TL_CELL_NONE : v;
	}
}

void mt_tl_summarize(const struct mt_tl_data *d, double duration,
		     struct mt_tl_summary *out)
{
	const struct mt_tl_series **by = d->n ? malloc(d->n * sizeof(*by)) : NULL;
	double end = duration > d->end_t ? duration : d->end_t;
	double intervals = d->interval > 0 ? ceil(end / d->interval - 1e-6) : 1;

	memset(out, 0, sizeof(*out));
	out->nprocs = d->n;
	out->ncells = intervals < 1 ? 1 : intervals > MT_TL_CELLS ? MT_TL_CELLS
				  : (size_t)intervals;
	out->cell_s = end > 0 ? end / (double)out->ncells : d->interval;
	if (!by) {
		/* Out of memory: the first processes, unsorted. */
		out->nkept = d->n < MT_TL_SUM_PROCS ? d->n : MT_TL_SUM_PROCS;
	} else {
		for (size_t i = 0; i < d->n; i++)
			by[i] = &d->series[i];
		qsort(by, d->n, sizeof(*by), cmp_peak);
		out->nkept = d->n < MT_TL_SUM_PROCS ? d->n : MT_TL_SUM_PROCS;
	}
	for (size_t i = 0; i < out->nkept; i++) {
		const struct mt_tl_series *s = by ? by[i] : &d->series[i];
		struct mt_tl_peak *pk = &out->procs[i];

		pk->pid = s->pid;
		memcpy(pk->comm, s->comm, sizeof(pk->comm));
		pk->bytes = s->peak;
		pk->t = s->peak_t;
		cells_of(s, out->ncells, out->cell_s, end, pk->cells);
	}
	free(by);
}

void mt_tl_data_free(struct mt_tl_data *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->series[i].pts);
	free(d->series);
	d->series = NULL;
	d->n = d->cap = 0;
}
