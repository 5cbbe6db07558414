/* SPDX-License-Identifier: MIT */
/*
 * tracer.h: one trace, start to end.  The tracer owns the BPF skeleton,
 * the probes' links, the unwinder and its tables, the target (a process,
 * a command and perhaps what it starts, or every process) and the files
 * they map, and the event loop that watches them.  It reads while it
 * traces: a snapshot leaves every probe in place and every map as it was.
 *
 *   mt_tracer_start     load, attach, tables, release the command
 *   mt_tracer_run       the event loop, until a stop condition
 *   mt_tracer_collect   a raw profile of now (any number of times)
 *   mt_tracer_stop      stop recording at one instant, detach (and the
 *                       timeline's last points, its files)
 *   mt_tracer_free
 */
#ifndef MEMTRACE_TRACER_H
#define MEMTRACE_TRACER_H

#include <stdbool.h>

#include "images.h"
#include "per_pid_probes.h"
#include "libs_cache.h"
#include "options.h"
#include "probes.h"
#include "proc_allocators.h"
#include "profile.h"
#include "session.h"
#include "snapshot.h"
#include "standby_probes.h"
#include "system.h"
#include "table_holds.h"
#include "target.h"
#include "timeline.h"
#include "unwinder.h"

struct memleak_bpf;

enum mt_tracer_kind {
	MT_TRACER_ONE,      /* -p PID, or -- CMD --no-follow */
	MT_TRACER_FAMILY,   /* -- CMD: CMD and what it starts */
	MT_TRACER_SYSTEM,   /* every process */
};

struct mt_tracer {
	const struct mt_options *o;
	enum mt_tracer_kind kind;
	struct mt_target *t;         /* NULL system-wide */
	struct memleak_bpf *skel;
	struct mt_probes probes;
	struct mt_unwinder uw;
	bool uw_on;                  /* uw is initialised */
	struct mt_system sys;        /* FAMILY and SYSTEM */
	struct mt_family fam;        /* FAMILY: each process's probes */
	struct mt_process proc;      /* ONE and FAMILY: the target's mappings */
	struct mt_session s;         /* its loop: add registrations before run */
	struct mt_snapshot snap;     /* reading while tracing */
	bool snap_on;
	struct mt_timeline tl;       /* memory over time (--timeline-interval) */
	struct mt_libs_cache libs;   /* the files of the executables exec'd */
	char cxx[1024];              /* where new/delete were probed */
	size_t nprobed, nstepped;    /* at the stop: functions probed for
					the target, single-stepped probes */
	bool stopped;                /* recording stopped, probes detached */
	unsigned unfollowed;         /* children not traced: table full */
	struct mt_proc_allocs allocs; /* each exec'd image's allocator */
	struct mt_standby standby;   /* ONE: installed allocators probed ahead */
	bool standby_done;
	struct mt_images images;     /* ONE and FAMILY: its processes' images */
	struct mt_table_holds holds; /* ONE and FAMILY: stopped for tables */
	int cost_fd;                 /* -v: BPF run-time statistics on; -1 */
};

/*
 * Start tracing T (NULL: every process) as O says; SIGFD from
 * mt_session_signals().  Returns 0, or an exit status after a message
 * (the command, if any, is then reaped or left to mt_child_abort).
 */
int mt_tracer_start(struct mt_tracer *tr, const struct mt_options *o,
		    struct mt_target *t, int sigfd);

/* Run the event loop until the duration, a signal or the target's exit. */
void mt_tracer_run(struct mt_tracer *tr);

/*
 * The profile of now into RAW (zeroed by the caller): while tracing, a
 * snapshot (allocation totals as of its start, each block allocated by
 * then that is still held when it is read); after mt_tracer_stop, the
 * instant recording stopped.  RAW's procs are the tracer's (borrowed:
 * set raw->procs to NULL before freeing RAW).  Returns 0 or -errno.
 */
int mt_tracer_collect(struct mt_tracer *tr, struct mt_raw_profile *raw);

/* The processes traced now (those a collect gives a profile). */
void mt_tracer_procs(struct mt_tracer *tr, struct mt_process **procs,
		     size_t *n);

/* Stop recording (one instant for every probe), then detach. */
void mt_tracer_stop(struct mt_tracer *tr);

void mt_tracer_free(struct mt_tracer *tr);

/* The target's probes (following: the command's own), or NULL
 * (system-wide, or after the stop). */
const struct mt_probes *mt_tracer_probes(struct mt_tracer *tr);

#endif
