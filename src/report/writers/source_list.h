/* SPDX-License-Identifier: MIT */
/*
 * source_list.h: --list REGEX, as pprof -list: for each function whose
 * name matches (sorted by name), and each source file its frames are in,
 * "ROUTINE ======================== NAME in FILE", its flat and cum, and
 * the file's lines from the function's first line (or 5 before the first
 * line with a value) to 5 after the last, each with its flat and cum
 * ("." for none).  When the file cannot be read, only the lines with a
 * value, without their text.
 */
#ifndef MEMTRACE_SOURCE_LIST_H
#define MEMTRACE_SOURCE_LIST_H

#include <stdio.h>
#include "profile.h"
#include "units.h"

/* -ESRCH (said on standard error) when no function matches REGEX. */
int mt_write_source_list(FILE *out, const struct mt_profile *p,
			 const char *regex, enum mt_value metric,
			 enum mt_unit unit);

#endif
