// SPDX-License-Identifier: MIT
/* http_profile.c: the profiles and snapshots of --http (http_profile.h). */
#include "http_profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delta.h"
#include "filter.h"
#include "loop.h"
#include "pprof_write.h"
#include "symbolize.h"
#include "view.h"

/* Does process PID named COMM pass the request's Q and --comm? */
static bool wanted(const struct mt_http *h, const struct mt_http_query *q,
		   uint32_t pid, const char *comm)
{
	return (!q->pid || pid == q->pid) &&
	       (!q->comm[0] || mt_comm_match(q->comm, comm)) &&
	       (!h->o->comm || mt_comm_match(h->o->comm, comm));
}

static void view_free(struct mt_raw_profile *view)
{
	free(view->procs);
	free(view->stacks);
	memset(view, 0, sizeof(*view));
}

/*
 * RAW narrowed to the processes wanted, before anything is symbolised
 * (system-wide, the others would cost their symbols for nothing): VIEW's
 * arrays are its own, what they hold (stacks' addresses, modules) RAW's;
 * free it with view_free.  Without a filter VIEW is RAW's copy as is.
 */
static int raw_view(const struct mt_http *h, const struct mt_http_query *q,
		    const struct mt_raw_profile *raw, struct mt_raw_profile *view)
{
	bool by_comm = q->comm[0] || h->o->comm;
	size_t n = 0;

	*view = *raw;
	view->procs = calloc(raw->nprocs + 1, sizeof(*view->procs));
	view->stacks = calloc(raw->nstacks + 1, sizeof(*view->stacks));
	view->blocks = NULL;  /* no request's output lists blocks */
	view->nblocks = 0;
	if (!view->procs || !view->stacks) {
		view_free(view);
		return -ENOMEM;
	}
	for (size_t i = 0; i < raw->nprocs; i++)
		if (wanted(h, q, raw->procs[i].pid, raw->procs[i].comm))
			view->procs[n++] = raw->procs[i];
	view->nprocs = n;
	n = 0;
	for (size_t i = 0; i < raw->nstacks; i++) {
		uint32_t pid = raw->stacks[i].pid;
		/* A name is looked up only when one is asked for. */
		const char *comm = by_comm ? mt_procs_comm(raw->procs,
							   raw->nprocs, pid)
					   : "";

		if (wanted(h, q, pid, comm))
			view->stacks[n++] = raw->stacks[i];
	}
	view->nstacks = n;
	/* A request's filter that keeps no process is said, not zeros. */
	if ((q->pid || q->comm[0]) && !view->nprocs) {
		view_free(view);
		return -ESRCH;
	}
	return 0;
}

/* RAW symbolised into PROF, with the symbols kept between requests (the
 * cache takes its own lock). */
static int symbolise(struct mt_http *h, const struct mt_raw_profile *raw,
		     struct mt_profile *prof)
{
	return mt_symbolize_cached(raw, prof, h->symbols);
}

int mt_http_profile(struct mt_http *h, const struct mt_http_query *q,
		    struct mt_profile *prof)
{
	struct mt_http_result before = { 0 }, now = { 0 };
	struct mt_raw_profile view = { 0 };
	struct mt_delta delta = { 0 };
	double t0, t1;
	int ret = 0;

	memset(prof, 0, sizeof(*prof));
	if (q->seconds) {
		ret = mt_http_bridge_call(&h->bridge, MT_HTTP_JOB_PROFILE,
					  MT_HTTP_WAIT_S, &before);
		if (!ret)
			ret = raw_view(h, q, &before.raw->raw, &view);
		if (!ret)
			ret = mt_delta_apply(&delta, &view, NULL);
		view_free(&view);
		mt_http_result_free(&h->bridge, &before);
		if (!ret && !mt_http_sleep(h, q->seconds))
			ret = mt_http_client_gone() ? -ECANCELED : -ESHUTDOWN;
	}
	t0 = mt_loop_now();
	if (!ret)
		ret = mt_http_bridge_call(&h->bridge, MT_HTTP_JOB_PROFILE,
					  MT_HTTP_WAIT_S, &now);
	t1 = mt_loop_now();
	if (!ret)
		ret = raw_view(h, q, &now.raw->raw, &view);
	if (!ret)
		ret = symbolise(h, &view, prof);
	if (!ret && h->o->verbose)
		fprintf(stderr, "memtrace: http: %zu stacks of %zu processes read in %.1f ms (waiting included), symbolised in %.1f ms\n",
			view.nstacks, view.nprocs, (t1 - t0) * 1e3,
			(mt_loop_now() - t1) * 1e3);
	if (!ret && q->seconds)
		ret = mt_delta_apply(&delta, &view, prof);
	view_free(&view);
	mt_http_result_free(&h->bridge, &now);
	mt_delta_free(&delta);
	/* The header's totals, of the processes kept. */
	if (!ret && h->o->comm)
		ret = mt_profile_filter(prof, 0, h->o->comm);
	if (!ret && (q->pid || q->comm[0]))
		ret = mt_profile_filter(prof, q->pid,
					q->comm[0] ? q->comm : NULL);
	if (!ret) /* pprof's views (?focus= ...), as report's options */
		ret = mt_profile_view(prof, &q->view);
	if (ret)
		mt_profile_free(prof);
	return ret;
}

int mt_http_take_snapshot(struct mt_http *h, const char *why, unsigned *seq)
{
	struct mt_http_query q = { .metric = MT_INUSE_SPACE };
	struct mt_ring_entry e = { 0 };
	struct mt_profile prof;
	const uint64_t *c;
	int ret = mt_http_profile(h, &q, &prof);

	if (ret)
		return ret;
	ret = mt_pprof_encode(&prof, NULL, &e.pb, &e.len);
	if (!ret) {
		c = prof.sum.counters;
		e.t = prof.sum.duration_s;
		e.wall = time(NULL);
		snprintf(e.why, sizeof(e.why), "%s", why);
		e.alloc_bytes = c[MT_CNT_ALLOC_BYTES];
		e.inuse_bytes = c[MT_CNT_ALLOC_BYTES] - c[MT_CNT_FREE_BYTES];
		*seq = mt_ring_add(&h->ring, &e);
	}
	mt_profile_free(&prof);
	return ret;
}

enum MHD_Result mt_http_profile_fail(struct MHD_Connection *c,
				     const struct mt_http_query *q, int err)
{
	if (err != -ESRCH)
		return mt_http_fail(c, err);
	bool glob = strpbrk(q->comm, "*?[") != NULL;

	if (q->pid && q->comm[0])
		return mt_http_text(c, MHD_HTTP_NOT_FOUND,
				    "no traced process has pid %u and %s %s\n",
				    (unsigned)q->pid,
				    glob ? "a name matching" : "name", q->comm);
	if (q->pid)
		return mt_http_text(c, MHD_HTTP_NOT_FOUND,
				    "no traced process has pid %u\n",
				    (unsigned)q->pid);
	return mt_http_text(c, MHD_HTTP_NOT_FOUND, "no traced process %s %s\n",
			    glob ? "has a name matching" : "is named", q->comm);
}

bool mt_http_sleep(struct mt_http *h, double s)
{
	struct timespec until = mt_loop_timespec(mt_loop_now() + s);
	bool stopping;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping && !mt_http_client_gone() &&
	       pthread_cond_timedwait(&h->cond, &h->lock, &until) != ETIMEDOUT)
		;
	stopping = h->stopping || mt_http_client_gone();
	pthread_mutex_unlock(&h->lock);
	return !stopping;
}

/* The snapshot thread. */
static void *snapper(void *arg)
{
	struct mt_http *h = arg;
	double every = h->o->snapshot_interval;
	double next = every > 0 ? mt_loop_now() + every : INFINITY;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		const char *why = NULL;
		unsigned seq;
		int err;

		if (h->signal_wanted) {
			h->signal_wanted--;
			why = "signal";
		} else if (mt_loop_now() >= next) {
			why = "interval";
			next = mt_loop_now() + every;
		} else {
			struct timespec until = mt_loop_timespec(next);

			if (isinf(next))
				pthread_cond_wait(&h->cond, &h->lock);
			else
				pthread_cond_timedwait(&h->cond, &h->lock, &until);
			continue;
		}
		pthread_mutex_unlock(&h->lock);
		err = mt_http_take_snapshot(h, why, &seq);
		if (err && err != -ESHUTDOWN)
			fprintf(stderr, "memtrace: http: snapshot (%s) failed: %s\n",
				why, strerror(-err));
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

int mt_http_snapper_start(struct mt_http *h)
{
	int err;

	pthread_mutex_init(&h->lock, NULL);
	mt_http_cond_init(&h->cond);
	err = pthread_create(&h->snapper, NULL, snapper, h);
	if (err)
		return -err;
	h->snapper_on = true;
	return 0;
}

void mt_http_snapshot_signal(struct mt_http *h)
{
	pthread_mutex_lock(&h->lock);
	if (h->signal_wanted < 4) /* a burst of signals: a few snapshots */
		h->signal_wanted++;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

void mt_http_snapper_stop(struct mt_http *h)
{
	if (!h->snapper_on)
		return;
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->snapper, NULL);
	h->snapper_on = false;
}
