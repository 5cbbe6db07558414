/* SPDX-License-Identifier: MIT */
/* sampling_tables.h: filling the tables of bpf/sampling.h. */
#ifndef MEMTRACE_SAMPLING_TABLES_H
#define MEMTRACE_SAMPLING_TABLES_H

#include "sampling.h"

/* log2(1 + j/256) and x / (1 - exp(-x)) at x = i/128, in Q24. */
void mt_sampling_tables(__u32 log2_tab[MT_LOG2_STEPS + 1],
			__u32 g_tab[MT_G_ENTRIES]);

#endif
