/* SPDX-License-Identifier: MIT */
/* report_growth.h: `memtrace report FILE FILE... --growth`, read and rendered. */
#ifndef MEMTRACE_REPORT_GROWTH_H
#define MEMTRACE_REPORT_GROWTH_H

#include "options.h"
#include "pprof_read.h"
#include "render.h"

/*
 * What grew from the first of O's input files to the last (growth.h),
 * written in every output of O with ROPTS (the text report with each top
 * stack's series), each file read within LIM.  Returns the exit status:
 * 0, or 1 after a one-line error.
 */
int mt_report_growth(const struct mt_options *o,
		     const struct mt_pprof_limits *lim,
		     const struct mt_render_opts *ropts);

#endif
