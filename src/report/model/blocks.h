/* SPDX-License-Identifier: MIT */
/* blocks.h: outstanding blocks of a raw profile, linked to their samples. */
#ifndef MEMTRACE_BLOCKS_H
#define MEMTRACE_BLOCKS_H

#include "profile.h"

/*
 * Copy RAW's blocks into P (symbolised from RAW: sample i is raw stack i),
 * each pointing at the sample of its (pid, category, stack): a heap block
 * and an anonymous mapping made from the same stack are different samples.
 * Returns 0 or -ENOMEM.
 */
int mt_profile_add_blocks(struct mt_profile *p, const struct mt_raw_profile *raw);

#endif
