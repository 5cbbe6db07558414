/* SPDX-License-Identifier: MIT */
/*
 * func_table.h: a profile's functions with their flat and cum values, all
 * four of them, for --json and --list.  Frames are grouped by (function
 * name, module) as in the text report's table; flat sums the samples whose
 * leaf frame is the function, cum those where it appears (once per sample,
 * even when recursive), as pprof does.
 */
#ifndef MEMTRACE_FUNC_TABLE_H
#define MEMTRACE_FUNC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile.h"

struct mt_func {
	const char *name;
	const char *module;          /* may be NULL */
	const struct mt_frame *loc;  /* the frame that best locates it */
	int64_t flat[MT_NVALUES], cum[MT_NVALUES];
};

struct mt_func_table {
	struct mt_func *v;
	size_t n;
	uint32_t *of_frame;   /* frame index -> index into v */
};

/* Build the table of P; 0 or -ENOMEM.  Free it with mt_func_table_free. */
int mt_func_table_build(const struct mt_profile *p, struct mt_func_table *t);

/* Indices of the functions with a value that is not 0, largest M's
 * flat (BY_CUM: cum) first, then by name; *N of them.  NULL: no memory. */
size_t *mt_func_table_order(const struct mt_func_table *t, enum mt_value m,
			    bool by_cum, size_t *n);

void mt_func_table_free(struct mt_func_table *t);

#endif
