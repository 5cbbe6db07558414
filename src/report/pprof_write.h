/* SPDX-License-Identifier: MIT */
/*
 * pprof_write.h: write a struct mt_profile as a pprof profile (the
 * profile.proto format of github.com/google/pprof, read by `go tool pprof`).
 *
 * The file has Go's heap-profile layout: four sample types in the order
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes (enum mt_value), "inuse_space" shown by default, and
 * period type space/bytes.  Each sample carries a numeric label "pid" and,
 * when the process name is known, a string label "comm".
 *
 * Locations: a run of inlined frames followed by the frame they are inlined
 * into becomes one Location whose lines list them innermost first, as pprof
 * expects.  Mappings: one per (pid, module path), with the GNU build id of
 * the file when it can be read; frames carry no load addresses, so
 * memory_start/limit are 0 and has_functions is set (pprof does not try to
 * symbolise them again).
 */
#ifndef MEMTRACE_PPROF_WRITE_H
#define MEMTRACE_PPROF_WRITE_H

#include <stdbool.h>
#include <stdint.h>
#include "profile.h"

struct mt_pprof_write_options {
	/*
	 * Sampling period in bytes (Profile.period); 0: the profile's own
	 * (sum.sample_bytes: -s N, or 0 when every allocation was traced).
	 */
	int64_t period;
	/* Collection time in ns since the Unix epoch; 0: the current time. */
	int64_t time_nanos;
	/* Do not open module files to read their build ids. */
	bool no_build_ids;
	/* Write the protobuf without gzip compression. */
	bool uncompressed;
};

/*
 * Write P to PATH (through a temporary file renamed over it, see
 * outfile.h) as a gzip-compressed pprof profile with the default options.
 * Samples whose four values are all zero are left out.  Returns 0 or a
 * negative errno (-EINVAL if P refers to frames it does not have, before
 * PATH is touched; mt_outfile_strerror gives the message).  If writing
 * fails part-way, PATH is left as it was.
 */
int mt_pprof_write(const char *path, const struct mt_profile *p);

/* The same with options; OPTS may be NULL (the defaults: all zero). */
int mt_pprof_write_opts(const char *path, const struct mt_profile *p,
			const struct mt_pprof_write_options *opts);

#endif /* MEMTRACE_PPROF_WRITE_H */
