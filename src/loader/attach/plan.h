/* SPDX-License-Identifier: MIT */
/*
 * plan.h: what memtrace attaches in one file: the offsets of the functions
 * probed (placed past their prologues where safe), with their kinds, the
 * duplicates (aliases) removed.
 */
#ifndef MEMTRACE_PLAN_H
#define MEMTRACE_PLAN_H

#include <stdbool.h>
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
	/* Per function: its first byte (offs[i] is where it is probed), a
	 * name of it (static), its integer arguments (the most of its
	 * aliases'), and whether the kernel single-steps the instruction
	 * probed (else it emulates it: one trap, not two). */
	uint64_t entry_offs[MT_PLAN_MAX];
	const char *names[MT_PLAN_MAX];
	int nargs[MT_PLAN_MAX];
	bool stepped[MT_PLAN_MAX];
};

#endif
