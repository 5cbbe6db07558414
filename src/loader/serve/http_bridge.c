// SPDX-License-Identifier: MIT
/* http_bridge.c: the HTTP server's requests served by the loop thread. */
#include "http_bridge.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "deferred_unwind.h"
#include "http_admit.h"
#include "http_metrics.h"
#include "loop.h"
#include "timeline_svg.h"
#include "tracer.h"

struct mt_http_job {
	enum mt_http_job_kind kind;
	bool done;
	bool abandoned;            /* its request gave up: the loop frees it */
	int err;
	struct mt_http_result res;
	struct mt_http_job *next;
};

static void proc_put_locked(struct mt_http_proc *c)
{
	if (!c || --c->refs > 0)
		return;
	mt_process_free_mods(&c->p);
	free(c);
}

static void procs_put_locked(struct mt_http_procs *p)
{
	if (!p || --p->refs > 0)
		return;
	for (size_t i = 0; i < p->n; i++)
		proc_put_locked(p->copies[i]);
	free(p->copies);
	free(p->procs);
	free(p);
}

static void raw_put_locked(struct mt_http_raw *raw)
{
	if (!raw || --raw->refs > 0)
		return;
	raw->raw.procs = NULL;
	raw->raw.nprocs = 0;
	procs_put_locked(raw->procs);
	mt_raw_profile_free(&raw->raw);
	free(raw);
}

static void result_free_locked(struct mt_http_result *res)
{
	raw_put_locked(res->raw);
	free(res->text);
	memset(res, 0, sizeof(*res));
}

void mt_http_result_free(struct mt_http_bridge *b, struct mt_http_result *res)
{
	pthread_mutex_lock(&b->lock);
	result_free_locked(res);
	pthread_mutex_unlock(&b->lock);
}

/* ---- the loop thread ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	while (s && *s)
		h = mix(h, (unsigned char)*s++);
	return mix(h, 0);
}

/* What the symbols of P depend on: its pid, name, files and places. */
static uint64_t proc_sig(const struct mt_process *p)
{
	uint64_t h = mix(mix_str(mix(0, p->pid), p->comm), p->nmods);

	for (size_t j = 0; p->mods && j < p->nmods; j++) {
		const struct mt_module *m = &p->mods[j];

		h = mix(mix(mix(mix_str(h, m->path), m->start), m->end), m->bias);
		h = mix(mix(h, m->text_start), m->text_offset);
	}
	return h;
}

/* The copy of P in the last set, if P has not changed since; a new one
 * otherwise.  A reference in *OUT. */
static int copy_proc(struct mt_http_bridge *b, const struct mt_process *p,
		     struct mt_http_proc **out)
{
	const struct mt_http_procs *last = b->procs;
	uint64_t sig = proc_sig(p);
	struct mt_http_proc *c;
	int ret;

	for (size_t i = 0; last && i < last->n; i++) {
		c = last->copies[i];
		if (c->p.pid == p->pid && c->sig == sig) {
			pthread_mutex_lock(&b->lock);
			c->refs++;
			pthread_mutex_unlock(&b->lock);
			*out = c;
			return 0;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = mt_process_copy(&c->p, p);
	if (ret) {
		free(c);
		return ret;
	}
	c->sig = sig;
	c->refs = 1;
	*out = c;
	return 0;
}

/*
 * The copy of the tracer's processes RAW has, a reference in *OUT: each
 * process the same copy as last time unless it changed, so its symbols
 * (kept by the module addresses, symbolize.h) are found again even
 * system-wide, where processes come and go between two requests.
 */
static int copy_procs(struct mt_http_bridge *b,
		      const struct mt_raw_profile *raw,
		      struct mt_http_procs **out)
{
	struct mt_http_procs *set = calloc(1, sizeof(*set));
	size_t n = raw->nprocs;
	int ret = 0;

	if (!set)
		return -ENOMEM;
	set->refs = 2; /* the bridge's (the last set) and *OUT's */
	set->procs = calloc(n + 1, sizeof(*set->procs));
	set->copies = calloc(n + 1, sizeof(*set->copies));
	if (!set->procs || !set->copies)
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < n; i++) {
		ret = copy_proc(b, &raw->procs[i], &set->copies[i]);
		if (!ret) {
			set->procs[i] = set->copies[i]->p; /* its modules shared */
			set->n = i + 1;
		}
	}
	pthread_mutex_lock(&b->lock);
	if (ret) {
		set->refs = 1;
		procs_put_locked(set);
	} else {
		procs_put_locked(b->procs);
		b->procs = set;
	}
	pthread_mutex_unlock(&b->lock);
	if (ret)
		return ret;
	*out = set;
	return 0;
}

/* A snapshot of now, with a copy of the processes (the tracer's change). */
static int read_profile(struct mt_http_bridge *b, struct mt_http_raw **out)
{
	struct mt_http_raw *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	ret = mt_tracer_collect(b->tr, &r->raw);
	if (!ret)
		ret = copy_procs(b, &r->raw, &r->procs);
	/* The tracer's no longer: the copy's, or none. */
	r->raw.procs = r->procs ? r->procs->procs : NULL;
	r->raw.nprocs = r->procs ? r->procs->n : 0;
	if (ret) {
		r->raw.procs = NULL;
		mt_raw_profile_free(&r->raw);
		free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int mt_http_memtext(int (*fn)(FILE *out, const void *arg), const void *arg,
		    char **data, size_t *len)
{
	FILE *f;
	int ret;

	*data = NULL;
	*len = 0;
	f = open_memstream(data, len);
	if (!f)
		return -errno;
	ret = fn(f, arg);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret) {
		free(*data);
		*data = NULL;
		*len = 0;
	}
	return ret;
}

static int metrics(FILE *f, const void *arg)
{
	const struct mt_tracer *tr = arg;
	struct mt_http_metrics m = { .data = tr->tl.on ? &tr->tl.data : NULL,
				     .elapsed_s = mt_loop_now() - tr->s.start,
				     .system = tr->kind == MT_TRACER_SYSTEM,
				     .images = tr->images.nprocs,
				     .files = tr->images.nfiles,
				     .scan_finds = tr->sys.scan_finds };
	int ret = mt_collect_counters(tr->skel, m.counters);

	/* And the stacks unwound from copies cut short, by reason. */
	if (!ret)
		mt_deferred_unwind_counters(m.counters);

	return ret ? ret : mt_http_write_metrics(f, &m);
}

static int timeline(FILE *f, const void *arg)
{
	const struct mt_tracer *tr = arg;

	return mt_tl_write_svg(f, &tr->tl.data);
}

/* Do JOBS (a list the loop took): one map read for every profile job. */
static void run_jobs(struct mt_http_bridge *b, struct mt_http_job *jobs)
{
	struct mt_http_raw *raw = NULL;
	int raw_err = 0;
	bool raw_read = false;

	for (struct mt_http_job *j = jobs; j; j = j->next) {
		switch (j->kind) {
		case MT_HTTP_JOB_PROFILE:
			if (!raw_read) {
				double t0 = mt_loop_now(), t1;

				raw_err = read_profile(b, &raw);
				raw_read = true;
				/* The loop reads maps at most a quarter of the
				 * time, whatever the requests. */
				t1 = mt_loop_now();
				b->next_read_ok = t1 + MT_HTTP_READ_PAUSE * (t1 - t0);
			}
			j->err = raw_err;
			if (!raw_err) {
				pthread_mutex_lock(&b->lock);
				raw->refs++;
				pthread_mutex_unlock(&b->lock);
				j->res.raw = raw;
			}
			break;
		case MT_HTTP_JOB_METRICS:
			j->err = mt_http_memtext(metrics, b->tr, &j->res.text,
						 &j->res.len);
			break;
		case MT_HTTP_JOB_TIMELINE:
			j->err = b->tr->tl.on
					 ? mt_http_memtext(timeline, b->tr,
							   &j->res.text, &j->res.len)
					 : -ENODATA;
			break;
		}
	}
}

/* Mark JOBS done (freeing those given up on) and wake their requests. */
static void finish_jobs(struct mt_http_bridge *b, struct mt_http_job *jobs)
{
	pthread_mutex_lock(&b->lock);
	while (jobs) {
		struct mt_http_job *next = jobs->next;

		if (jobs->abandoned) {
			result_free_locked(&jobs->res);
			free(jobs);
		} else {
			jobs->done = true;
		}
		jobs = next;
	}
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* Do the jobs waiting; profile jobs only when a read is allowed (the
 * others wait in the queue for the timer). */
static void serve(struct mt_http_bridge *b)
{
	bool reads_ok = mt_loop_now() >= b->next_read_ok;
	struct mt_http_job *jobs = NULL, **tail = &jobs, **p;

	pthread_mutex_lock(&b->lock);
	for (p = &b->queue; *p;) {
		struct mt_http_job *j = *p;

		if (j->kind == MT_HTTP_JOB_PROFILE && !reads_ok) {
			p = &j->next;
			continue;
		}
		*p = j->next;
		b->queued--;
		j->next = NULL;
		*tail = j;
		tail = &j->next;
	}
	pthread_mutex_unlock(&b->lock);
	if (!jobs)
		return;
	run_jobs(b, jobs);
	finish_jobs(b, jobs);
}

static void on_jobs(void *ctx, int fd, short revents)
{
	uint64_t n;

	(void)revents;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	serve(ctx);
}

static void on_timer(void *ctx, double now)
{
	(void)now;
	serve(ctx);
}

void mt_http_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(c, &attr);
	pthread_condattr_destroy(&attr);
}

int mt_http_bridge_init(struct mt_http_bridge *b, struct mt_tracer *tr)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->tr = tr;
	b->efd = -1;
	pthread_mutex_init(&b->lock, NULL);
	mt_http_cond_init(&b->cond);
	b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->efd < 0)
		return -errno;
	ret = mt_loop_add_fd(&tr->s.loop, b->efd, on_jobs, b);
	if (!ret) /* the profile jobs held back by the pause */
		ret = mt_loop_add_timer(&tr->s.loop, 0.05, 0, on_timer, b);
	return ret;
}

void mt_http_bridge_close(struct mt_http_bridge *b)
{
	struct mt_http_job *jobs;

	pthread_mutex_lock(&b->lock);
	b->closed = true;
	jobs = b->queue;
	b->queue = NULL;
	b->queued = 0;
	for (struct mt_http_job *j = jobs; j; j = j->next)
		j->err = -ESHUTDOWN;
	pthread_mutex_unlock(&b->lock);
	finish_jobs(b, jobs);
}

void mt_http_bridge_free(struct mt_http_bridge *b)
{
	pthread_mutex_lock(&b->lock);
	procs_put_locked(b->procs);
	b->procs = NULL;
	pthread_mutex_unlock(&b->lock);
	if (b->efd >= 0)
		close(b->efd);
	b->efd = -1;
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
}

/* ---- the requests' threads ---- */

/* Take J out of the queue, if it is still there. */
static bool unqueue(struct mt_http_bridge *b, struct mt_http_job *j)
{
	for (struct mt_http_job **p = &b->queue; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			b->queued--;
			return true;
		}
	return false;
}

int mt_http_bridge_call(struct mt_http_bridge *b, enum mt_http_job_kind kind,
			double timeout_s, struct mt_http_result *res)
{
	struct timespec until = mt_loop_timespec(mt_loop_now() + timeout_s);
	struct mt_http_job *j = calloc(1, sizeof(*j));
	uint64_t one = 1;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (!j)
		return -ENOMEM;
	j->kind = kind;
	pthread_mutex_lock(&b->lock);
	if (b->closed || b->queued >= MT_HTTP_MAX_JOBS) {
		ret = b->closed ? -ESHUTDOWN : -EBUSY;
		pthread_mutex_unlock(&b->lock);
		free(j);
		return ret;
	}
	/* At the end: the jobs are done in the order they came. */
	{
		struct mt_http_job **p = &b->queue;

		while (*p)
			p = &(*p)->next;
		*p = j;
	}
	b->queued++;
	if (write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		ret = -errno;
	while (!ret && !j->done) {
		if (mt_http_client_gone()) {
			ret = -ECANCELED;
			break;
		}
		ret = -pthread_cond_timedwait(&b->cond, &b->lock, &until);
	}
	if (j->done) {
		ret = j->err;
		*res = j->res;
		free(j);
	} else if (unqueue(b, j)) {
		free(j);
	} else {
		j->abandoned = true; /* the loop has it: it frees it */
	}
	pthread_mutex_unlock(&b->lock);
	return ret;
}
