/* SPDX-License-Identifier: MIT */
/*
 * plan_cache.h: the probe plans made already, per file and role, so that
 * a file planned once (its symbols looked up, its prologues analysed) is
 * not read again when another process, or another image of the same
 * process (exec), maps it.  A file is known by its device, inode, size and
 * modification time: one rewritten in place is planned again.
 */
#ifndef MEMTRACE_PLAN_CACHE_H
#define MEMTRACE_PLAN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

#include "file_id.h"
#include "plan.h"

/* A file, and what is planned in it. */
struct mt_plan_key {
	struct mt_file_id id;
	bool alloc_family;  /* its malloc family too */
	bool leaf;          /* malloc and calloc marked MT_COOKIE_LEAF */
	bool mmap;          /* its mmap too (--mmap, a libc) */
};

struct mt_plan_entry {
	struct mt_plan_key key;
	struct mt_plan plan;  /* path NULL: each use has its own */
	bool defines_cxx;     /* the file defines operator new or delete */
	bool has_mmap;        /* its mmap family was found */
};

struct mt_plan_cache {
	struct mt_plan_entry *v;
	size_t n;
};

/* KEY for the file at PATH (identity DEV, INO) in a role.  Returns 0 or
 * -errno (the file cannot be looked at: plan it without the cache). */
int mt_plan_key_of(struct mt_plan_key *key, const char *path, dev_t dev,
		   ino_t ino, bool alloc_family, bool leaf, bool mmap);

/* The entry for KEY, or NULL. */
const struct mt_plan_entry *mt_plan_cache_find(const struct mt_plan_cache *c,
					       const struct mt_plan_key *key);

/* Keep a copy of E (its plan's path is not kept).  Returns 0 or -ENOMEM. */
int mt_plan_cache_add(struct mt_plan_cache *c, const struct mt_plan_entry *e);

void mt_plan_cache_free(struct mt_plan_cache *c);

#endif
