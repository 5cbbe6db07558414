/* SPDX-License-Identifier: MIT */
/* growth_series.c: what grew over several profiles (see growth_series.h). */
#include "growth_series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "filter.h"
#include "frame.h"
#include "profile_read.h"
#include "stacks.h"

/* PATH read into *P and narrowed to the processes O wants. */
static int read_one(const char *path, const struct mt_growth_opts *o,
		    struct mt_profile *p, char *err, size_t errlen)
{
	char why[512];
	int ret = mt_profile_read(path, o->lim, p, why, sizeof(why));

	if (ret) {
		snprintf(err, errlen, "%s: %s", path, why);
		return ret;
	}
	ret = mt_profile_filter(p, o->only_pid, o->comm);
	if (!ret && o->view)
		ret = mt_profile_view(p, o->view);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		mt_profile_free(p);
	}
	return ret;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Keep the processes of P that still have a sample. */
static int keep_procs(struct mt_profile *p)
{
	uint32_t *pids = calloc(p->nsamples ? p->nsamples : 1, sizeof(*pids));
	size_t n = 0;

	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++)
		pids[i] = p->samples[i].pid;
	qsort(pids, p->nsamples, sizeof(*pids), cmp_pid);
	for (size_t i = 0; i < p->nprocs; i++) {
		if (p->nsamples && bsearch(&p->procs[i].pid, pids, p->nsamples,
					   sizeof(*pids), cmp_pid))
			p->procs[n++] = p->procs[i];
	}
	p->nprocs = n;
	free(pids);
	return 0;
}

/* Keep the samples of the stacks (frames, whatever the process) whose
 * metric M grew, and their processes; no block is left (they were the
 * last profile's). */
static int keep_grown(struct mt_profile *p, enum mt_value m)
{
	struct mt_stack_group *g;
	size_t ng, n = 0, *group_of;
	int ret = mt_stacks_group(p, false, &g, &ng, &group_of);

	if (ret)
		return ret;
	for (size_t i = 0; i < p->nsamples; i++) {
		if (g[group_of[i]].v[m] > 0)
			p->samples[n++] = p->samples[i];
		else
			free(p->samples[i].frames);
	}
	p->nsamples = n;
	free(g);
	free(group_of);
	free(p->blocks);
	p->blocks = NULL;
	p->nblocks = 0;
	return keep_procs(p);
}

/* The first of G->prof's frames equal to F, or UINT32_MAX. */
static uint32_t canonical(const struct mt_growth *g, const struct mt_frame *f)
{
	struct mt_frame_key k = { g->prof.frames, f };
	uint32_t idx;

	if (!mt_itab_find(&g->frame_index, mt_frame_hash(f), mt_frame_key_eq, &k, &idx))
		return UINT32_MAX;
	return idx;
}

/* G->canon and G->frame_index: each frame by value, the first one. */
static int index_frames(struct mt_growth *g)
{
	const struct mt_profile *p = &g->prof;

	g->canon = calloc(p->nframes ? p->nframes : 1, sizeof(*g->canon));
	if (!g->canon)
		return -ENOMEM;
	for (size_t i = 0; i < p->nframes; i++) {
		uint32_t c = canonical(g, &p->frames[i]);

		if (c == UINT32_MAX) {
			c = (uint32_t)i;
			if (mt_itab_add(&g->frame_index,
					mt_frame_hash(&p->frames[i]), c))
				return -ENOMEM;
		}
		g->canon[i] = c;
	}
	return 0;
}

/* A stack of N frames, each MAP[frames[k]]: the key of G->stack_index. */
struct stack_key {
	const struct mt_growth *g;
	const uint32_t *frames;
	size_t n;
	const uint32_t *map;
};

static uint64_t stack_hash(const struct stack_key *k)
{
	uint64_t h = MT_HASH_SEED;

	for (size_t i = 0; i < k->n; i++)
		h = mt_hash_u64(h, k->map[k->frames[i]]);
	return h;
}

static bool stack_eq(const void *ctx, uint32_t idx)
{
	const struct stack_key *k = ctx;
	const struct mt_growth_stack *st = &k->g->stacks[idx];

	if (st->nframes != k->n)
		return false;
	for (size_t i = 0; i < k->n; i++) {
		if (st->frames[i] != k->map[k->frames[i]])
			return false;
	}
	return true;
}

/* The top TOP_N (<= 0: all) stacks of G->prof by G->metric, as the text
 * report ranks them, each with room for its series. */
static int pick_top(struct mt_growth *g, int top_n)
{
	const struct mt_profile *p = &g->prof;
	struct mt_stack_group *groups;
	size_t ng;
	int ret = mt_stacks_group(p, false, &groups, &ng, NULL);

	if (ret)
		return ret;
	mt_stacks_sort(groups, ng, g->metric);
	if (top_n > 0 && (size_t)top_n < ng)
		ng = (size_t)top_n;
	g->stacks = calloc(ng ? ng : 1, sizeof(*g->stacks));
	if (!g->stacks)
		ret = -ENOMEM;
	for (size_t i = 0; i < ng && !ret; i++) {
		const struct mt_sample *s = &p->samples[groups[i].sample];
		struct mt_growth_stack *st = &g->stacks[i];
		struct stack_key k = { g, s->frames, s->nframes, g->canon };

		st->frames = calloc(s->nframes ? s->nframes : 1,
				    sizeof(*st->frames));
		st->v = calloc(g->npoints, sizeof(*st->v));
		g->nstacks++;
		if (!st->frames || !st->v) {
			ret = -ENOMEM;
			break;
		}
		for (size_t j = 0; j < s->nframes; j++)
			st->frames[j] = g->canon[s->frames[j]];
		st->nframes = s->nframes;
		ret = mt_itab_add(&g->stack_index, stack_hash(&k), (uint32_t)i);
	}
	free(groups);
	return ret;
}

/* Q's values of G's top stacks, as point POINT of their series. */
static int add_point(struct mt_growth *g, const struct mt_profile *q,
		     size_t point)
{
	uint32_t *map = calloc(q->nframes ? q->nframes : 1, sizeof(*map));

	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < q->nframes; i++)
		map[i] = canonical(g, &q->frames[i]);
	for (size_t i = 0; i < q->nsamples; i++) {
		const struct mt_sample *s = &q->samples[i];
		struct stack_key k = { g, s->frames, s->nframes, map };
		bool known = true;
		uint32_t idx;

		/* A frame G does not have: not one of its stacks. */
		for (size_t j = 0; j < s->nframes && known; j++)
			known = map[s->frames[j]] != UINT32_MAX;
		if (known && mt_itab_find(&g->stack_index, stack_hash(&k),
					  stack_eq, &k, &idx))
			g->stacks[idx].v[point] += s->v[g->metric];
	}
	free(map);
	return 0;
}

int mt_growth_read(const char *const *paths, size_t n,
		   const struct mt_growth_opts *o, struct mt_growth *g,
		   char *err, size_t errlen)
{
	struct mt_profile first = { 0 };
	int ret;

	memset(g, 0, sizeof(*g));
	g->npoints = n;
	g->metric = o->metric;
	if (n < 2 || (unsigned)o->metric >= MT_NVALUES) {
		snprintf(err, errlen, "--growth needs two profiles or more");
		return -EINVAL;
	}
	ret = read_one(paths[0], o, &first, err, errlen);
	if (ret)
		goto cleanup;
	ret = read_one(paths[n - 1], o, &g->prof, err, errlen);
	if (ret)
		goto cleanup;
	ret = mt_profile_subtract(&g->prof, &first, paths[0]);
	if (!ret)
		ret = keep_grown(&g->prof, o->metric);
	if (!ret)
		ret = index_frames(g);
	if (!ret)
		ret = pick_top(g, o->top_n);
	if (!ret)
		ret = add_point(g, &first, 0);
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		goto cleanup;
	}
	/* The others, one at a time (the last read again: it was changed). */
	for (size_t i = 1; i < n && !ret; i++) {
		struct mt_profile q;

		ret = read_one(paths[i], o, &q, err, errlen);
		if (ret)
			break;
		ret = add_point(g, &q, i);
		if (ret)
			snprintf(err, errlen, "%s", strerror(-ret));
		mt_profile_free(&q);
	}
cleanup:
	mt_profile_free(&first);
	if (ret)
		mt_growth_free(g);
	return ret;
}

const int64_t *mt_growth_series(const void *ctx, const struct mt_sample *s)
{
	const struct mt_growth *g = ctx;
	struct stack_key k = { g, s->frames, s->nframes, g->canon };
	uint32_t idx;

	if (!g->canon ||
	    !mt_itab_find(&g->stack_index, stack_hash(&k), stack_eq, &k, &idx))
		return NULL;
	return g->stacks[idx].v;
}

void mt_growth_free(struct mt_growth *g)
{
	if (!g)
		return;
	mt_profile_free(&g->prof);
	free(g->canon);
	mt_itab_free(&g->frame_index);
	for (size_t i = 0; i < g->nstacks; i++) {
		free(g->stacks[i].frames);
		free(g->stacks[i].v);
	}
	free(g->stacks);
	mt_itab_free(&g->stack_index);
	memset(g, 0, sizeof(*g));
}
