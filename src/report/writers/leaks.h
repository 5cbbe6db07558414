/* SPDX-License-Identifier: MIT */
/*
 * leaks.h: the leak report: blocks still allocated when tracing stopped,
 * older than a minimum age, grouped by stack, largest group first.
 */
#ifndef MEMTRACE_LEAKS_H
#define MEMTRACE_LEAKS_H

#include <stdint.h>
#include <stdio.h>
#include "profile.h"
#include "units.h"

struct mt_leak_opts {
	uint64_t min_age_ns;  /* blocks younger than this are left out */
	int top_n;            /* groups shown; 0: all */
	enum mt_unit unit;
};

/*
 * Write the header, the "not freed:" summary and the leak groups.  A
 * profile without blocks (read from a file) is reported from its in-use
 * totals per stack, without block sizes, ages or addresses.  0 or -errno.
 */
int mt_write_leaks(FILE *out, const struct mt_profile *p,
		   const struct mt_leak_opts *o);

#endif
