/* SPDX-License-Identifier: MIT */
/*
 * record.h: --record DIR, a run kept for later.  DIR gets the timeline
 * (timeline.csv, timeline.svg), a profile per interval (-i, 10 s unless
 * given: heap.NNNN.pb.gz, the in-use profile at the interval's highest
 * timeline sample, --keep of them), the final profile (heap.pb.gz) and
 * index.tsv, a line per profile: number, time of the interval's end, time
 * of its moment, bytes in use then, file name.  `memtrace report DIR --at
 * peak|TIME` renders the profile of that moment without the process.
 */
#ifndef MEMTRACE_RECORD_H
#define MEMTRACE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

/*
 * Before tracing: make DIR (or take an empty one of ours), and set O's
 * outputs, interval and timeline files for it.  0, or 1 after a message.
 */
int mt_record_prepare(struct mt_options *o);

/*
 * One profile written: its line in DIR/index.tsv (SEQ 0: the final).  0, or
 * -1 after a message (the line is then not in the index, not even part).
 */
int mt_record_index(const struct mt_options *o, unsigned seq, double t_s,
		    double at_s, uint64_t inuse);

/*
 * memtrace report DIR: the file of DIR to render, as O's --at says (the
 * final profile without it), into PATH (LEN bytes).  0, or 1 after a
 * message.
 */
int mt_record_pick(const struct mt_options *o, const char *dir, char *path,
		   size_t len);

#endif
