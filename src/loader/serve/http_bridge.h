/* SPDX-License-Identifier: MIT */
/*
 * http_bridge.h: how the HTTP server's threads get what only the loop
 * thread may read (the BPF maps, the tracer's processes, the timeline).
 * A request posts a job and waits; the loop, woken through an eventfd,
 * does every job posted since it last looked, reading the maps once for
 * all the profile jobs among them, and wakes their requests.  The loop
 * thread only reads: symbolising and encoding happen in the requests'
 * threads, so a slow request or client never holds the loop up; and it
 * reads the maps for requests at most a quarter of its time
 * (MT_HTTP_READ_PAUSE), however many come.
 */
#ifndef MEMTRACE_HTTP_BRIDGE_H
#define MEMTRACE_HTTP_BRIDGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile.h"

struct mt_tracer;

/* Jobs waiting at once, at most (beyond: -EBUSY, a 503). */
#define MT_HTTP_MAX_JOBS 256

/* After reading the maps for requests, the loop waits this many times as
 * long before it reads them again for requests (at most a quarter of its
 * time, whatever the scrapers; the profile jobs wait meanwhile). */
#define MT_HTTP_READ_PAUSE 3.0

/*
 * A traced process and its files, copied from the tracer's: the same copy
 * as long as it does not change, so the symbols kept for it (symbolize.h)
 * stay good from one request to the next.
 */
struct mt_http_proc {
	int refs;                  /* under the bridge's lock */
	uint64_t sig;              /* of its pid, name and files */
	struct mt_process p;       /* its modules its own */
};

/* The processes of one read: an array as a raw profile has it, each
 * entry a copy's (modules shared with it). */
struct mt_http_procs {
	int refs;                  /* under the bridge's lock */
	struct mt_process *procs;
	struct mt_http_proc **copies;
	size_t n;
};

/* A raw profile shared by the requests that asked for it at one time. */
struct mt_http_raw {
	int refs;                  /* under the bridge's lock */
	struct mt_raw_profile raw; /* its procs: those of PROCS */
	struct mt_http_procs *procs;
};

enum mt_http_job_kind {
	MT_HTTP_JOB_PROFILE,   /* a snapshot of now: raw */
	MT_HTTP_JOB_METRICS,   /* the Prometheus text of now: text */
	MT_HTTP_JOB_TIMELINE,  /* the timeline chart (SVG): text */
};

/* What a job gives its request. */
struct mt_http_result {
	struct mt_http_raw *raw;   /* PROFILE: a reference */
	char *text;                /* METRICS, TIMELINE: malloc()ed */
	size_t len;
};

struct mt_http_job;

struct mt_http_bridge {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int efd;                   /* eventfd the loop watches */
	struct mt_http_job *queue;
	size_t queued;
	bool closed;               /* tracing has stopped: jobs fail */
	struct mt_tracer *tr;      /* the loop thread's */
	struct mt_http_procs *procs; /* the loop's latest copy */
	double next_read_ok;       /* CLOCK_MONOTONIC: no read before */
};

/* A condition variable whose deadlines are CLOCK_MONOTONIC's
 * (mt_loop_timespec): a change of the wall clock moves none. */
void mt_http_cond_init(pthread_cond_t *c);

/* Set B up and register its eventfd in TR's loop.  0 or -errno. */
int mt_http_bridge_init(struct mt_http_bridge *b, struct mt_tracer *tr);

/*
 * From a request's thread: post a job of KIND and wait at most TIMEOUT_S
 * seconds for it.  0 (RES is the caller's), -EBUSY (too many waiting),
 * -ESHUTDOWN (tracing stopped), -ETIMEDOUT, -ECANCELED (the request's
 * client has gone, mt_http_client_gone), or the job's error.  A job
 * given up on is released by the loop when it is done.
 */
int mt_http_bridge_call(struct mt_http_bridge *b, enum mt_http_job_kind kind,
			double timeout_s, struct mt_http_result *res);

/* Release what RES holds. */
void mt_http_result_free(struct mt_http_bridge *b, struct mt_http_result *res);

/*
 * The loop thread, tracing over: fail the jobs waiting and every later
 * one (-ESHUTDOWN).  Requests still running keep their references.
 */
void mt_http_bridge_close(struct mt_http_bridge *b);

/* Text written to a memory stream by FN(OUT, ARG) into *DATA, *LEN (the
 * caller frees it).  0 or -errno (FN's). */
int mt_http_memtext(int (*fn)(FILE *out, const void *arg), const void *arg,
		    char **data, size_t *len);

/* After the server's threads are gone. */
void mt_http_bridge_free(struct mt_http_bridge *b);

#endif
