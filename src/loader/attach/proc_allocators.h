/* SPDX-License-Identifier: MIT */
/*
 * proc_allocators.h: which allocator each exec'd image of a traced family
 * uses, for the report's allocator line.  `sh -c 'LD_PRELOAD=libjemalloc
 * ./a; ./a'` runs one image on jemalloc and one on glibc: the line names
 * both, each with the processes that used it.
 */
#ifndef MT_PROC_ALLOCATORS_H
#define MT_PROC_ALLOCATORS_H

#include <stddef.h>
#include <stdint.h>

#define MT_PROC_ALLOC_NAME 600

struct mt_proc_alloc {
	uint32_t pid;
	uint64_t dev, ino;             /* the allocator's file: its identity */
	char name[MT_PROC_ALLOC_NAME]; /* "jemalloc /usr/lib/.../libjemalloc.so.2" */
};

struct mt_proc_allocs {
	struct mt_proc_alloc *v;
	size_t n, cap;
};

/*
 * Process PID's image now uses allocator NAME, whose file is DEV/INO (a
 * later exec replaces it).  Processes with the same file share a name on
 * the line, whatever path each saw it by (/lib or /usr/lib).
 */
int mt_proc_allocs_set(struct mt_proc_allocs *a, uint32_t pid, uint64_t dev,
		       uint64_t ino, const char *name);

/* The allocator process PID's image uses, or NULL if none was named. */
const char *mt_proc_allocs_of(const struct mt_proc_allocs *a, uint32_t pid);

/* Name of process PID for the line ("?" is fine), from the caller. */
typedef const char *(*mt_proc_comm_fn)(void *arg, uint32_t pid);

/*
 * The allocator line into OUT (size N): one allocator, its name alone; more,
 * each name followed by its processes, "NAME (pid 1 a, pid 2 b); NAME2
 * (pid 3 c)", MAIN's first, then in the order they were named.  Returns
 * the number of distinct allocators (0: OUT is "").
 */
size_t mt_proc_allocs_line(const struct mt_proc_allocs *a, uint32_t main_pid,
			   mt_proc_comm_fn comm, void *arg, char *out, size_t n);

void mt_proc_allocs_free(struct mt_proc_allocs *a);

#endif
