/* SPDX-License-Identifier: MIT */
/*
 * snapshot.h: a profile of one instant, read while every probe records.
 * The maps change while they are read; the BPF program journals every
 * change meanwhile (struct mt_journal in memleak.h), and the snapshot
 * puts each figure back at its instant T0: blocks allocated after T0 are
 * left out, blocks freed after T0 are put back, allocations after T0 are
 * taken out of the totals that counted them.  What the journal could not
 * hold is counted (MT_CNT_SNAPSHOT_SKEW), never guessed.
 */
#ifndef MEMTRACE_SNAPSHOT_H
#define MEMTRACE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "memleak.h"
#include "profile.h"

struct memleak_bpf;
struct ring_buffer;

struct mt_snapshot {
	struct ring_buffer *rb;
	struct mt_journal *recs;
	size_t n, cap;
	int error;               /* -ENOMEM while journaling */
	uint64_t t0_ns;
	struct memleak_bpf *skel;
	int active_fd;           /* the BPF program's "active" counters */
	uint32_t state;          /* the journal_state it was last given */
	uint64_t skew;           /* waits that timed out */
};

/* Open the journal of SKEL.  0 or -errno. */
int mt_snapshot_init(struct mt_snapshot *s, struct memleak_bpf *skel);

/*
 * Read the maps of SKEL into RAW (as mt_collect does) as of now, while the
 * probes record.  Returns 0 or -errno.
 */
int mt_snapshot_take(struct mt_snapshot *s, struct memleak_bpf *skel,
		     struct mt_raw_profile *raw);

void mt_snapshot_free(struct mt_snapshot *s);

#endif
