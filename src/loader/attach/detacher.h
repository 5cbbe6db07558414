/* SPDX-License-Identifier: MIT */
/*
 * detacher.h: detaching probes in threads of their own.  Closing a uprobe
 * link waits for the kernel's grace periods (tens of milliseconds per
 * link); the event loop hands over the probes of a process that exited,
 * and the links of the files an exec left, and goes on, so that the next
 * fork or exec is not kept waiting.
 */
#ifndef MEMTRACE_DETACHER_H
#define MEMTRACE_DETACHER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "probes.h"

/* Closing links waits for grace periods, which links closed at once
 * share: a few threads, each detaching a set. */
#define MT_DETACHER_THREADS 8

struct mt_detacher {
	pthread_t threads[MT_DETACHER_THREADS];
	size_t nthreads;          /* started */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t idle;      /* nothing queued, nothing being detached */
	struct mt_probes *queue;  /* handed over, not yet detached */
	size_t n, cap;
	bool running;             /* the thread was started */
	size_t busy;              /* threads detaching a set */
	bool quit;
};

/* Start the threads.  Returns 0 or -errno (none started: then
 * mt_detacher_put detaches at once). */
int mt_detacher_start(struct mt_detacher *d);

/* Detach P's links soon; P is left empty (mt_probes_move). */
void mt_detacher_put(struct mt_detacher *d, struct mt_probes *p);

/* Wait until every set handed over is detached. */
void mt_detacher_drain(struct mt_detacher *d);

/* Detach what is queued, and stop the threads. */
void mt_detacher_stop(struct mt_detacher *d);

#endif
