// SPDX-License-Identifier: MIT
/* at_moment.c: the profile of one moment (--at peak, --at TIME). */
#include "at_moment.h"

#include <math.h>
#include <string.h>

#include "loop.h"
#include "tracer.h"

void mt_keeper_init(struct mt_keeper *k, const struct mt_options *o)
{
	memset(k, 0, sizeof(*k));
	k->on = o->at_peak || o->at_s >= 0;
	k->peak = o->at_peak;
	k->at_s = o->at_s;
	/* --at TIME: the highest sample of the interval (-i) that holds
	 * TIME; without -i, the first sample from TIME on. */
	if (o->interval > 0) {
		k->lo = floor(o->at_s / o->interval) * o->interval;
		k->hi = k->lo + o->interval;
	} else {
		k->lo = o->at_s;
		k->hi = o->at_s + o->timeline_interval;
	}
}

static void drop(struct mt_keeper *k)
{
	k->raw.procs = NULL;
	k->raw.nprocs = 0;
	mt_raw_profile_free(&k->raw);
	memset(&k->raw, 0, sizeof(k->raw));
	k->have = false;
}

void mt_keeper_sample(struct mt_keeper *k, struct mt_tracer *tr, double t,
		      uint64_t inuse)
{
	struct mt_raw_profile raw = { 0 };
	double start = mt_loop_now();

	if (!k->on || start < k->next_ok)
		return;
	if (k->peak ? k->have && inuse <= k->inuse
		    : t < k->lo || t >= k->hi || (k->have && inuse <= k->inuse))
		return;
	k->error = mt_tracer_collect(tr, &raw);
	k->next_ok = mt_loop_now() + 4 * (mt_loop_now() - start);
	if (k->error) {
		raw.procs = NULL;
		mt_raw_profile_free(&raw);
		return;
	}
	drop(k);
	k->raw = raw;
	k->have = true;
	k->inuse = inuse;
	k->t = t;
}

bool mt_keeper_take(struct mt_keeper *k, struct mt_raw_profile *final)
{
	const uint64_t *c = final->sum.counters;
	uint64_t final_inuse = c[MT_CNT_ALLOC_BYTES] - c[MT_CNT_FREE_BYTES];
	struct mt_process *procs = final->procs;
	size_t nprocs = final->nprocs;
	struct mt_summary sum;

	if (!k->on)
		return false;
	if (!k->have || (k->peak && final_inuse >= k->inuse)) {
		/* The end is the moment (as high as any sample, or --at
		 * a time the trace did not reach). */
		final->sum.at = k->peak ? MT_AT_PEAK : MT_AT_TIME;
		final->sum.at_s = final->sum.duration_s;
		return false;
	}
	/* The header's facts of the whole run, the figures of the moment. */
	sum = final->sum;
	final->procs = NULL;
	final->nprocs = 0;
	mt_raw_profile_free(final);
	*final = k->raw;
	memcpy(final->sum.target, sum.target, sizeof(sum.target));
	memcpy(final->sum.allocator, sum.allocator, sizeof(sum.allocator));
	final->sum.probes = sum.probes;
	final->sum.probes_stepped = sum.probes_stepped;
	/* The timeline's peaks and sparklines are the whole run's. */
	final->sum.timeline = sum.timeline;
	final->sum.missing = (final->sum.missing & ~(unsigned)MT_FACT_TIMELINE) |
			     (sum.missing & MT_FACT_TIMELINE);
	final->procs = procs;
	final->nprocs = nprocs;
	final->sum.at = k->peak ? MT_AT_PEAK : MT_AT_TIME;
	final->sum.at_s = k->t;
	memset(&k->raw, 0, sizeof(k->raw));
	k->have = false;
	return true;
}

void mt_keeper_init_peak(struct mt_keeper *k)
{
	memset(k, 0, sizeof(*k));
	k->on = k->peak = true;
	k->at_s = -1;
}

bool mt_keeper_take_kept(struct mt_keeper *k, struct mt_raw_profile *raw,
			 struct mt_process *procs, size_t nprocs)
{
	double next_ok = k->next_ok;

	if (!k->have)
		return false;
	*raw = k->raw;
	raw->procs = procs;
	raw->nprocs = nprocs;
	/* The interval's highest, not the trace's peak: a moment. */
	raw->sum.at = MT_AT_TIME;
	raw->sum.at_s = k->t;
	memset(&k->raw, 0, sizeof(k->raw));
	mt_keeper_init_peak(k);
	k->next_ok = next_ok;
	return true;
}

void mt_keeper_free(struct mt_keeper *k)
{
	drop(k);
}
