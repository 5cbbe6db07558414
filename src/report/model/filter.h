/* SPDX-License-Identifier: MIT */
/* filter.h: narrowing a profile to some processes (--comm, report -p). */
#ifndef MEMTRACE_FILTER_H
#define MEMTRACE_FILTER_H

#include <stdbool.h>
#include "profile.h"

/*
 * Does a process named COMM match --comm PATTERN?  A pattern with a glob
 * character (* ? [) is a shell glob (fnmatch, as pgrep takes a regex);
 * else the name must be equal.
 */
bool mt_comm_match(const char *pattern, const char *comm);

/* Distinct processes of P (its processes' and samples' pids). */
size_t mt_profile_nprocs(const struct mt_profile *p);

/*
 * Keep only the samples, blocks and processes of process PID (0: any)
 * named COMM (NULL: any; a glob: mt_comm_match).  When processes are left
 * out, the header's "shown:" line (mt_summary.shown) says how many are kept
 * of how many, or that none is.  The allocated/freed and mmap totals of the
 * header are summed again from what is kept; event, untracked-free and drop
 * counts stay those of the whole trace; the size histogram, of every
 * process, is marked not recorded (MT_FACT_SIZES).  Returns 0 or -ENOMEM.
 */
int mt_profile_filter(struct mt_profile *p, uint32_t pid, const char *comm);

/*
 * The same for a raw profile, before symbolisation (whose samples must stay
 * one per raw stack): keep the stacks and blocks of processes named COMM
 * (and mark the size histogram not recorded).
 */
void mt_raw_profile_filter(struct mt_raw_profile *raw, const char *comm);

/* Sum the header's allocated/freed and mmap totals again from P's samples. */
void mt_profile_recount(struct mt_profile *p);

#endif
