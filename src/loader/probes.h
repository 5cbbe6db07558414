/* SPDX-License-Identifier: MIT */
/* probes.h: attaching memtrace's BPF programs to an allocator's functions. */
#ifndef MEMTRACE_PROBES_H
#define MEMTRACE_PROBES_H

#include <stddef.h>
#include <sys/types.h>

struct memleak_bpf;
struct bpf_link;

struct mt_probes {
	struct bpf_link **links;
	size_t nlinks;
	size_t nfuncs;   /* allocator functions probed */
};

/*
 * Attach to the malloc family in the ELF file PATH for process PID (-1: every
 * process).  Return probes go in before entry probes, so that every entry
 * recorded has its return.  malloc and free are required; the other
 * functions are probed where the file defines them.  Returns 0 or -errno
 * (-ENOENT when PATH has no malloc or free).
 */
int mt_probes_attach(struct mt_probes *p, struct memleak_bpf *skel, pid_t pid,
		     const char *path);
void mt_probes_detach(struct mt_probes *p);

#endif
