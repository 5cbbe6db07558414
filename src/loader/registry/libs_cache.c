// SPDX-License-Identifier: MIT
/* libs_cache.c: the files of each executable listed already (see
 * libs_cache.h). */
#include "libs_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void free_entry(struct mt_libs_entry *e)
{
	mt_objects_free(&e->files);
}

void mt_libs_cache_free(struct mt_libs_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free_entry(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Forget everything when the loader's cache is not the one listed with. */
static void check_ld_cache(struct mt_libs_cache *c)
{
	struct stat st;
	struct timespec now = { 0, 0 };

	if (stat("/etc/ld.so.cache", &st) == 0)
		now = st.st_mtim;
	if (now.tv_sec != c->ld_cache.tv_sec || now.tv_nsec != c->ld_cache.tv_nsec) {
		mt_libs_cache_free(c);
		c->ld_cache = now;
	}
}

static bool same_exe(const struct mt_libs_entry *e, const struct stat *st)
{
	struct mt_file_id id = mt_file_id_of(st);

	return mt_file_id_eq(&e->id, &id);
}

/* Are E's libraries the files they were? */
static bool libs_unchanged(const struct mt_libs_entry *e)
{
	struct stat st;

	for (size_t i = 1; i < e->files.n; i++) {
		const struct mt_object *o = &e->files.v[i];

		if (stat(o->path, &st) || st.st_dev != o->dev || st.st_ino != o->ino)
			return false;
	}
	return true;
}

/* E's files into OBJS, the executable under the name EXE. */
static int copy_entry(const struct mt_libs_entry *e, const char *exe,
		      struct mt_objects *objs)
{
	struct mt_object self = e->files.v[0];
	int ret;

	objs->v = NULL;
	objs->n = 0;
	objs->has_exe = true;
	self.path = (char *)exe;
	self.shown = (char *)exe;
	ret = mt_objects_add(objs, &self);
	for (size_t i = 1; i < e->files.n && ret == 0; i++)
		ret = mt_objects_add(objs, &e->files.v[i]);
	if (ret)
		mt_objects_free(objs);
	return ret;
}

/* Keep a copy of OBJS for the executable ST.  Without memory, nothing. */
static void remember(struct mt_libs_cache *c, const struct stat *st,
		     const struct mt_objects *objs)
{
	struct mt_libs_entry *nv = realloc(c->v, (c->n + 1) * sizeof(*nv)), e;

	if (!nv)
		return;
	c->v = nv;
	memset(&e, 0, sizeof(e));
	e.id = mt_file_id_of(st);
	e.files.has_exe = true;
	for (size_t i = 0; i < objs->n; i++) {
		if (mt_objects_add(&e.files, &objs->v[i])) {
			free_entry(&e);
			return;
		}
	}
	c->v[c->n++] = e;
}

int mt_libs_of_exe(struct mt_libs_cache *c, const char *exe,
		   struct mt_objects *objs)
{
	struct stat st;
	bool known;
	int ret;

	check_ld_cache(c);
	known = stat(exe, &st) == 0;
	if (known) {
		for (size_t i = 0; i < c->n; i++) {
			if (c->v[i].id.dev != (uint64_t)st.st_dev ||
			    c->v[i].id.ino != (uint64_t)st.st_ino)
				continue;
			if (same_exe(&c->v[i], &st) && libs_unchanged(&c->v[i]))
				return copy_entry(&c->v[i], exe, objs);
			/* Rewritten, or a library changed: listed again. */
			free_entry(&c->v[i]);
			c->v[i] = c->v[--c->n];
			break;
		}
	}
	ret = mt_objects_of_exe(exe, objs);
	/* An executable with its files (not a script: memtrace's libc). */
	if (ret == 0 && known && objs->has_exe && objs->n &&
	    objs->v[0].dev == st.st_dev && objs->v[0].ino == st.st_ino)
		remember(c, &st, objs);
	return ret;
}
