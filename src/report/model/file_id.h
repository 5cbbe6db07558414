/* SPDX-License-Identifier: MIT */
/*
 * file_id.h: a file's identity as stat(2) gives it: device, inode, size
 * and modification time, so that a file rewritten in place (same inode)
 * is another file.  The key of every cache of what a file holds.
 */
#ifndef MEMTRACE_FILE_ID_H
#define MEMTRACE_FILE_ID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct mt_file_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/* ST's identity. */
struct mt_file_id mt_file_id_of(const struct stat *st);

bool mt_file_id_eq(const struct mt_file_id *a, const struct mt_file_id *b);

#endif
