/* SPDX-License-Identifier: MIT */
/*
 * timeline_svg.h: the timeline as a self-contained SVG (--timeline-svg):
 * heap in use over time, a line per process (the MT_TL_SVG_PROCS largest
 * peaks), each interval's largest in use as a faint band under a step
 * line, axes in human units (B/KiB/MiB/GiB, s/min), a legend with each
 * process's peak.  No script, no external resource.
 */
#ifndef MEMTRACE_TIMELINE_SVG_H
#define MEMTRACE_TIMELINE_SVG_H

#include <stdio.h>

#include "timeline_data.h"

#define MT_TL_SVG_PROCS 8

/* Write D's SVG to OUT.  0, or -EIO when OUT has an error. */
int mt_tl_write_svg(FILE *out, const struct mt_tl_data *d);

/* Write it to PATH through outfile.h.  0 or a negative error. */
int mt_tl_svg_write(const char *path, const struct mt_tl_data *d);

#endif
