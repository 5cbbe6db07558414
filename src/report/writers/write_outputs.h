/* SPDX-License-Identifier: MIT */
/*
 * write_outputs.h: writing one profile in every format asked for, each to its
 * destination, from one trace (or one saved profile).
 */
#ifndef MEMTRACE_WRITE_OUTPUTS_H
#define MEMTRACE_WRITE_OUTPUTS_H

#include <stddef.h>
#include "leaks.h"
#include "profile.h"
#include "text.h"

enum mt_format {
	MT_FMT_TEXT, MT_FMT_FOLDED, MT_FMT_LEAKS, MT_FMT_RAW, MT_FMT_PPROF,
	MT_FMT_SVG,  /* a flame graph: a document of its own, never shared */
	MT_FMT_JSON, /* the profile for scripts (json.h) */
	MT_FMT_LIST, /* --list: source lines with their values (source_list.h) */
};

struct mt_output {
	enum mt_format fmt;
	const char *path;      /* NULL: standard output */
};

struct mt_render_opts {
	struct mt_text_opts text;   /* its metric also serves --folded, --svg */
	struct mt_leak_opts leaks;
	const char *list;           /* MT_FMT_LIST: functions matching it */
	bool diff;                  /* a profile less a base (report --base):
				     * MT_FMT_SVG a differential flame graph */
};

/*
 * Write P in each of OUTS.  RAW (may be NULL) is needed by MT_FMT_RAW.
 * Text outputs sharing a destination are written to it one after the
 * other; a pprof profile or an SVG is a file of its own.
 * Prints a one-line error and returns -1 when something cannot be written.
 */
int mt_render(const struct mt_output *outs, size_t n,
	      const struct mt_profile *p, const struct mt_raw_profile *raw,
	      const struct mt_render_opts *o);

#endif
