/* SPDX-License-Identifier: MIT */
/*
 * profile_input.h: the bytes of a saved profile, read as untrusted input
 * within the limits of struct mt_pprof_limits (pprof_read.h):
 *   - a regular file larger than max_file is refused before any byte of
 *     it is read (fstat), and so, under --max-memory (limits.budget), is
 *     one larger than the budget that is not gzip-compressed (it would be
 *     held whole); from a pipe, reading stops at the same figures;
 *   - a gzip-compressed input is inflated as it is read, 64 KiB at a
 *     time: the compressed file is never held, and inflating stops as soon
 *     as the output passes its limit (16 MiB + 32 x the compressed size, or
 *     the budget; pprof_read.h); from a pipe, whose size is not known, 32 x
 *     the compressed bytes read so far.
 * Opening reads the first bytes only (mt_input_open), so that a caller can
 * refuse a file by its kind and size before reading the rest
 * (mt_input_read).
 */
#ifndef MEMTRACE_PROFILE_INPUT_H
#define MEMTRACE_PROFILE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pprof_read.h"

#define MT_INPUT_SIZE_UNKNOWN UINT64_MAX

struct mt_input {
	int fd;          /* -1 once read */
	uint64_t size;   /* the file's size, or MT_INPUT_SIZE_UNKNOWN (a pipe) */
	bool gzip;       /* it starts with gzip's magic */
	char *data;      /* the bytes read (inflated, once read, if gzip),
			    NUL-terminated */
	size_t len, cap;
};

/*
 * Open PATH into *IN and read its first bytes (up to 4 KiB; in->data,
 * in->len), after checking its size against LIM (NULL: the defaults).
 * Returns 0, or a negative errno with a one-line reason in ERR (*IN is
 * then closed).
 */
int mt_input_open(struct mt_input *in, const char *path,
		  const struct mt_pprof_limits *lim, char *err, size_t errlen);

/* The rest of IN, inflated if it is gzip.  Returns 0 or a negative errno
 * with a one-line reason in ERR (-EFBIG past a limit). */
int mt_input_read(struct mt_input *in, const struct mt_pprof_limits *lim,
		  char *err, size_t errlen);

void mt_input_close(struct mt_input *in);

/* True when LEN bytes at D start with gzip's magic. */
bool mt_input_is_gzip(const void *d, size_t len);

/*
 * Inflate the LEN bytes at DATA (gzip, in memory) into OUT (its data and
 * len; OUT->fd is -1) within the same limits.  Returns as mt_input_read.
 */
int mt_input_gunzip(const void *data, size_t len,
		    const struct mt_pprof_limits *lim, struct mt_input *out,
		    char *err, size_t errlen);

#endif
