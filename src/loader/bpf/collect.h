/* SPDX-License-Identifier: MIT */
/* collect.h: reading the BPF maps into a raw profile. */
#ifndef MEMTRACE_COLLECT_H
#define MEMTRACE_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

struct memleak_bpf;

/*
 * Start, then stop, every BPF program recording, each at one instant
 * (enum mt_trace_state): start once every probe is attached, stop before
 * any is detached.  Probes come and go one function at a time; without
 * these, a free could be seen while its allocation was not.
 */
void mt_collect_start(struct memleak_bpf *skel);
void mt_collect_stop(struct memleak_bpf *skel);

/*
 * Fill raw->sum.counters (but the frees: mt_collect_count_frees),
 * raw->sum.sizes, raw->stacks and raw->blocks from the maps of SKEL; each stack's frees are what it
 * allocated less what its blocks hold.  raw->procs and the rest of raw->sum are left to the caller.
 * Returns 0 or -errno.
 */
int mt_collect(struct memleak_bpf *skel, struct mt_raw_profile *raw);

/* The kernel counters of SKEL (memleak.h), summed over CPUs, into
 * OUT[MT_CNT__COUNT] (the free counts as the probes saw them).  0 or
 * -errno. */
int mt_collect_counters(struct memleak_bpf *skel, uint64_t *out);

/*
 * Reading the maps while the probes record (a snapshot): blocks allocated
 * after T0_NS are left out; POLL is called now and then during the long
 * walks (to drain the journal, memleak.h); FIX is called once everything
 * is read, before the frees are derived, to bring the stacks read from
 * index S0 and the blocks from B0 back to T0.
 */
struct mt_collect_live {
	uint64_t t0_ns;
	void (*poll)(void *ctx);
	int (*fix)(void *ctx, struct mt_raw_profile *raw, size_t s0, size_t b0);
	void *ctx;
};

/* mt_collect, reading as LIVE says (NULL: as mt_collect). */
int mt_collect_live(struct memleak_bpf *skel, struct mt_raw_profile *raw,
		    struct mt_collect_live *live);

/*
 * Fill RAW's counters of frees and munmaps, which the BPF program does not
 * count: what was allocated less what RAW's blocks still hold.  Call it
 * once RAW has every block (system-wide: those of exited processes too).
 */
void mt_collect_count_frees(struct mt_raw_profile *raw);

/*
 * Move the stacks and blocks of the processes PIDS (N of them; sorted in
 * place) from the maps into RAW, appending: for processes that exited, so
 * that the maps do not fill up over a long run.  Returns 0 or -errno.
 */
int mt_collect_remove(struct memleak_bpf *skel, uint32_t *pids, size_t n,
		      struct mt_raw_profile *raw);

/* Free the frames of the stacks kept from one read to the next (they are
 * kept until then, or until the maps of another BPF object are read). */
void mt_collect_forget_stacks(void);

/*
 * FN says whether a provisional stack id (deferred unwinding, a layer
 * above) has been unwound since: its frames are then not read from the
 * stacks map.  Set by the tracer; NULL: none is.
 */
void mt_collect_set_resolved(bool (*fn)(uint64_t id));

/* Stacks copied from the kernel so far (each is read once: for -v). */
uint64_t mt_collect_stacks_read(void);

#endif
