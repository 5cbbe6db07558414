/* SPDX-License-Identifier: MIT */
/*
 * text.h: the human-readable report: summary header, per-process totals
 * (when there is more than one process), a pprof-like function table,
 * the heaviest stacks and the size histogram.
 */
#ifndef MEMTRACE_TEXT_H
#define MEMTRACE_TEXT_H

#include <stdbool.h>
#include <stdio.h>
#include "profile.h"
#include "units.h"

/*
 * report --growth: each stack's value of the ranking metric in each of
 * several profiles, shown after its heading ("1000B -> 2000B -> 3000B").
 */
struct mt_text_series {
	size_t npoints;        /* values per stack */
	/* The values of the stack of sample S, or NULL (none shown). */
	const int64_t *(*of)(const void *ctx, const struct mt_sample *s);
	const void *ctx;
};

struct mt_text_opts {
	enum mt_value metric;  /* value the table and stacks are ranked by */
	int top_n;             /* rows and stacks shown; <= 0: all */
	bool cum;              /* sort the table by cum instead of flat */
	enum mt_unit unit;     /* how byte values are shown */
	const struct mt_text_series *series; /* NULL: no series */
};

/*
 * Write the report for P to OUT.  O may be NULL for inuse_space, top 20,
 * flat, automatic units.  Returns 0, -EINVAL for a bad metric, -ENOMEM, or
 * -EIO when OUT has an error.
 */
int mt_write_text(FILE *out, const struct mt_profile *p,
		  const struct mt_text_opts *o);

/*
 * The summary every report starts with: "memtrace VERSION TITLE", then
 * target, allocator, duration, totals, events and drop counters.
 */
void mt_write_header(FILE *out, const struct mt_summary *s,
		     enum mt_unit unit, const char *title);

/* A stack's frames, leaf first, one per line with its file:line. */
void mt_write_frames(FILE *out, const struct mt_profile *p,
		     const struct mt_sample *s);

#endif /* MEMTRACE_TEXT_H */
