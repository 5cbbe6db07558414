// SPDX-License-Identifier: MIT
/* snapshot_ring.c: the last snapshots of a run (snapshot_ring.h). */
#include "snapshot_ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mt_ring_init(struct mt_ring *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
}

void mt_ring_free(struct mt_ring *r)
{
	for (size_t i = 0; i < MT_RING_SNAPSHOTS; i++)
		free(r->e[i].pb);
	pthread_mutex_destroy(&r->lock);
	memset(r->e, 0, sizeof(r->e));
}

unsigned mt_ring_add(struct mt_ring *r, struct mt_ring_entry *e)
{
	struct mt_ring_entry *slot;
	unsigned seq;

	pthread_mutex_lock(&r->lock);
	seq = ++r->last_seq;
	slot = &r->e[(seq - 1) % MT_RING_SNAPSHOTS];
	free(slot->pb);
	*slot = *e;
	slot->seq = seq;
	pthread_mutex_unlock(&r->lock);
	e->pb = NULL;
	e->seq = seq;
	return seq;
}

int mt_ring_get(struct mt_ring *r, unsigned seq, struct mt_ring_entry *e)
{
	const struct mt_ring_entry *slot;
	int ret = 0;

	memset(e, 0, sizeof(*e));
	if (seq == 0)
		return -ENOENT;
	pthread_mutex_lock(&r->lock);
	slot = &r->e[(seq - 1) % MT_RING_SNAPSHOTS];
	if (slot->seq != seq) {
		ret = -ENOENT;
		goto cleanup;
	}
	*e = *slot;
	e->pb = malloc(slot->len ? slot->len : 1);
	if (!e->pb) {
		ret = -ENOMEM;
		goto cleanup;
	}
	memcpy(e->pb, slot->pb, slot->len);
cleanup:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

size_t mt_ring_list(struct mt_ring *r, struct mt_ring_entry out[MT_RING_SNAPSHOTS])
{
	size_t n = 0;
	unsigned first;

	pthread_mutex_lock(&r->lock);
	first = r->last_seq > MT_RING_SNAPSHOTS ? r->last_seq - MT_RING_SNAPSHOTS + 1 : 1;
	for (unsigned seq = first; seq && seq <= r->last_seq; seq++) {
		const struct mt_ring_entry *slot = &r->e[(seq - 1) % MT_RING_SNAPSHOTS];

		if (slot->seq != seq)
			continue;
		out[n] = *slot;
		out[n].pb = NULL;
		n++;
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}
