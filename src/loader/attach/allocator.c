// SPDX-License-Identifier: MIT
/* allocator.c: which object's malloc family to probe. */
#include "allocator.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elf_syms.h"

static bool defines_malloc(const struct mt_object *o, const char *prefix)
{
	char name[64];
	uint64_t off;

	snprintf(name, sizeof(name), "%smalloc", prefix);
	return mt_elf_func_offset(o->path, name, &off) == 0;
}

static bool is_libc(const char *name)
{
	size_t len = strlen(name);

	return strcmp(name, "libc.so.6") == 0 ||
	       (strncmp(name, "libc-", 5) == 0 && len > 8 &&
		strcmp(name + len - 3, ".so") == 0);
}

const char *mt_allocator_family(const char *name)
{
	if (strncmp(name, "libjemalloc", 11) == 0)
		return "jemalloc";
	if (strncmp(name, "libtcmalloc", 11) == 0)
		return "tcmalloc";
	if (is_libc(name))
		return "glibc";
	return NULL;
}

static int pick(size_t i, const char *kind,
		struct mt_allocator *a)
{
	a->index = i;
	a->kind = kind;
	return 0;
}

int mt_allocator_choose(const struct mt_objects *objs, const char *want,
			const char *prefix, struct mt_allocator *a)
{
	bool any = !want || strcmp(want, "auto") == 0;

	if (want && strcmp(want, "libc") == 0)
		want = "glibc";
	if (any && objs->has_exe && objs->n && defines_malloc(&objs->v[0], prefix))
		return pick(0, "executable", a);
	/* A jemalloc or tcmalloc in the process takes malloc from libc. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = objs->has_exe ? 1 : 0; i < objs->n; i++) {
			const char *fam = mt_allocator_family(mt_object_name(&objs->v[i]));

			if (want && strchr(want, '/')) {
				if (strcmp(objs->v[i].shown, want) == 0)
					return pick(i, "library", a);
				continue;
			}
			if (!fam || (pass == 0 && strcmp(fam, "glibc") == 0))
				continue;
			if ((any || strcmp(fam, want) == 0) &&
			    defines_malloc(&objs->v[i], prefix))
				return pick(i, fam, a);
		}
	}
	return -ENOENT;
}
