/* SPDX-License-Identifier: MIT */
/*
 * top.h: `memtrace top`, a live view of the heap like top(1): every
 * interval (-i, default 1 s) the tracer's snapshot (mt_tracer_collect,
 * the same profile a report or the HTTP page reads) becomes a frame: per
 * process in use, its growth over the last interval, its peak and its
 * allocation rate, and the stacks that grew most.  On a terminal it draws
 * on the alternate screen and reads keys (sort, pick a process, quit);
 * otherwise (or -b) it prints plain frames one after another.  It stops
 * as any trace does (q sends memtrace a SIGINT) and the final report
 * follows, once the terminal is given back.
 *
 *   mt_top_frame_make   a frame from a snapshot and the previous frame
 *   mt_top_start        register the frames' timer and the keys
 *   mt_top_end          give the terminal back (every path; idempotent)
 */
#ifndef MEMTRACE_TOP_H
#define MEMTRACE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "options.h"
#include "profile.h"
#include "top_sort.h"

struct mt_tracer;
struct mt_symcache;

struct mt_top_proc {
	uint32_t pid;
	char comm[64];
	uint64_t inuse;        /* bytes in use at the frame */
	int64_t growth;        /* in use now less at the previous frame */
	uint64_t peak;         /* the largest in use seen (timeline's, exact) */
	uint64_t alloc;        /* bytes allocated since the previous frame */
	uint64_t alloc_total;  /* bytes allocated since the start */
};

struct mt_top_stack {
	uint32_t pid, category;
	uint64_t stack_id;
	uint64_t inuse;
	int64_t growth;        /* in use now less at the previous frame */
	size_t raw;            /* its index in the frame's raw profile */
};

struct mt_top_frame {
	unsigned seq;          /* 1, 2, ... */
	double t, dt;          /* trace time; seconds since the previous frame */
	uint64_t events;       /* allocator calls so far */
	struct mt_top_proc *procs;    /* by pid */
	size_t nprocs;
	struct mt_top_stack *stacks;  /* by (pid, category, stack id) */
	size_t nstacks;
	struct mt_raw_profile raw;    /* the snapshot; procs not its own */
};

/*
 * The frame of RAW (taken: RAW is left empty; its procs are borrowed and
 * never freed; its blocks are dropped) after PREV (an empty frame for the
 * first: growth then counts from the start).  Peaks are the largest in use of PREV and now.
 * 0 or -ENOMEM (OUT is then empty).
 */
int mt_top_frame_make(struct mt_raw_profile *raw,
		      const struct mt_top_frame *prev,
		      struct mt_top_frame *out);

void mt_top_frame_free(struct mt_top_frame *f);

/* Order ROWS (N) by KEY, largest first, ties by pid. */
void mt_top_sort_procs(struct mt_top_proc *rows, size_t n,
		       enum mt_top_sort key);

/* Order ROWS by growth, then in use, largest first. */
void mt_top_sort_stacks(struct mt_top_stack *rows, size_t n);

struct mt_top {
	const struct mt_options *o;
	struct mt_tracer *tr;
	bool tty;              /* drawing on a terminal (not -b) */
	bool keys;             /* reading keys from standard input */
	bool screen;           /* the alternate screen is on */
	bool restore;          /* SAVED is to be put back on standard input */
	struct termios saved;
	enum mt_top_sort sort;
	uint32_t selected;     /* the pid of the highlighted row; 0: first */
	uint32_t focus;        /* the stacks are this pid's; 0: every one */
	unsigned frames;       /* drawn on the timer */
	struct mt_top_frame cur;
	struct mt_symcache *symbols;
	bool own_symbols;      /* else the trace's reports' */
	int error;             /* the first error of a frame */
};

/*
 * Register, in TR's loop, a frame every O's top interval and (on a
 * terminal) the keys; switch to the alternate screen.  SYMBOLS: the
 * trace's reports' symbol cache, shared (it must outlive V; NULL: one of
 * V's own).  0, or 1 after a one-line message.
 */
int mt_top_start(struct mt_top *v, const struct mt_options *o,
		 struct mt_tracer *tr, struct mt_symcache *symbols);

/* Leave the alternate screen, give the terminal its settings back, free. */
void mt_top_end(struct mt_top *v);

#endif
