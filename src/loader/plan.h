/* SPDX-License-Identifier: MIT */
/*
 * plan.h: what memtrace attaches in one file: the offsets of the functions
 * probed (placed past their prologues where safe), with their kinds, the
 * duplicates (aliases) removed.
 */
#ifndef MEMTRACE_PLAN_H
#define MEMTRACE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The malloc family's, new/delete's, mmap's and ld.so's functions together. */
#define MT_PLAN_MAX 51

struct mt_plan {
	char *path;         /* the file's, as it is attached to */
	dev_t dev;          /* the file's identity */
	ino_t ino;
	size_t n, nret;
	uint64_t offs[MT_PLAN_MAX], cookies[MT_PLAN_MAX];
	uint64_t ret_offs[MT_PLAN_MAX];
};

#endif
