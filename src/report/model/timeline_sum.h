/* SPDX-License-Identifier: MIT */
/*
 * timeline_sum.h: what a report keeps of the timeline (--timeline-interval):
 * each process's peak in use and the cells of its sparkline.  Part of the
 * header facts (struct mt_summary), so that a pprof profile carries it
 * (pprof_facts.c) and `memtrace report FILE` prints it again.
 */
#ifndef MEMTRACE_TIMELINE_SUM_H
#define MEMTRACE_TIMELINE_SUM_H

#include <stddef.h>
#include <stdint.h>

/* Sparkline cells at most, and processes kept (the largest peaks). */
#define MT_TL_CELLS 60
#define MT_TL_SUM_PROCS 10
/* A cell the process did not live through (printed as a space). */
#define MT_TL_CELL_NONE UINT64_MAX

struct mt_tl_peak {
	uint32_t pid;
	char comm[16];
	uint64_t bytes;   /* its largest in use (exact: see doc/design.md) */
	double t;         /* seconds from the start: the end of the interval
			     in which it was reached */
	/* The largest in use within each cell's time span, or
	 * MT_TL_CELL_NONE. */
	uint64_t cells[MT_TL_CELLS];
};

struct mt_tl_summary {
	size_t nprocs;        /* processes the timeline saw */
	size_t nkept;         /* of them, in procs[], largest peak first */
	size_t ncells;        /* cells of every sparkline (<= MT_TL_CELLS) */
	double cell_s;        /* seconds a cell spans */
	struct mt_tl_peak procs[MT_TL_SUM_PROCS];
};

#endif
