/* SPDX-License-Identifier: MIT */
/*
 * detacher.h: detaching probes in a thread of its own.  Closing a uprobe
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

struct mt_detacher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t idle;      /* nothing queued, nothing being detached */
	struct mt_probes *queue;  /* handed over, not yet detached */
	size_t n, cap;
	bool running;             /* the thread was started */
	bool busy;                /* the thread is detaching a set */
	bool quit;
};

/* Start the thread.  Returns 0 or -errno (then mt_detacher_put detaches
 * at once). */
int mt_detacher_start(struct mt_detacher *d);

/* Detach P's links soon; P is left empty (mt_probes_move). */
void mt_detacher_put(struct mt_detacher *d, struct mt_probes *p);

/* Wait until every set handed over is detached. */
void mt_detacher_drain(struct mt_detacher *d);

/* Detach what is queued, and stop the thread. */
void mt_detacher_stop(struct mt_detacher *d);

#endif
