/* SPDX-License-Identifier: MIT */
/*
 * timeline_data.h: every point of a run's timeline, per process, as the
 * loader samples them (src/loader/tracer/timeline.c), for the report's peak
 * line, sparklines and SVG.
 *
 * Memory is bounded: a process keeps at most MT_TL_MAX_POINTS points.
 * When it has that many, each two neighbours are merged into one (the
 * later one's time and in-use, the larger interval maximum), and every
 * later point stands for twice as many intervals: an hour at 10 Hz keeps
 * 36,000 intervals in 563 to 1,024 points of 24 bytes.  The maxima, hence
 * the peak, stay exact; the in-use curve between them is thinned.
 */
#ifndef MEMTRACE_TIMELINE_DATA_H
#define MEMTRACE_TIMELINE_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeline_sum.h"

#define MT_TL_MAX_POINTS 1024

/* One process at one instant (heap blocks; estimates when sampling). */
struct mt_tl_values {
	uint64_t inuse_bytes, inuse_objects;
	uint64_t alloc_bytes, alloc_objects;  /* since it was first seen */
	uint64_t free_bytes, free_objects;
	uint64_t max_inuse_bytes;  /* the largest in use in the interval
				      that ends at this instant */
};

struct mt_tl_point {
	uint32_t t_ms;    /* end of its last interval, from the start */
	uint32_t ticks;   /* intervals it stands for */
	uint64_t inuse;   /* in use at t_ms */
	uint64_t max;     /* the largest in use over its intervals */
};

struct mt_tl_series {
	uint32_t pid;
	char comm[16];
	bool gone;            /* exited: its last point is its last */
	double first_t;       /* start of its first interval (seconds) */
	double last_t;        /* its last point's time */
	uint64_t peak;        /* its largest in use, */
	double peak_t;        /* at the end of that interval */
	struct mt_tl_values last;
	struct mt_tl_point *pts;
	size_t n, cap;
	uint32_t span;        /* intervals a full point stands for */
};

struct mt_tl_data {
	double interval;      /* seconds between samples */
	double end_t;         /* the last sample's time */
	struct mt_tl_series *series;
	size_t n, cap;
};

/* A new series for process PID named COMM, its index in *IDX.  0/-ENOMEM. */
int mt_tl_series_new(struct mt_tl_data *d, uint32_t pid, const char *comm,
		     size_t *idx);

/*
 * Series IDX's values at T seconds (the end of an interval, later than
 * its last point).  0 or -ENOMEM.
 */
int mt_tl_point_add(struct mt_tl_data *d, size_t idx, double t,
		    const struct mt_tl_values *v);

/*
 * The summary of D over a run of DURATION seconds: each process's peak
 * and min(MT_TL_CELLS, intervals in the run) sparkline cells, the
 * largest peaks kept.
 */
void mt_tl_summarize(const struct mt_tl_data *d, double duration,
		     struct mt_tl_summary *out);

void mt_tl_data_free(struct mt_tl_data *d);

#endif
