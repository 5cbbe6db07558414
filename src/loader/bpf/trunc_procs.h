/* SPDX-License-Identifier: MIT */
/*
 * trunc_procs.h: which processes the stacks cut short are of, for -v.
 * The header's `truncated stacks:` line counts every process traced;
 * system-wide that is the machine's other programs too.  The BPF walk
 * counts its cuts (and the copies lost) per process in "trunc_procs"
 * (bpf/unwind.h); the loader's deferred walks add theirs.
 */
#ifndef MEMTRACE_TRUNC_PROCS_H
#define MEMTRACE_TRUNC_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>
#include "memleak.h"

struct memleak_bpf;

/* A process's stacks cut short, by reason (enum mt_trunc_reason). */
struct mt_trunc_count {
	uint32_t pid;              /* 0: other processes (the map was full) */
	char comm[16];             /* "" when not known */
	uint64_t n[MT_TRUNC__COUNT];
};

/* Add N to reason R of PID in *V (*NV entries; grown as needed).  0, or
 * -ENOMEM. */
int mt_trunc_count_add(struct mt_trunc_count **v, size_t *nv, uint32_t pid,
		       int r, uint64_t n);

/* Process PID has exited and been harvested: its entry in SKEL's map is
 * moved into the loader's (said by mt_trunc_procs_say()), so that the map
 * (MT_TRUNC_PROCS entries) holds the living and a long run's later
 * processes are not all "other processes". */
void mt_trunc_procs_harvest(const struct memleak_bpf *skel, uint32_t pid);

/* What mt_trunc_procs_harvest() kept goes. */
void mt_trunc_procs_free(void);

/*
 * Say on OUT, one line a process, most first, the stacks cut short of
 * each process in SKEL's map, those harvested, plus those of EXTRA (NEXTRA,
 * the loader's own); NAME(CTX, PID) names a process (may be NULL, or say NULL: then
 * the name it had at its first cut).
 */
void mt_trunc_procs_say(const struct memleak_bpf *skel,
			const struct mt_trunc_count *extra, size_t nextra,
			const char *(*name)(void *ctx, uint32_t pid), void *ctx,
			FILE *out);

#endif
