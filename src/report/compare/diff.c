/* SPDX-License-Identifier: MIT */
/* diff.c: one profile less another (see diff.h). */
#include "diff.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"
#include "itab.h"

struct differ {
	struct mt_profile *p;
	const struct mt_profile *base;
	struct mt_itab frames;   /* over p->frames */
	struct mt_itab samples;  /* over p->samples, by frames */
	uint32_t *remap;         /* base frame index -> p's */
	size_t framecap;
};

struct stack_key {
	const struct mt_sample *samples;
	const uint32_t *frames;
	size_t n;
};

static bool stack_eq(const void *ctx, uint32_t idx)
{
	const struct stack_key *k = ctx;
	const struct mt_sample *s = &k->samples[idx];

	return s->nframes == k->n &&
	       (!k->n || memcmp(s->frames, k->frames, k->n * sizeof(*k->frames)) == 0);
}

static uint64_t stack_hash(const uint32_t *frames, size_t n)
{
	return mt_hash_bytes(MT_HASH_SEED, frames, n * sizeof(*frames));
}

static char *dup_or_null(const char *s, bool *ok)
{
	char *d = s ? strdup(s) : NULL;

	*ok = *ok && (!s || d);
	return d;
}

/* p's index of a frame equal to base frame I, added if p has none. */
static int map_frame(struct differ *d, size_t i)
{
	const struct mt_frame *bf = &d->base->frames[i];
	struct mt_frame_key k = { d->p->frames, bf };
	uint64_t h = mt_frame_hash(bf);
	struct mt_frame f;
	uint32_t idx;
	bool ok = true;

	if (mt_itab_find(&d->frames, h, mt_frame_key_eq, &k, &idx)) {
		d->remap[i] = idx;
		return 0;
	}
	if (d->p->nframes == d->framecap) {
		size_t cap = d->framecap ? d->framecap * 2 : 64;
		struct mt_frame *v = reallocarray(d->p->frames, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->p->frames = v;
		d->framecap = cap;
	}
	f = *bf;
	f.function = dup_or_null(bf->function, &ok);
	f.file = dup_or_null(bf->file, &ok);
	f.decl_file = dup_or_null(bf->decl_file, &ok);
	f.module = dup_or_null(bf->module, &ok);
	if (!ok || d->p->nframes >= UINT32_MAX - 1) {
		mt_frame_clear(&f);
		return -ENOMEM;
	}
	idx = (uint32_t)d->p->nframes;
	if (mt_itab_add(&d->frames, h, idx)) {
		mt_frame_clear(&f);
		return -ENOMEM;
	}
	d->p->frames[d->p->nframes++] = f;
	d->remap[i] = idx;
	return 0;
}

static int index_p(struct differ *d)
{
	const struct mt_profile *p = d->p;

	d->framecap = p->nframes;
	for (size_t i = 0; i < p->nframes; i++) {
		if (mt_itab_add(&d->frames, mt_frame_hash(&p->frames[i]), (uint32_t)i))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[i];
		struct stack_key k = { p->samples, s->frames, s->nframes };
		uint64_t h = stack_hash(s->frames, s->nframes);
		uint32_t idx;

		/* The first of equal stacks takes the base's share. */
		if (mt_itab_find(&d->samples, h, stack_eq, &k, &idx))
			continue;
		if (mt_itab_add(&d->samples, h, (uint32_t)i))
			return -ENOMEM;
	}
	return 0;
}

/* BASE's sample S, its frames mapped: subtracted from P's, or added negated. */
static int subtract_sample(struct differ *d, const struct mt_sample *s,
			   size_t *samplecap)
{
	struct mt_profile *p = d->p;
	uint32_t *frames = calloc(s->nframes ? s->nframes : 1, sizeof(*frames));
	struct stack_key k = { p->samples, frames, s->nframes };
	struct mt_sample *o;
	uint64_t h;
	uint32_t idx;

	if (!frames)
		return -ENOMEM;
	for (size_t j = 0; j < s->nframes; j++)
		frames[j] = d->remap[s->frames[j]];
	h = stack_hash(frames, s->nframes);
	if (mt_itab_find(&d->samples, h, stack_eq, &k, &idx)) {
		for (int v = 0; v < MT_NVALUES; v++)
			p->samples[idx].v[v] -= s->v[v];
		free(frames);
		return 0;
	}
	if (p->nsamples == *samplecap) {
		size_t cap = *samplecap ? *samplecap * 2 : 64;
		struct mt_sample *v = reallocarray(p->samples, cap, sizeof(*v));

		if (!v) {
			free(frames);
			return -ENOMEM;
		}
		p->samples = v;
		*samplecap = cap;
	}
	if (mt_itab_add(&d->samples, h, (uint32_t)p->nsamples)) {
		free(frames);
		return -ENOMEM;
	}
	o = &p->samples[p->nsamples++];
	*o = (struct mt_sample){ .pid = s->pid, .nframes = s->nframes, .frames = frames };
	for (int v = 0; v < MT_NVALUES; v++)
		o->v[v] = -s->v[v];
	return 0;
}

static void subtract_summary(struct mt_summary *sum, const struct mt_summary *b,
			     const char *base_name)
{
	char target[sizeof(sum->target)];

	/* Two moments of one trace (its target, BASE the earlier): the
	 * difference is of the time between them. */
	if (!strcmp(sum->target, b->target) &&
	    !((sum->missing | b->missing) & MT_FACT_DURATION) &&
	    b->duration_s <= sum->duration_s)
		sum->duration_s -= b->duration_s;
	/* Unsigned: a negative difference wraps, and prints as negative. */
	for (int i = 0; i < MT_CNT__COUNT; i++)
		sum->counters[i] -= b->counters[i];
	for (int c = 0; c < MT_NCATEGORIES; c++) {
		for (int k = 0; k < MT_SIZE_CLASSES; k++) {
			sum->sizes[c][k].objects -= b->sizes[c][k].objects;
			sum->sizes[c][k].bytes -= b->sizes[c][k].bytes;
		}
	}
	sum->missing |= b->missing & ~(unsigned)MT_FACT_DURATION;
	/* The peaks of one run less another's mean nothing. */
	sum->missing |= MT_FACT_TIMELINE;
	if (strcmp(sum->allocator, b->allocator) != 0 &&
	    !(b->missing & MT_FACT_ALLOCATOR)) {
		char alloc[sizeof(sum->allocator)];

		snprintf(alloc, sizeof(alloc), "%.*s; base: %.*s",
			 (int)(sizeof(alloc) / 2), sum->allocator,
			 (int)(sizeof(alloc) / 2 - 16), b->allocator);
		memcpy(sum->allocator, alloc, sizeof(alloc));
	}
	snprintf(target, sizeof(target), "%.*s less base %.*s",
		 (int)(sizeof(target) / 2), sum->target,
		 (int)(sizeof(target) / 2 - 16), base_name);
	memcpy(sum->target, target, sizeof(target));
	sum->mmap_traced |= b->mmap_traced;
}

/* BASE's processes that P lacks, so that the report can name them. */
static int add_procs(struct mt_profile *p, const struct mt_profile *base)
{
	for (size_t i = 0; i < base->nprocs; i++) {
		const struct mt_process *b = &base->procs[i];
		struct mt_process *v;
		bool seen = false;

		for (size_t j = 0; j < p->nprocs && !seen; j++)
			seen = p->procs[j].pid == b->pid;
		if (seen)
			continue;
		v = reallocarray(p->procs, p->nprocs + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->procs = v;
		memset(&v[p->nprocs], 0, sizeof(*v));
		v[p->nprocs].pid = b->pid;
		memcpy(v[p->nprocs].comm, b->comm, sizeof(b->comm));
		p->nprocs++;
	}
	return 0;
}

int mt_profile_subtract(struct mt_profile *p, const struct mt_profile *base,
			const char *base_name)
{
	struct differ d = { .p = p, .base = base };
	size_t samplecap = p->nsamples;
	int err = index_p(&d);

	d.remap = calloc(base->nframes ? base->nframes : 1, sizeof(*d.remap));
	if (!d.remap)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < base->nframes; i++)
		err = map_frame(&d, i);
	for (size_t i = 0; !err && i < base->nsamples; i++)
		err = subtract_sample(&d, &base->samples[i], &samplecap);
	if (!err)
		err = add_procs(p, base);
	if (!err)
		subtract_summary(&p->sum, &base->sum, base_name);
	free(d.remap);
	mt_itab_free(&d.frames);
	mt_itab_free(&d.samples);
	return err;
}
