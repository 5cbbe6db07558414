/* SPDX-License-Identifier: MIT */
/*
 * timeline_csv.h: the timeline as CSV (--timeline FILE), appended to as the
 * run goes, so that `tail -f FILE` follows it.
 *
 * Columns: t_s, pid, comm, inuse_bytes, inuse_objects, alloc_bytes,
 * alloc_objects, free_bytes, free_objects, max_inuse_bytes (a header row
 * first).  The file is made as report files are (outfile.h), renamed into
 * place before the first row.  When the next rows would take it past
 * max_size, it rolls over: FILE.2 becomes FILE.3 (the older FILE.3 goes),
 * FILE.1 FILE.2, FILE FILE.1, and a new FILE starts with the header row.
 */
#ifndef MEMTRACE_TIMELINE_CSV_H
#define MEMTRACE_TIMELINE_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outfile.h"
#include "timeline_data.h"

/* Rolled-over files kept: FILE.1 .. FILE.MT_TL_CSV_KEEP. */
#define MT_TL_CSV_KEEP 3

struct mt_tl_csv {
	struct mt_outfile of;
	bool rolls;           /* a regular file (not a device or FIFO) */
	uint64_t size;        /* bytes in the current file */
	uint64_t max_size;
	char *buf;            /* rows not written yet */
	size_t len, cap;
};

/* Open PATH and write the header row.  0 or a negative error (outfile.h). */
int mt_tl_csv_open(struct mt_tl_csv *c, const char *path, uint64_t max_size);

/* One row, kept until the next flush.  0 or -ENOMEM. */
int mt_tl_csv_add(struct mt_tl_csv *c, double t, uint32_t pid,
		  const char *comm, const struct mt_tl_values *v);

/* Write the rows kept, rolling over first if they would not fit. */
int mt_tl_csv_flush(struct mt_tl_csv *c);

/* Flush and close.  0 or the first error. */
int mt_tl_csv_close(struct mt_tl_csv *c);

#endif
