/* SPDX-License-Identifier: MIT */
/*
 * profile_read.h: `memtrace report FILE`: a saved heap profile in any of
 * the formats memtrace reads, into a struct mt_profile:
 *   - pprof (profile.proto, gzipped or not): memtrace's, Go's (pprof_read.h);
 *   - gperftools/tcmalloc text heap profiles, "heap profile: ..."
 *     (tcmalloc_read.h);
 *   - jemalloc heap dumps, "heap_v2/N" (jemalloc_read.h);
 *   - Go's text heap profile, debug=1 (go_text_read.h), whose frames the
 *     Go runtime symbolised.
 * The text formats' addresses are symbolised with the files their
 * MAPPED_LIBRARIES section names, as they are on this machine (libdw, as
 * for a trace); their header says what they do not record.
 */
#ifndef MEMTRACE_PROFILE_READ_H
#define MEMTRACE_PROFILE_READ_H

#include <stddef.h>
#include <stdint.h>
#include "pprof_read.h"
#include "profile.h"

/* What the magnitudes of one value over all samples may add up to. */
#define MT_PROFILE_MAX_TOTAL ((uint64_t)1 << 62)

/*
 * Read PATH into *P (release it with mt_profile_free).  LIM as for
 * mt_pprof_read_limits (NULL: the defaults); a text profile may take
 * memory up to its budget of decoding (pprof_read.h) for a protobuf of its
 * size.  A profile whose values add up to more than MT_PROFILE_MAX_TOTAL
 * is refused.  Returns 0, or a negative errno with a one-line reason in ERR.
 */
int mt_profile_read(const char *path, const struct mt_pprof_limits *lim,
		    struct mt_profile *p, char *err, size_t errlen);

#endif
