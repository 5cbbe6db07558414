// SPDX-License-Identifier: MIT
/* stacks.c: merging samples with the same source-level stack. */
#include "stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct order_ctx {
	const struct mt_profile *p;
	bool by_pid;
};

static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct order_ctx *c = arg;
	const struct mt_sample *x = &c->p->samples[*(const size_t *)a];
	const struct mt_sample *y = &c->p->samples[*(const size_t *)b];
	size_t n = x->nframes < y->nframes ? x->nframes : y->nframes;
	int r;

	if (c->by_pid && x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	r = n ? memcmp(x->frames, y->frames, n * sizeof(*x->frames)) : 0;
	if (r)
		return r;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	/* Equal stacks: keep sample order, so the result is deterministic. */
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

int mt_stacks_group(const struct mt_profile *p, bool by_pid,
		    struct mt_stack_group **groups, size_t *ngroups,
		    size_t **group_of)
{
	struct order_ctx ctx = { p, by_pid };
	size_t n = p->nsamples, ng = 0;
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	size_t *gof = group_of ? malloc((n ? n : 1) * sizeof(*gof)) : NULL;
	struct mt_stack_group *g = calloc(n ? n : 1, sizeof(*g));

	if (!order || !g || (group_of && !gof)) {
		free(order);
		free(gof);
		free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_stack, &ctx);
	for (size_t i = 0; i < n; i++) {
		const struct mt_sample *s = &p->samples[order[i]];
		bool same = ng > 0;

		if (same) {
			const struct mt_sample *r = &p->samples[g[ng - 1].sample];

			same = r->nframes == s->nframes &&
			       (!by_pid || r->pid == s->pid) &&
			       (!s->nframes || /* frames NULL */
				memcmp(r->frames, s->frames,
				       s->nframes * sizeof(*s->frames)) == 0);
		}
		if (!same)
			g[ng++].sample = order[i];
		for (int k = 0; k < MT_NVALUES; k++)
			g[ng - 1].v[k] += s->v[k];
		if (gof)
			gof[order[i]] = ng - 1;
	}
	free(order);
	*groups = g;
	*ngroups = ng;
	if (group_of)
		*group_of = gof;
	return 0;
}

static int cmp_value(const void *a, const void *b, void *arg)
{
	const struct mt_stack_group *x = a, *y = b;
	enum mt_value m = *(const enum mt_value *)arg;

	if (x->v[m] != y->v[m])
		return x->v[m] > y->v[m] ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

void mt_stacks_sort(struct mt_stack_group *groups, size_t n,
		    enum mt_value metric)
{
	qsort_r(groups, n, sizeof(*groups), cmp_value, &metric);
}
