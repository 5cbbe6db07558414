/* SPDX-License-Identifier: MIT */
/* filter.h: narrowing a profile to some processes (--comm, report -p). */
#ifndef MEMTRACE_FILTER_H
#define MEMTRACE_FILTER_H

#include "profile.h"

/*
 * Keep only the samples, blocks and processes of process PID (0: any)
 * named COMM (NULL: any).  The allocated/freed and mmap totals of the
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
