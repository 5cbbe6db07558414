/* SPDX-License-Identifier: MIT */
/*
 * per_pid_probes.h: the probes of the processes -- CMD follows, each process its
 * own.  They are attached for that process alone (a pid filter: the kernel
 * puts breakpoints in its address space only, no other program's), at its
 * fork (its parent's probes, before it runs), again at its exec (for its
 * new image's allocator), and released at its exit.
 */
#ifndef MEMTRACE_PER_PID_PROBES_H
#define MEMTRACE_PER_PID_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detacher.h"
#include "proc_files.h"
#include "plan_cache.h"
#include "probes.h"

struct memleak_bpf;

struct mt_family_member {
	uint32_t pid;
	struct mt_probes probes;
	struct mt_objects files;  /* the files looked at for it */
};

struct mt_family {
	const char *allocator;    /* --allocator (NULL: auto) */
	const char *prefix;       /* --symbol-prefix */
	struct mt_family_member *v;
	size_t n;
	bool detached;            /* tracing stopped: no more probes */
	struct mt_detacher exited; /* detaches the probes of those that exit,
				    * and of the files an exec left */
	struct mt_plan_cache plans; /* every member's, per file */
};

/* An empty family; raises the limit on open files (links are files).
 * Returns 0 or -errno (no thread for mt_family_release). */
int mt_family_init(struct mt_family *f, const char *allocator,
		   const char *prefix);

/*
 * Process PID (CMD) has PROBES, attached for it, to the files FILES: the
 * family takes the links (mt_probes_move).  Returns 0 or -ENOMEM.
 */
int mt_family_adopt(struct mt_family *f, uint32_t pid,
		    struct mt_probes *probes, const struct mt_objects *files);

/*
 * Process PID, forked by PARENT, stops before it runs: it gets its
 * parent's probes.  Nothing when PID has probes already or PARENT has none.
 * Returns 0 or -errno.
 */
int mt_family_fork(struct mt_family *f, struct memleak_bpf *skel,
		   uint32_t pid, uint32_t parent);

/*
 * Process PID exec'd and stops before its new image runs: the probes of
 * that image's allocator and new/delete in FILES (its executable and the
 * libraries it will load) replace its old ones.  SAME_TASK: its main
 * thread exec'd (the task its links were made for), so that the links of
 * files it still maps, planned the same, can stay.  Nothing for a process
 * not in the family.  LOADING: ld.so has not loaded the image's libraries
 * yet, and FILES may hold no allocator (a chroot's, an LD_PRELOAD's):
 * then only ld.so's hook is probed, until it is called again when they
 * are mapped.  Returns 0 or -errno (-ENOENT: no allocator among FILES).
 */
int mt_family_exec(struct mt_family *f, struct memleak_bpf *skel,
		   uint32_t pid, const struct mt_objects *files, bool same_task,
		   bool loading);

/*
 * Process PID maps FILES now: those not looked at yet get probes for the
 * new/delete they define (and a jemalloc or tcmalloc its malloc family);
 * each one that cannot be probed is said on stderr.
 */
void mt_family_update(struct mt_family *f, struct memleak_bpf *skel,
		      uint32_t pid, const struct mt_objects *files);

/* Process PID's probes, or NULL when it has none. */
const struct mt_probes *mt_family_probes(struct mt_family *f, uint32_t pid);

/* Process PID exited: its probes go (in the detacher's thread). */
void mt_family_release(struct mt_family *f, uint32_t pid);

/* Every process's probes go, and no more come (tracing stops). */
void mt_family_detach(struct mt_family *f);

void mt_family_free(struct mt_family *f);

#endif
