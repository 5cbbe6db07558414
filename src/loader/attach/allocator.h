/* SPDX-License-Identifier: MIT */
/* allocator.h: choosing the object whose malloc family a target uses. */
#ifndef MEMTRACE_ALLOCATOR_H
#define MEMTRACE_ALLOCATOR_H

#include "proc_files.h"

struct mt_allocator {
	/* Index in the objects it was chosen from (which may grow, so no
	 * pointer into them); see mt_allocator_object(). */
	size_t index;
	const char *kind;            /* "glibc", "jemalloc", "tcmalloc", ... */
};

/*
 * WANT is NULL or "auto" (the executable if it defines malloc itself, else a
 * mapped jemalloc or tcmalloc, else libc), "libc", "jemalloc", "tcmalloc",
 * or the path of a mapped library.  PREFIX ("" or e.g. "je_") is put before
 * the malloc family's names.  Returns 0, or -ENOENT when nothing matches.
 */
int mt_allocator_choose(const struct mt_objects *objs, const char *want,
			const char *prefix, struct mt_allocator *a);

/* The object A names among OBJS, the objects it was chosen from. */
static inline const struct mt_object *
mt_allocator_object(const struct mt_allocator *a, const struct mt_objects *objs)
{
	return a->kind && a->index < objs->n ? &objs->v[a->index] : NULL;
}

/* "glibc", "jemalloc" or "tcmalloc" for a library's file NAME, else NULL. */
const char *mt_allocator_family(const char *name);

#endif
