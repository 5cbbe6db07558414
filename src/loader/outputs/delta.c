// SPDX-License-Identifier: MIT
/* delta.c: alloc values since the previous report (--delta). */
#include "delta.h"

#include <errno.h>
#include <stdlib.h>

struct find {
	const struct mt_delta_prev *prev;
	const struct mt_raw_stack *rs;
};

static bool same(const void *ctx, uint32_t idx)
{
	const struct find *f = ctx;
	const struct mt_delta_prev *p = &f->prev[idx];

	return p->pid == f->rs->pid && p->category == f->rs->category &&
	       p->stack_id == f->rs->stack_id;
}

/* V less PREV; a counter below PREV is a new one (its pid reused by a
 * process with the same stack): all of it is new. */
static int64_t less(int64_t v, uint64_t prev)
{
	return v >= 0 && (uint64_t)v >= prev ? v - (int64_t)prev : v;
}

int mt_delta_apply(struct mt_delta *d, const struct mt_raw_profile *raw,
		   struct mt_profile *prof)
{
	struct mt_delta_prev *next = calloc(raw->nstacks + 1, sizeof(*next));
	struct mt_itab index = { 0 };
	int ret = next ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < raw->nstacks &&
			   (!prof || i < prof->nsamples); i++) {
		const struct mt_raw_stack *rs = &raw->stacks[i];
		struct find f = { d->prev, rs };
		struct mt_sample *s = prof ? &prof->samples[i] : NULL;
		uint32_t idx;

		next[i] = (struct mt_delta_prev){ rs->pid, rs->category,
						  rs->stack_id, rs->alloc_bytes,
						  rs->alloc_objects };
		ret = mt_itab_add(&index, mt_raw_key_hash(rs->pid, rs->category,
						   rs->stack_id), (uint32_t)i);
		if (ret || !s || !d->nprev ||
		    !mt_itab_find(&d->index, mt_raw_key_hash(rs->pid, rs->category,
						      rs->stack_id),
				  same, &f, &idx))
			continue;
		s->v[MT_ALLOC_SPACE] = less(s->v[MT_ALLOC_SPACE],
					    d->prev[idx].alloc_bytes);
		s->v[MT_ALLOC_OBJECTS] = less(s->v[MT_ALLOC_OBJECTS],
					      d->prev[idx].alloc_objects);
	}
	if (ret) {
		free(next);
		mt_itab_free(&index);
		return ret;
	}
	if (prof) {
		prof->sum.delta_since_s = d->since_s;
		prof->sum.delta = true;
	}
	mt_delta_free(d);
	d->prev = next;
	d->nprev = raw->nstacks;
	d->index = index;
	d->since_s = raw->sum.duration_s;
	return 0;
}

void mt_delta_free(struct mt_delta *d)
{
	free(d->prev);
	mt_itab_free(&d->index);
	d->prev = NULL;
	d->nprev = 0;
}
