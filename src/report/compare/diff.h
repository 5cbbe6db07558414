/* SPDX-License-Identifier: MIT */
/*
 * diff.h: `memtrace report FILE --base BASE`: FILE less BASE, like
 * `go tool pprof -diff_base`, across every format memtrace reads (a
 * tcmalloc profile against a memtrace one, ...).
 */
#ifndef MEMTRACE_DIFF_H
#define MEMTRACE_DIFF_H

#include "profile.h"

/*
 * Subtract BASE from P: samples with the same frames (whatever their
 * process) are one sample whose values are P's less BASE's; BASE's other
 * samples are added with their values negated.  The header's counters and
 * the size histogram are subtracted too (they may go negative, and print
 * so); a fact BASE does
 * not record is not recorded; sampling stays P's, and the duration too
 * unless both are of one trace (the same target, BASE's duration shorter):
 * then it is the time between them; the target and allocator say what was
 * subtracted.  BASE is left as it was.  Returns
 * 0 or -ENOMEM (P is then partly subtracted: free it).
 */
int mt_profile_subtract(struct mt_profile *p, const struct mt_profile *base,
			const char *base_name);

#endif
