/* SPDX-License-Identifier: MIT */
/*
 * libs_cache.h: the files an executable uses (itself and the libraries
 * `ld.so --list` names, mt_objects_of_exe), kept per executable, so that
 * a program exec'd again and again (a shell's loop, a build's compiler) is
 * listed once.  An executable is known by its device, inode, size and
 * modification time; what was kept is listed again when the loader's
 * cache (/etc/ld.so.cache) changed, or when one of its libraries is
 * another file now.
 */
#ifndef MEMTRACE_LIBS_CACHE_H
#define MEMTRACE_LIBS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

#include "file_id.h"
#include "proc_files.h"

struct mt_libs_entry {
	struct mt_file_id id;     /* the executable's */
	struct mt_objects files;  /* the executable first */
};

struct mt_libs_cache {
	struct mt_libs_entry *v;
	size_t n;
	struct timespec ld_cache;  /* /etc/ld.so.cache's when listed */
};

/* mt_objects_of_exe(EXE, OBJS), from C when EXE was listed already. */
int mt_libs_of_exe(struct mt_libs_cache *c, const char *exe,
		   struct mt_objects *objs);

void mt_libs_cache_free(struct mt_libs_cache *c);

#endif
