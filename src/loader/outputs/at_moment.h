/* SPDX-License-Identifier: MIT */
/*
 * at_moment.h: --at.  While tracing, keep the profile of one moment for the
 * final report: the highest in use the timeline saw (--at peak), or the
 * first timeline sample at or after a time of the trace (--at 12.5s).
 * With -i, --at TIME looks at the samples of the interval that holds TIME
 * and keeps its highest; without, the first sample from TIME on.
 * The timeline says how much is in use at each of its samples; when a
 * sample is the one wanted, a snapshot is taken at once (so the moment is
 * that of the timeline's resolution, --timeline-interval).  Snapshots of
 * a growing heap would follow each other: one is not taken sooner than
 * four times its own duration after the previous one.
 */
#ifndef MEMTRACE_AT_MOMENT_H
#define MEMTRACE_AT_MOMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"
#include "profile.h"

struct mt_tracer;

struct mt_keeper {
	bool on, peak;
	double at_s;               /* --at TIME; with peak unused */
	double lo, hi;             /* --at TIME: the samples looked at */
	struct mt_raw_profile raw; /* the profile kept (procs not its own) */
	bool have;
	uint64_t inuse;            /* its in use (the timeline's figure) */
	double t;                  /* its time in the trace, seconds */
	double next_ok;            /* CLOCK_MONOTONIC: no snapshot before */
	int error;                 /* of the last snapshot */
};

void mt_keeper_init(struct mt_keeper *k, const struct mt_options *o);

/* The timeline sampled: INUSE bytes in use (every process) at trace time T. */
void mt_keeper_sample(struct mt_keeper *k, struct mt_tracer *tr, double t,
		      uint64_t inuse);

/*
 * The end: when the kept profile is the one to report, move it into RAW
 * (whose procs, NPROCS: those of the final collect, are kept) and return
 * true; FINAL is the final profile (--at peak: reported when it is as
 * high).  RAW is FINAL's storage then freed first.
 */
bool mt_keeper_take(struct mt_keeper *k, struct mt_raw_profile *final);

/*
 * --record: the interval's kept profile, if any, moved into RAW (zeroed by
 * the caller), its procs those PROCS, NPROCS of now; the keeper starts
 * afresh for the next interval.  False when none was kept.
 */
bool mt_keeper_take_kept(struct mt_keeper *k, struct mt_raw_profile *raw,
			 struct mt_process *procs, size_t nprocs);

/* A keeper of each interval's highest sample (--record). */
void mt_keeper_init_peak(struct mt_keeper *k);

void mt_keeper_free(struct mt_keeper *k);

#endif
