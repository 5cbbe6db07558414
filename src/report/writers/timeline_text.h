/* SPDX-License-Identifier: MIT */
/*
 * timeline_text.h: the timeline in the text reports: the header's "peak in
 * use:" line and sparkline of in use over the run, and with several
 * processes, the "Peak in use by process" section.
 */
#ifndef MEMTRACE_TIMELINE_TEXT_H
#define MEMTRACE_TIMELINE_TEXT_H

#include <stdio.h>

#include "profile.h"
#include "units.h"

/* The sparkline characters, lowest first (UTF-8, 3 bytes each). */
#define MT_TL_SPARKS "▁▂▃▄▅▆▇█"

/*
 * CELLS (N of them) as a sparkline into BUF (LEN bytes; 3 * N + 1
 * suffice): each cell the block of its value's eighth of MAX, rounded up
 * (0: the lowest; MAX itself: the full block), MT_TL_CELL_NONE a space.
 */
char *mt_tl_sparkline(char *buf, size_t len, const uint64_t *cells,
		      size_t n, uint64_t max);

/*
 * "peak in use: B bytes at T s (U)", and for one process
 * "in use over time: |SPARKLINE| (N cells of S s; █ U)"; with several the
 * largest peak, whose process it is, and how many there are.  "peak in
 * use: not recorded" when S lacks the timeline.
 */
void mt_tl_write_header(FILE *out, const struct mt_summary *s,
			enum mt_unit unit);

/*
 * With several processes: "Peak in use by process ..." and a row per
 * process kept (peak, when, pid, name, sparkline), then an empty line.
 * Nothing otherwise.
 */
void mt_tl_write_procs(FILE *out, const struct mt_summary *s,
		       enum mt_unit unit);

#endif
