/* SPDX-License-Identifier: MIT */
/*
 * raw.h: the --raw dump, for debugging memtrace itself: every stack with
 * its raw frames (address, module+offset) and its symbolised frames, and
 * the bytes and objects allocated and freed.
 */
#ifndef MEMTRACE_RAW_H
#define MEMTRACE_RAW_H

#include <stdio.h>
#include "profile.h"

/*
 * P must be symbolised from RAW (sample i is raw stack i).  RAW NULL: P is
 * a saved profile (memtrace report), written from its samples: no stack
 * ids or blocks, a location's address and its module+file offset for each
 * frame that is not inlined.  0 or -errno.
 */
int mt_write_raw(FILE *out, const struct mt_raw_profile *raw,
		 const struct mt_profile *p);

#endif
