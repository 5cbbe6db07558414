/* SPDX-License-Identifier: MIT */
/*
 * top_sort.h: what `memtrace top`'s process table is sorted by (keys i, g,
 * p, a; --sort), named here so that the command line can check --sort
 * without depending on the live view (outputs/top.h).
 */
#ifndef MEMTRACE_TOP_SORT_H
#define MEMTRACE_TOP_SORT_H

enum mt_top_sort { MT_TOP_INUSE, MT_TOP_GROWTH, MT_TOP_PEAK, MT_TOP_ALLOC };

/* "inuse", "growth", "peak", "alloc" into *S: 0, or -1. */
int mt_top_sort_parse(const char *s, enum mt_top_sort *out);

#endif
