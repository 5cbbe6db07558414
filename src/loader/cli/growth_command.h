/* SPDX-License-Identifier: MIT */
/* growth_command.h: `memtrace report FILE FILE... --growth`, read and rendered. */
#ifndef MEMTRACE_GROWTH_COMMAND_H
#define MEMTRACE_GROWTH_COMMAND_H

#include "options.h"
#include "pprof_read.h"
#include "write_outputs.h"

/*
 * What grew from the first of O's input files to the last (growth_series.h),
 * written in every output of O with ROPTS (the text report with each top
 * stack's series), each file read within LIM.  Returns the exit status:
 * 0, or 1 after a one-line error.
 */
int mt_report_growth(const struct mt_options *o,
		     const struct mt_pprof_limits *lim,
		     const struct mt_render_opts *ropts);

#endif
