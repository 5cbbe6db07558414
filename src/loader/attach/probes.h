/* SPDX-License-Identifier: MIT */
/*
 * probes.h: attaching memtrace's two BPF programs (one entry, one return)
 * to the allocator's functions and to C++ operator new/delete.
 */
#ifndef MEMTRACE_PROBES_H
#define MEMTRACE_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "allocator.h"
#include "proc_files.h"

struct memleak_bpf;
struct bpf_link;
struct mt_plan;
struct mt_plan_cache;

/* One attachment: a libbpf link (perf-event uprobe) or a raw link fd, in
 * the file DEV, INO. */
struct mt_probe_link {
	struct bpf_link *link;
	int fd;
	dev_t dev;
	ino_t ino;
};

/*
 * How probes are attached: one perf-event uprobe per function and program;
 * one uprobe_multi link per object and program (kernels from 6.6); or, for
 * sampling, uprobe sessions (6.13), where an entry that records nothing
 * cancels its return probe.
 */
enum mt_link_mode {
	MT_LINK_PERF,
	MT_LINK_MULTI,
	MT_LINK_SESSION,
};

struct mt_probes {
	struct mt_probe_link *links;
	size_t nlinks, cap;
	size_t nfuncs;          /* functions probed */
	pid_t pid;              /* as given to mt_probes_attach */
	bool want_mmap;         /* --mmap was asked for */
	bool mmap;              /* mmap/munmap/mremap probed (in libc) */
	enum mt_link_mode mode;
	char cxx[1024];         /* objects whose new/delete are probed */
	struct mt_plan *plans;  /* what the links attach, per object */
	size_t nplans;
	struct mt_plan_cache *cache; /* plans made already (NULL: none) */
};

/*
 * Attach, for process PID, to the malloc family in ALLOC (names prefixed
 * with PREFIX) and to operator new/delete in every object of OBJS that
 * defines them, and with MMAP to mmap, munmap and mremap in libc.
 * Return probes go in before entry probes, so that every
 * entry recorded has its return.  MODE says how (the programs must have
 * been loaded for it); -EOPNOTSUPP then means: load the programs again for
 * the next mode down and retry.  Returns 0 or -errno.
 */
int mt_probes_attach(struct mt_probes *p, struct memleak_bpf *skel, pid_t pid,
		     const struct mt_allocator *alloc, const char *prefix,
		     const struct mt_objects *objs, enum mt_link_mode mode,
		     bool mmap);
/* An empty set of probes for PID (-1: every process). */
void mt_probes_init(struct mt_probes *p, pid_t pid, enum mt_link_mode mode,
		    bool mmap);

/*
 * One more object, e.g. a library the target loaded later (dlopen), or a
 * libc found by system-wide tracing: probe the operator new/delete it
 * defines, with ALLOC_FAMILY its malloc family too (names prefixed with
 * PREFIX), and with --mmap a libc's mmap.  Returns 0 or -errno.
 */
int mt_probes_attach_object(struct mt_probes *p, struct memleak_bpf *skel,
			    const struct mt_object *obj, bool alloc_family,
			    const char *prefix);

/* Whether OBJ is the dynamic loader (glibc's ld-linux-x86-64.so.2, ...):
 * mt_probes_attach_object probes its hook for debuggers (a dlopen). */
bool mt_probes_dynamic_loader(const struct mt_object *obj);

/*
 * mt_probes_attach_object for a file no process maps yet (an installed
 * allocator): its new/delete are not named on P's line (*DEFINES_CXX says
 * whether it has them) until mt_probes_note_cxx, when a process maps it.
 */
int mt_probes_attach_standby(struct mt_probes *p, struct memleak_bpf *skel,
			     const struct mt_object *obj, bool alloc_family,
			     const char *prefix, bool *defines_cxx);
void mt_probes_note_cxx(struct mt_probes *p, const struct mt_object *obj);

/*
 * OBJ, a dynamic loader (ld.so), gets a probe on its hook for debuggers
 * alone (called around the mapping of every dlopen's objects): for P's
 * processes, the loader learns of each dlopen as it happens (system-wide,
 * where no image's probes bring it).  Returns 0, -EINVAL when OBJ is no
 * dynamic loader, -ENOENT when it has no hook, or -errno.
 */
int mt_probes_attach_dl_hook(struct mt_probes *p, struct memleak_bpf *skel,
			     const struct mt_object *obj);

/*
 * P's process exec'd and stops before its new image runs: P becomes the
 * probes of that image (as mt_probes_attach makes them, the plans from
 * P->cache).  With KEEP (the process's task is the one P's links were
 * made for: its main thread exec'd), the links of each file whose plan is
 * the same in the new image stay, the others of files it maps are
 * detached now; those of files it does not map go to GONE (empty before),
 * to be detached later.  Returns 0 or -errno (then P holds what it still
 * has, to be detached).
 */
int mt_probes_exec(struct mt_probes *p, struct memleak_bpf *skel,
		   const struct mt_allocator *alloc, const char *prefix,
		   const struct mt_objects *objs, bool keep,
		   struct mt_probes *gone);

/*
 * The probes LIKE has, attached for process PID instead (a process forked
 * by LIKE's, its files mapped where its parent's are): no file is read
 * again.  Returns 0 or -errno (then P is empty).
 */
int mt_probes_attach_like(struct mt_probes *p, struct memleak_bpf *skel,
			  pid_t pid, const struct mt_probes *like);

/* TO takes FROM's links; FROM keeps only its description (nfuncs, cxx,
 * mmap, mode), detaching it then detaches nothing. */
void mt_probes_move(struct mt_probes *to, struct mt_probes *from);

void mt_probes_detach(struct mt_probes *p);

/*
 * How many of the allocator functions P probes (in all its files) have the
 * probe on an instruction the kernel single-steps (two traps a call
 * instead of one); *TOTAL (if not NULL): how many functions in all.
 */
size_t mt_probes_stepped(const struct mt_probes *p, size_t *total);

/* -v: one line per probe: its function, file, offset from the function's
 * entry, and whether the kernel emulates or single-steps it. */
void mt_probes_describe(const struct mt_probes *p, FILE *out);

/* The attach types BPF programs are loaded with for MT_LINK_MULTI and
 * MT_LINK_SESSION (libbpf 1.1 knows neither). */
#define MT_BPF_TRACE_UPROBE_MULTI 48
#define MT_BPF_TRACE_UPROBE_SESSION 57

#endif
