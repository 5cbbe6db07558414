/* SPDX-License-Identifier: MIT */
/*
 * system.h: system-wide tracing.  Finds every allocator file any process
 * maps (each libc, including containers', jemalloc, tcmalloc, libstdc++,
 * static executables that define malloc) and probes it for all processes;
 * keeps the mappings of the processes that use them; moves what an exited
 * process left out of the BPF maps, so they do not fill up.
 */
#ifndef MEMTRACE_SYSTEM_H
#define MEMTRACE_SYSTEM_H

#include <stdbool.h>
#include <stdint.h>

#include "proc_files.h"
#include "probes.h"
#include "standby_probes.h"
#include "profile.h"

struct memleak_bpf;
struct mt_family;
struct ring_buffer;

struct mt_system {
	const char *prefix;          /* --symbol-prefix */
	struct mt_objects seen;      /* files already looked at (probed or not) */
	struct mt_standby standby;   /* installed allocators probed ahead */
	struct mt_probes *standby_probes; /* where they are */
	size_t nprobed;              /* of them, files with probes */
	char probed[2048];           /* their paths, for the report header */
	struct mt_process *procs;    /* processes that use a probed file */
	bool *gone;                  /* procs[i] has exited */
	bool *alive;                 /* procs[i] was seen by this scan */
	size_t nprocs;
	struct mt_raw_profile dead;  /* stacks and blocks of exited processes */
	uint64_t last_scan_ns;
	struct ring_buffer *new_pids; /* first allocations of new processes,
					 and execs */
	struct memleak_bpf *skel;    /* set by mt_system_wake_fd */
	/* -- CMD following its children: only the processes in the BPF
	 * program's "followed" map are looked at (and all of those,
	 * whatever they map), and the files they map are probed for each
	 * one apart, in this family; NULL: every process using a probed
	 * file, whose files are probed for all processes. */
	struct mt_family *family;
	/* The registry each process is read into (images.h); NULL: read
	 * here, /proc alone.  System-wide, a scan drops the images of the
	 * processes it no longer finds. */
	struct mt_images *images;
	bool verbose;                /* -v: say what a scan found */
	uint64_t scans;              /* scans of /proc done */
	uint64_t scan_ns;            /* and the time they took */
	/* Found by a scan after the first, that no event (a process's first
	 * allocation, ld.so's hook for a dlopen) had told of: an allocator
	 * file newly mapped, or files a process maps that its image read
	 * at the last event did not. */
	uint64_t scan_finds;
	size_t dl_hooks;             /* dynamic loaders whose hook is probed */
	uint64_t dlopens;            /* dlopens they told of, looked at */
	/* Told of each process harvested (exited, what it left moved into
	 * dead), with its entry; NULL: none. */
	void (*on_harvested)(void *ctx, struct mt_process *p);
	void *harvest_ctx;
	/* Called (when set) between processes during a scan: a scan takes
	 * tens of milliseconds, and the ring of stack copies a program's
	 * first run fills in fewer must be read meanwhile. */
	void (*between)(void *ctx);
	void *between_ctx;
};

/*
 * Look at every process: probe new allocator files, follow new processes,
 * harvest exited ones.  Returns 0, or -errno when probing failed
 * (-EOPNOTSUPP: load without uprobe_multi and start again).
 */
int mt_system_scan(struct mt_system *sys, struct memleak_bpf *skel,
		   struct mt_probes *probes);

/*
 * Follow the processes that allocated for the first time (their mappings
 * are read at once, before a short-lived one is gone), and mt_system_scan
 * at most once a second.
 */
void mt_system_tick(struct mt_system *sys, struct memleak_bpf *skel,
		    struct mt_probes *probes);

/*
 * The mappings of process PID from its image IMG, just read (images.h):
 * at its exit stop, its image still there, or held at ld.so's hook.  PID
 * is followed from now on if it was not.
 */
struct mt_image;
void mt_system_read_image(struct mt_system *sys, uint32_t pid,
			  const struct mt_image *img);

/*
 * Probe the allocator libraries installed on this machine that no process
 * maps yet (installed_allocators.h), so that a process that later gets one
 * (LD_PRELOAD, dlopen) is traced from its first call: the kernel places the
 * probes as it maps the file.  Such a file is named on the allocator line
 * once a process is seen to map it.  Returns 0 or -errno (-EOPNOTSUPP as
 * mt_system_scan).
 */
int mt_system_probe_installed(struct mt_system *sys, struct memleak_bpf *skel,
			      struct mt_probes *probes);

/*
 * What mt_system_scan does, for process PID alone: as ld.so's hook tells
 * of its dlopen, the allocator it may bring is probed at once, and its
 * image read into the registry, not at the next scan.  System-wide
 * (where mt_system_scan probes every ld.so's hook), a process that has
 * not allocated since its start or exec is left to the event of its first
 * allocation (the hook also runs as a program loads).  Returns 0 or
 * -errno when probing failed.
 */
int mt_system_look_at(struct mt_system *sys, struct memleak_bpf *skel,
		      struct mt_probes *probes, uint32_t pid);

/* A descriptor that becomes readable when a new process allocates; -errno. */
int mt_system_wake_fd(struct mt_system *sys, struct memleak_bpf *skel);

/*
 * PROC's mappings (captured while it ran, with open files) replace those
 * the scans kept for its pid, which is added when the scans never saw it.
 * PROC's are moved (it is left empty).  Returns 0 or -ENOMEM.
 */
int mt_system_adopt(struct mt_system *sys, struct mt_process *proc);

/*
 * A followed process ran its parent's image from its fork to its exec (if
 * any): it gets the mappings of the nearest ancestor whose were read,
 * those that overlap none of its own.  That symbolises what a forked
 * process allocated before its exec, and all of one that exited before
 * its own mappings could be read.  Returns 0 or -ENOMEM.
 */
int mt_system_inherit(struct mt_system *sys, struct memleak_bpf *skel);

void mt_system_free(struct mt_system *sys);

#endif
