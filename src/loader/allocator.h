/* SPDX-License-Identifier: MIT */
/* allocator.h: finding the file whose malloc family a target really uses. */
#ifndef MEMTRACE_ALLOCATOR_H
#define MEMTRACE_ALLOCATOR_H

#include <limits.h>
#include <sys/types.h>

struct mt_allocator {
	char path[PATH_MAX + 64]; /* file to attach uprobes to, as memtrace opens it */
	char shown[PATH_MAX];     /* the path the target knows it by */
	const char *kind;         /* "glibc" or "static executable" */
};

/*
 * For a running process: the libc it maps (opened through /proc/PID/root, so
 * a process in a container works), else its executable if that defines
 * malloc.  Returns 0, -ESRCH (no such process) or -ENOENT (nothing to probe).
 */
int mt_allocator_for_pid(pid_t pid, struct mt_allocator *a);

/*
 * For an executable about to be started: the system libc when it is
 * dynamically linked, else the executable if it defines malloc.
 */
int mt_allocator_for_exe(const char *exe, struct mt_allocator *a);

#endif
