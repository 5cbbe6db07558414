// SPDX-License-Identifier: MIT
/* detacher.c: threads that detach the probes handed to them. */
#include "detacher.h"

#include <stdlib.h>
#include <string.h>

static void *run(void *arg)
{
	struct mt_detacher *d = arg;
	struct mt_probes p;

	pthread_mutex_lock(&d->lock);
	while (!d->quit || d->n) {
		if (!d->n) {
			pthread_cond_wait(&d->cond, &d->lock);
			continue;
		}
		p = d->queue[--d->n];
		d->busy++;
		pthread_mutex_unlock(&d->lock);
		mt_probes_detach(&p);
		pthread_mutex_lock(&d->lock);
		d->busy--;
		if (!d->n && !d->busy)
			pthread_cond_broadcast(&d->idle);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int mt_detacher_start(struct mt_detacher *d)
{
	int ret = 0;

	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	pthread_cond_init(&d->idle, NULL);
	while (d->nthreads < MT_DETACHER_THREADS && ret == 0) {
		ret = pthread_create(&d->threads[d->nthreads], NULL, run, d);
		d->nthreads += ret == 0;
	}
	d->running = d->nthreads > 0;
	return d->running ? 0 : -ret;
}

void mt_detacher_put(struct mt_detacher *d, struct mt_probes *p)
{
	if (d->running) {
		pthread_mutex_lock(&d->lock);
		if (d->n == d->cap) {
			size_t ncap = d->cap ? 2 * d->cap : 16;
			struct mt_probes *nv = realloc(d->queue, ncap * sizeof(*nv));

			if (nv) {
				d->queue = nv;
				d->cap = ncap;
			}
		}
		if (d->n < d->cap) {
			mt_probes_move(&d->queue[d->n++], p);
			pthread_cond_signal(&d->cond);
		}
		pthread_mutex_unlock(&d->lock);
	}
	mt_probes_detach(p); /* what is left: nothing, or all of it */
}

void mt_detacher_drain(struct mt_detacher *d)
{
	if (!d->running)
		return;
	pthread_mutex_lock(&d->lock);
	while (d->n || d->busy)
		pthread_cond_wait(&d->idle, &d->lock);
	pthread_mutex_unlock(&d->lock);
}

void mt_detacher_stop(struct mt_detacher *d)
{
	if (!d->running)
		return;
	pthread_mutex_lock(&d->lock);
	d->quit = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < d->nthreads; i++)
		pthread_join(d->threads[i], NULL);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	pthread_cond_destroy(&d->idle);
	free(d->queue);
	memset(d, 0, sizeof(*d));
}
