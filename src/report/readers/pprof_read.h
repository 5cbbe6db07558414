/* SPDX-License-Identifier: MIT */
/*
 * pprof_read.h: read a pprof profile (gzip-compressed or plain
 * profile.proto, as written by Go's runtime/pprof, `go tool pprof` or
 * mt_pprof_write) into a struct mt_profile.
 *
 * The input is untrusted: sizes are capped (struct mt_pprof_limits), every
 * string index and id is checked, and any problem is an error with a
 * one-line reason, never a crash.
 *
 * Conversion:
 *   - each Line of a Location becomes a frame (innermost first); all but
 *     the last line of a location are inlined.  Identical frames are
 *     stored once.  A frame's addr is the return address (Location address
 *     + 1: pprof's addresses are on the call);
 *   - sample values are matched by sample type name onto enum mt_value
 *     (alloc_objects, alloc_space, inuse_objects, inuse_space).  Missing
 *     types read as 0, others are ignored; a profile with none of the four
 *     is "not a heap profile".  Samples whose four values are 0 are
 *     dropped;
 *   - the numeric label "pid" and the string label "comm" give the sample's
 *     process (pid 0 if absent); procs lists each pid once;
 *   - memtrace's header facts (target, allocator, every counter) come
 *     from the strings mt_pprof_write leaves for them (pprof_facts.h);
 *     what a profile lacks is marked in sum.missing.  Without them,
 *     sum.target is "pid N (COMM)" if the samples come from one process,
 *     else "profile PATH", and the alloc/free object and byte counters are
 *     the sample totals (free = alloc - inuse); duration_s comes from
 *     duration_nanos;
 *   - the mappings that kept samples use become p->maps, each with the pid
 *     of the first sample using it.  A location without lines is an
 *     unresolved frame named "FILE+0xOFFSET" (OFFSET: the ELF address, as
 *     in a trace, when FILE is on this machine with the profile's build
 *     id; else the offset in the file, from the mapping's range) or
 *     "[unknown]+0xADDR".
 */
#ifndef MEMTRACE_PPROF_READ_H
#define MEMTRACE_PPROF_READ_H

#include <stddef.h>
#include "profile.h"

/*
 * The memory budget.  Reading a profile takes memory in proportion to
 * what is in it, and no more than:
 *   - gunzip: the file may decompress to 16 MiB + 32 x its own size (real
 *     profiles compress 2 to 10 times; a gzip bomb, 1000 times, is rejected
 *     while it is being inflated, having used at most that);
 *   - decoding: 64 MiB + 16 x the decompressed size, for protobuf-c's
 *     messages and the samples kept (real profiles need 5 to 12 times; an
 *     input made of many tiny messages, far more, is rejected before it is
 *     decoded: its cost is measured on the wire format, pprof_cost.h).
 * struct mt_pprof_limits.budget (memtrace report --max-memory) replaces
 * both with one figure.  Absolute caps (MT_PPROF_MAX_*) apply on top.
 */
#define MT_PPROF_INFLATE_BASE ((size_t)16 << 20)
#define MT_PPROF_INFLATE_RATIO 32
#define MT_PPROF_DECODE_BASE ((size_t)64 << 20)
#define MT_PPROF_DECODE_RATIO 16

/* Absolute caps. */
#define MT_PPROF_MAX_FILE ((size_t)1 << 30)    /* file as stored */
#define MT_PPROF_MAX_PROTO ((size_t)1 << 30)   /* protobuf after gunzip */
#define MT_PPROF_MAX_MEMORY ((size_t)2 << 30)  /* decoded protobuf in memory */
#define MT_PPROF_MAX_DEPTH 65536               /* frames of one sample */

struct mt_pprof_limits {
	size_t max_file;    /* bytes of the input as stored */
	size_t max_proto;   /* bytes of the encoded profile (after gunzip) */
	size_t max_memory;  /* bytes the decoded message may use; also caps
			       the frame references of all samples */
	size_t budget;      /* 0: the budget above; else the bytes gunzip and
			       decoding may each use (--max-memory) */
};

/*
 * Read the profile at PATH into *P (overwritten; release it with
 * mt_profile_free).  Returns 0, or a negative errno with a one-line reason
 * in ERR (ERRLEN bytes, may be 0) and *P empty: -EINVAL for a malformed or
 * non-heap profile, -EFBIG when a limit is exceeded, -ENOMEM, or the error
 * of open/read.
 */
int mt_pprof_read(const char *path, struct mt_profile *p, char *err,
		  size_t errlen);

/* The same with limits (NULL: the defaults above).  Exceeding the budget
 * is -EFBIG with a reason that names the figure and --max-memory.  The
 * file is read as profile_input.h says: its size checked first, a gzip
 * one inflated as it is read. */
int mt_pprof_read_limits(const char *path, const struct mt_pprof_limits *lim,
			 struct mt_profile *p, char *err, size_t errlen);

/*
 * Parse LEN bytes at DATA (gzip-compressed or not).  NAME stands for the
 * file in sum.target.  LIM may be NULL; max_file applies to LEN.
 */
int mt_pprof_parse(const void *data, size_t len, const char *name,
		   const struct mt_pprof_limits *lim, struct mt_profile *p,
		   char *err, size_t errlen);

/* The same for LEN bytes of protobuf already inflated (profile_input.h):
 * decoded as they are, whatever their first bytes. */
int mt_pprof_decode(const void *data, size_t len, const char *name,
		    const struct mt_pprof_limits *lim, struct mt_profile *p,
		    char *err, size_t errlen);

#endif /* MEMTRACE_PPROF_READ_H */
