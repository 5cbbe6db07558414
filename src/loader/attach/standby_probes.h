/* SPDX-License-Identifier: MIT */
/*
 * standby_probes.h: probes placed ahead on the allocator libraries
 * installed on the machine (installed_allocators.h) that the traced
 * processes do not map yet.  Uprobes belong to a file, so the kernel puts
 * them in place as a process maps it (LD_PRELOAD, dlopen): its first call
 * is traced, with no race against memtrace noticing the new mapping.  A
 * file on standby is named (allocator line, C++ new/delete) only once a
 * traced process is seen to map it.
 */
#ifndef MEMTRACE_STANDBY_PROBES_H
#define MEMTRACE_STANDBY_PROBES_H

#include <stdbool.h>
#include <sys/types.h>

#include "probes.h"
#include "proc_files.h"

struct memleak_bpf;

struct mt_standby {
	struct mt_objects files; /* probed, by their real paths */
	bool *cxx;               /* files.v[i] defines new/delete */
	bool *named;             /* files.v[i] was seen mapped */
};

/*
 * Probe, in P, each installed allocator library that is not in SKIP (the
 * files probed already): its malloc family when it is jemalloc or tcmalloc
 * (a libc's too with LIBC_FAMILY), and the new/delete it defines.  A file
 * that cannot be probed is left out.  Nothing is probed ahead with perf
 * event links (MT_LINK_PERF: slow to detach, one by one).  Returns 0, or
 * -errno: -EOPNOTSUPP as
 * mt_probes_attach_object, -ENOMEM.
 */
int mt_standby_probe(struct mt_standby *sb, struct mt_probes *p,
		     struct memleak_bpf *skel, const char *prefix,
		     const struct mt_objects *skip, bool libc_family);

/* Whether O (by identity) is one of SB's files. */
bool mt_standby_has(const struct mt_standby *sb, const struct mt_object *o);

/*
 * A traced process maps the file with identity DEV/INO (DEV 0: the one at
 * PATH, as /proc/PID/maps shows it).  If it is on standby and not named
 * yet, its new/delete are noted in P and the file is returned (for the
 * caller's own line); else NULL.
 */
const struct mt_object *mt_standby_mapped(struct mt_standby *sb,
					  struct mt_probes *p, dev_t dev,
					  ino_t ino, const char *path);

void mt_standby_free(struct mt_standby *sb);

#endif
