/* SPDX-License-Identifier: MIT */
/*
 * tcmalloc_read.h: gperftools' (tcmalloc's) legacy text heap profile, as
 * HEAPPROFILE=prefix writes it and gperftools' pprof reads it:
 *
 *   heap profile:   15:     3677 [    27:     4829] @ heapprofile
 *        2:     2000 [     2:     2000] @ 0x55a5711821d8 0x55a5711821f7 ...
 *   ...
 *   MAPPED_LIBRARIES:
 *   55a571181000-55a571182000 r--p 00000000 00:00 10953872  /tmp/leaks
 *
 * Each record: objects and bytes in use [objects and bytes allocated] @
 * return addresses, leaf first.  "@ heapprofile" records every allocation;
 * "@ heap_v2/N" is sampled once per N bytes on average and unbiased with
 * pprof's rule (heap_text.h).
 */
#ifndef MEMTRACE_TCMALLOC_READ_H
#define MEMTRACE_TCMALLOC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

/* True when TEXT (LEN bytes) starts like such a profile. */
bool mt_tcmalloc_is(const char *text, size_t len);

/*
 * Parse TEXT (LEN bytes) into RAW (one process, pid 0, whose modules
 * are the MAPPED_LIBRARIES section; tcmalloc's own frames dropped).
 * Returns 0, or -EINVAL/-ENOMEM with a one-line reason in ERR.
 */
int mt_tcmalloc_parse(const char *text, size_t len, struct mt_raw_profile *raw,
		      char *err, size_t errlen);

#endif
