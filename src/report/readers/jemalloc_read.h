/* SPDX-License-Identifier: MIT */
/*
 * jemalloc_read.h: jemalloc's heap profile dump ("heap_v2/N"), as
 * MALLOC_CONF=prof:true,prof_final:true (or mallctl prof.dump) writes it
 * and jeprof reads it:
 *
 *   heap_v2/524288
 *     t*: 28106: 56637512 [0: 0]        totals, then per thread
 *   @ 0x7fe4014a2630 0x7fe4014a2d21 ... return addresses, leaf first
 *     t*: 2: 512 [0: 0]                 that stack: in use [accumulated]
 *     t0: 2: 512 [0: 0]
 *   ...
 *   MAPPED_LIBRARIES:
 *   556229430000-556229431000 r--p 00000000 fe:00 10953872  /tmp/leaks
 *
 * N is the mean bytes between samples (2^lg_prof_sample); records are
 * unbiased with pprof's rule (heap_text.h), none when N is 1.  Sizes are
 * jemalloc's size classes (what it allocated), not the sizes asked for.
 * The accumulated figures are 0 unless prof_accum was on: then what is in
 * use counts as allocated.  jemalloc's own frames (libjemalloc*) are
 * dropped from the top of each stack.
 */
#ifndef MEMTRACE_JEMALLOC_READ_H
#define MEMTRACE_JEMALLOC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

bool mt_jemalloc_is(const char *text, size_t len);

/* As mt_tcmalloc_parse (tcmalloc_read.h). */
int mt_jemalloc_parse(const char *text, size_t len, struct mt_raw_profile *raw,
		      char *err, size_t errlen);

#endif
