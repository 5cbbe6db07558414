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
 * expects; a frame that could not be symbolised becomes a Location with an
 * address and a mapping but no lines, for pprof (or a symbol server) to
 * symbolise later.  A Location's address is on the call instruction (the
 * return address less 1), as in pprof's own conversions.
 *
 * Mappings: one per (pid, module path), with the range, file offset and GNU
 * build id that struct mt_map (profile.h) gives for it: the file's
 * executable mapping in /proc/PID/maps at trace time, and the build id read
 * from the descriptor the loader held.  has_functions, has_filenames,
 * has_line_numbers and has_inline_frames are each set only when every
 * location of the mapping has what they say (inline frames: resolved with
 * DWARF, not from a symbol table).
 *
 * memtrace's header facts (events, drops, allocator, ...) are strings of
 * the string table that nothing refers to (pprof_facts.h): pprof ignores
 * them, mt_pprof_read reads them back.
 */
#ifndef MEMTRACE_PPROF_WRITE_H
#define MEMTRACE_PPROF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
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
	/* Leave the build ids out. */
	bool no_build_ids;
	/* Write the protobuf without gzip compression. */
	bool uncompressed;
	/* alloc_space shown by default, as Go's /debug/pprof/allocs (else
	 * inuse_space). */
	bool allocs_default;
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

/*
 * Encode P into a new buffer *OUT of *OUTLEN bytes (the caller frees it):
 * the bytes mt_pprof_write_opts writes to its file.  OPTS may be NULL.
 * Returns 0, -EINVAL or -ENOMEM.
 */
int mt_pprof_encode(const struct mt_profile *p,
		    const struct mt_pprof_write_options *opts, uint8_t **out,
		    size_t *outlen);

#endif /* MEMTRACE_PPROF_WRITE_H */
