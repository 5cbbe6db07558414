/* SPDX-License-Identifier: MIT */
/*
 * timeline.h: memory over time, per process (--timeline-interval): every
 * interval, the loader reads the BPF program's per-process totals
 * (bpf/proc_totals.h) from the mmap()ed array, takes each peak with an
 * atomic exchange, and adds a point per live process to the timeline
 * (report/timeline_data.h) and to the CSV file (--timeline).  A process
 * that exited keeps its last point; its slot goes back to the BPF
 * program.  At the end: a last point, the SVG (--timeline-svg), and the
 * summary the report's header shows.
 *
 * The largest in use of an interval is max(the peak exchanged at its end,
 * in use at its start, in use at its end): exact when no allocation races
 * the read at the end of the interval, else short by at most that
 * allocation, which then counts in the next interval.
 *
 * Call sites: mt_timeline_size before the BPF object is loaded
 * (bpf_load.c); mt_timeline_init once recording has started, and
 * mt_timeline_timer as a timer of the event loop every interval
 * (tracer.c, mt_tracer_start); mt_timeline_finish once recording has
 * stopped (mt_tracer_stop); mt_timeline_summary for each report
 * (mt_tracer_collect); mt_timeline_free (mt_tracer_free).
 */
#ifndef MEMTRACE_TIMELINE_H
#define MEMTRACE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "profile.h"
#include "timeline_csv.h"
#include "timeline_data.h"

struct memleak_bpf;

/* What the loader remembers of a BPF slot. */
struct mt_tl_slot {
	bool used;
	uint32_t pid;
	size_t series;         /* its series in the timeline */
	uint64_t inuse;        /* in use at the previous sample */
	uint64_t exec_ns;      /* its last exec seen (a new name) */
};

struct mt_timeline {
	bool on;
	double interval;
	double t0;             /* CLOCK_MONOTONIC seconds at the start */
	double next;           /* the next sample is due */
	struct memleak_bpf *skel;
	struct mt_proc_totals *totals;  /* the mmap()ed "proc_totals" */
	size_t totals_len;
	struct mt_tl_slot *slots;       /* MT_MAX_PROCS */
	struct mt_tl_data data;
	bool csv_open;
	struct mt_tl_csv csv;
	const char *csv_path, *svg_path;
	int error;             /* the first error writing the CSV */
	uint64_t gone_inuse;   /* what exited processes left in use */
	/* Called after each sample while recording, with T and the heap in
	 * use of every process (exited ones: what they left): the keeper of
	 * --at; set after mt_timeline_init, may be NULL. */
	void (*on_sample)(void *ctx, double t, uint64_t inuse);
	void *on_sample_ctx;
};

/*
 * Fail now, not after a long trace, when --timeline or --timeline-svg
 * cannot be written: 0, or 1 after a one-line message.
 */
int mt_timeline_check(const struct mt_options *o);

/* Before load: the rodata flag and the maps' sizes (1 entry when off). */
void mt_timeline_size(struct memleak_bpf *skel, bool on);

/*
 * Start, with O's timeline options, on the loaded SKEL (recording has
 * started); times count from START (CLOCK_MONOTONIC seconds: the
 * session's start, the origin of the report's duration).  Off (O's
 * interval 0): does nothing.  0, or a negative error after a one-line
 * message.
 */
int mt_timeline_init(struct mt_timeline *tl, struct memleak_bpf *skel,
		     const struct mt_options *o, double start);

/* An event-loop timer: sample when an interval is due.  NOW: monotonic s. */
void mt_timeline_timer(void *tl, double now);

/* A point per live process at T seconds from the start.  0 or -ENOMEM. */
int mt_timeline_sample(struct mt_timeline *tl, double t);

/*
 * Recording stopped at STOP (CLOCK_MONOTONIC seconds: the end of the
 * report's duration, not the later moment this is called, after the
 * probes' detaching): the last points, the CSV closed, the SVG written.
 * 0, or -1 after a one-line message.
 */
int mt_timeline_finish(struct mt_timeline *tl, double stop);

/*
 * Name the series of processes that were gone before their first sample
 * could read their name ("?"), from PROCS (the tracer's: it keeps exited
 * processes' names).
 */
void mt_timeline_names(struct mt_timeline *tl, const struct mt_process *procs,
		       size_t n);

/* The report's timeline facts into SUM (not recorded when off). */
void mt_timeline_summary(const struct mt_timeline *tl, struct mt_summary *sum);

void mt_timeline_free(struct mt_timeline *tl);

#endif
