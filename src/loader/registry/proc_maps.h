/* SPDX-License-Identifier: MIT */
/* proc_maps.h: parsing /proc/PID/maps. */
#ifndef MEMTRACE_PROC_MAPS_H
#define MEMTRACE_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_mapping {
	uint64_t start, end, offset;
	bool exec;
	char *path;   /* NULL for anonymous mappings */
};

struct mt_maps {
	struct mt_mapping *v;
	size_t n;
};

/* Read /proc/PID/maps.  Returns 0 or -errno (-ESRCH when PID is gone). */
int mt_maps_read(pid_t pid, struct mt_maps *maps);
void mt_maps_free(struct mt_maps *maps);

/* The first file mapping whose basename is libc.so.6 or libc-*.so, or NULL. */
const struct mt_mapping *mt_maps_find_libc(const struct mt_maps *maps);

#endif
