/* SPDX-License-Identifier: MIT */
/* allocator.h: choosing the object whose malloc family a target uses. */
#ifndef MEMTRACE_ALLOCATOR_H
#define MEMTRACE_ALLOCATOR_H

#include "objects.h"

struct mt_allocator {
	const struct mt_object *obj; /* within the objects it was chosen from */
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

/* "glibc", "jemalloc" or "tcmalloc" for a library's file NAME, else NULL. */
const char *mt_allocator_family(const char *name);

#endif
