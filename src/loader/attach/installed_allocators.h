/* SPDX-License-Identifier: MIT */
/*
 * installed_allocators.h: the allocator libraries (jemalloc, tcmalloc, a
 * libc) and libstdc++ installed where the dynamic loader looks for
 * libraries, so that system-wide tracing can probe them before a process
 * that gets one by LD_PRELOAD or dlopen maps it: the kernel then places
 * the probes as the file is mapped, and no call is missed.
 */
#ifndef MEMTRACE_INSTALLED_ALLOCATORS_H
#define MEMTRACE_INSTALLED_ALLOCATORS_H

#include "proc_files.h"

/*
 * Each such 64-bit x86-64 shared object, once (by identity), in the
 * directories CONF names ("include" lines followed; NULL: /etc/ld.so.conf
 * and ld.so's default directories too), by its real path.  Returns 0 or
 * -ENOMEM; OUT is to be freed with mt_objects_free().
 */
int mt_installed_allocators(const char *conf, struct mt_objects *out);

#endif
