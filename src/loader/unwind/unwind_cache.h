/* SPDX-License-Identifier: MIT */
/*
 * unwind_cache.h: unwind tables (unwind_table.h) kept on disk, so that a
 * file's table is compiled once, not at every run that maps it.
 *
 * A table is found by its file's key: the GNU build id and the size, or
 * for a file without a build id its identity (dev, ino, size, mtime).
 * Each is a file of its own in the cache directory:
 *   /var/cache/memtrace           for root (sudo too: the tables are
 *                                 loaded into the kernel by root, so never
 *                                 from a directory another user can write)
 *   $XDG_CACHE_HOME/memtrace      for another user, or ~/.cache/memtrace
 *   $MEMTRACE_UNWIND_CACHE        when set (tests), with the same checks.
 * The directory must be owned by the effective user and writable by no
 * one else (made 0700); a file is used only when it is a regular file of
 * that user's, writable by no one else, not a symbolic link, and its
 * header (magic, version, key, the memtrace binary's identity, counts)
 * and CRC-32 agree: anything else is a miss, and the table is made again and
 * replaces it.  Files are written to a temporary name and renamed.  The
 * directory is kept under a size bound: the least recently used tables
 * (atime, set on each use) go first.
 */
#ifndef MEMTRACE_UNWIND_CACHE_H
#define MEMTRACE_UNWIND_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_table.h"

#define MT_UNWIND_CACHE_DEFAULT_MAX (256ULL << 20)

/* A file's name in the cache (no '/'): "b-BUILDID-SIZE" or
 * "f-DEV-INO-SIZE-SEC-NSEC", hex. */
#define MT_UNWIND_CACHE_KEY 192
struct mt_unwind_cache_key {
	char name[MT_UNWIND_CACHE_KEY];
};

struct mt_unwind_cache {
	int dirfd;                  /* -1: no cache */
	uint64_t max_bytes;
	char dir[4096];
	/* The key of the memtrace binary that made a table: a table made by
	 * another build is not used (its rows may mean something else). */
	struct mt_unwind_cache_key tool;
	/* Counts, for -v and the tests; the time of the lookups that hit,
	 * on the caller's thread's CPU clock (a busy machine's waits left
	 * out) and in all. */
	uint64_t hits, misses, bad, stored, evicted;
	uint64_t hit_rows, hit_cpu_ns, hit_ns;
};

/* The key of the file open on FD.  0 or -errno. */
int mt_unwind_cache_key_of(int fd, struct mt_unwind_cache_key *k);

/*
 * The cache directory for this user (see above) into BUF.  0, or -errno
 * (-ENOENT: no home to put it in).
 */
int mt_unwind_cache_default_dir(char *buf, size_t len);

/*
 * Open (making it) the cache directory DIR (NULL: the default), of at
 * most MAX_BYTES (0: MT_UNWIND_CACHE_DEFAULT_MAX).  0 or -errno (-EPERM:
 * owned by another user or writable by others); either way
 * mt_unwind_cache_close() releases C, and a failed cache is a cache that
 * never hits.
 */
int mt_unwind_cache_open(struct mt_unwind_cache *c, const char *dir,
			 uint64_t max_bytes);

/*
 * The table of KEY into T.  0; -ENOENT: none; -EPERM: refused (a link,
 * another user's file, writable by others); -EBADMSG: corrupt, truncated
 * or another file's (the caller makes the table and stores it again).
 */
int mt_unwind_cache_lookup(struct mt_unwind_cache *c,
			   const struct mt_unwind_cache_key *key,
			   struct mt_unwind_table *t);

/* Keep T as KEY's table, then evict the least recently used tables
 * past the bound.  0 or -errno (-EFBIG: T alone is over the bound). */
int mt_unwind_cache_store(struct mt_unwind_cache *c,
			  const struct mt_unwind_cache_key *key,
			  const struct mt_unwind_table *t);

void mt_unwind_cache_close(struct mt_unwind_cache *c);

/* The file name of KEY in the cache directory (for the tests). */
void mt_unwind_cache_file_name(const struct mt_unwind_cache_key *key,
			       char *buf, size_t len);

#endif
