/* SPDX-License-Identifier: MIT */
/*
 * snapshot_ring.h: the web page's snapshots (--http): the last
 * MT_RING_SNAPSHOTS profiles taken, each kept as its gzipped pprof bytes
 * (what /snapshots/N.pb.gz serves, what a diff reads back), with when and
 * why it was taken.  Safe from any thread.
 */
#ifndef MEMTRACE_SNAPSHOT_RING_H
#define MEMTRACE_SNAPSHOT_RING_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MT_RING_SNAPSHOTS 32

struct mt_ring_entry {
	unsigned seq;          /* 1, 2, ... for the run; 0: empty */
	double t;              /* trace time, seconds */
	time_t wall;           /* when, for people */
	char why[16];          /* "interval", "signal", "button" */
	uint64_t inuse_bytes;  /* the header's figures, for the list */
	uint64_t alloc_bytes;
	uint8_t *pb;           /* gzipped pprof */
	size_t len;
};

struct mt_ring {
	pthread_mutex_t lock;
	struct mt_ring_entry e[MT_RING_SNAPSHOTS];
	unsigned last_seq;
};

void mt_ring_init(struct mt_ring *r);
void mt_ring_free(struct mt_ring *r);

/* Keep E (its pb is the ring's now), the oldest dropped when full; its
 * number is returned. */
unsigned mt_ring_add(struct mt_ring *r, struct mt_ring_entry *e);

/* Snapshot SEQ into *E, its pb a copy (the caller frees it).  0, -ENOENT
 * (never taken, or dropped) or -ENOMEM. */
int mt_ring_get(struct mt_ring *r, unsigned seq, struct mt_ring_entry *e);

/* The snapshots kept, oldest first, into OUT (without their bytes: pb
 * NULL).  Returns how many. */
size_t mt_ring_list(struct mt_ring *r, struct mt_ring_entry out[MT_RING_SNAPSHOTS]);

#endif
