/* SPDX-License-Identifier: MIT */
/*
 * deferred_unwind.h: deferred unwinding, the loader's side.  A stack the
 * BPF program could not finish (a file without a table yet) comes as a
 * copy on the unwind_copies ring buffer (struct mt_defer_copy), its
 * allocation filed under a provisional stack id.  Here the copies wait
 * for their files' tables, are unwound (deferred_walk.h), and every
 * profile read is given the whole stacks: a provisional id becomes the
 * whole stack's (the id the BPF program gives it), its totals and blocks
 * merged with that stack's (mt_deferred_unwind_apply()).
 *
 * One BPF object at a time: the state is the module's own, as the stack
 * cache of collect.c.
 */
#ifndef MEMTRACE_DEFERRED_UNWIND_H
#define MEMTRACE_DEFERRED_UNWIND_H
#include <stdbool.h>
#include <stdint.h>

#include "trunc_procs.h"

struct memleak_bpf;
struct mt_unwinder;
struct mt_raw_profile;

/* Set SKEL (opened, not loaded) up: deferred unwinding ON (tables are
 * used) or off; SYSTEM: every process is traced (a larger ring).  Test hooks: MEMTRACE_DEFER_ALL=1 copies every stack at
 * its first frame in a file, tables or not; MEMTRACE_DEFER_RING=BYTES
 * sizes the ring buffer (a power of two of pages). */
void mt_deferred_unwind_size(struct memleak_bpf *skel, bool on, bool system);

/* Read the copies of SKEL (loaded) with U's ring buffers (after
 * mt_unwinder_init()).  MODE: --unwind.  0 or -errno. */
int mt_deferred_unwind_init(struct mt_unwinder *u, struct memleak_bpf *skel,
			    uint32_t mode);

/* Unwind the copies whose tables are there.  FINAL: tracing is over; wait
 * for the tables still being made, and end the walks that need a table
 * that will not come. */
void mt_deferred_unwind_poll(bool final);

/* Process PID is about to exit (stopped at its exit, its memory still
 * there): read its copies, and what they need of it, now. */
void mt_deferred_unwind_exit(uint32_t pid);

/*
 * Process PID has exited and its allocations were harvested: unless a
 * copy of its stacks still waits for a table, its mappings (here and as
 * the kernel told them, kernel_vmas.h) go, so that a long system-wide run
 * does not keep those of every process that came and went.  True when
 * they went.
 */
bool mt_deferred_unwind_forget(uint32_t pid);

/* Is ID a provisional id whose whole stack is known? */
bool mt_deferred_unwind_resolved(uint64_t id);

/* Add to COUNTERS (MT_CNT__COUNT) the stacks the loader unwound cut
 * short, by reason (the BPF program's counters have the others). */
void mt_deferred_unwind_counters(uint64_t *counters);

/* Give RAW's stacks and blocks filed under a provisional id whose whole
 * stack is known that stack: its id, its frames, the totals merged.
 * 0 or -ENOMEM. */
int mt_deferred_unwind_apply(struct mt_raw_profile *raw);

/* Copies unwound, waiting, and unwound cut short (for -v and the tests). */
/* The most bytes of copies read from the ring and not yet taken by the
 * loader at once (the reader thread's queue; 0 without it). */
uint64_t mt_deferred_unwind_queued_most(void);

void mt_deferred_unwind_stats(uint64_t *done, uint64_t *waiting,
			      uint64_t *truncated);

/* The copies unwound cut short, and those still waiting, by process
 * (*N of them; malloc()ed, to be freed by the caller). */
struct mt_trunc_count *mt_deferred_unwind_cuts(size_t *n);

/* Of the copies taken at the first frame (MEMTRACE_DEFER_ALL) and unwound
 * whole: how many, and the bytes of stack they used, mean and most. */
void mt_deferred_unwind_depth(uint64_t *whole, uint64_t *mean,
			      uint64_t *max);

/* Segments in the "stacks" map now, and how many of them no stack of RAW
 * (just read, before mt_deferred_unwind_apply()) reaches (for -v and the
 * tests: once merged, a provisional stack leaves none). */
void mt_deferred_unwind_segments(const struct mt_raw_profile *raw,
				 uint64_t *total, uint64_t *unreachable);

void mt_deferred_unwind_free(void);

#endif
