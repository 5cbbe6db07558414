/* SPDX-License-Identifier: MIT */
/*
 * perf_map.h: names of JIT-compiled code from the perf map file the JIT
 * writes by convention (node --perf-basic-prof, Java and .NET agents),
 * as perf and bcc read it: /tmp/perf-PID.map in the process's own root,
 * PID its pid in its own namespace, one "START SIZE name" line per piece
 * of code (START and SIZE in hex).
 *
 * The file is written by the traced process's user, so it is opened in
 * the process's root (symbolic links resolved there, none followed at the
 * end), only if it is a regular file owned by that user or root; at most
 * MT_PERF_MAP_MAX bytes and lines of at most MT_PERF_MAP_LINE are read,
 * the rest ignored.
 */
#ifndef MEMTRACE_PERF_MAP_H
#define MEMTRACE_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define MT_PERF_MAP_MAX (256u << 20)
#define MT_PERF_MAP_LINE 4096

struct mt_perf_sym {
	uint64_t start, end;  /* [start, end) */
	uint32_t seq;         /* its line among the kept ones */
	const char *name;     /* in the map's names */
};

struct mt_perf_map {
	struct mt_perf_sym *v;  /* sorted by start */
	uint64_t *max_end;      /* the highest end of v[0..i] */
	size_t n;
	char *names;
	/* The file it was read from, to read it again when it changed. */
	off_t size;
	struct timespec mtime;
};

/*
 * Parse TEXT (LEN bytes) into M (overwritten).  Lines that are not
 * "START SIZE name" with SIZE > 0, or longer than MT_PERF_MAP_LINE, are
 * skipped.  Returns 0 or -ENOMEM.
 */
int mt_perf_map_parse(struct mt_perf_map *m, const char *text, size_t len);

/*
 * Read the perf map of live process PID into M: replaced when the file
 * changed since M was read (size or modification time), else kept.
 * Returns 0 (M read, or kept), -ENOENT when there is no such file (or
 * no such process, or the file is refused: M is left as it was), or
 * -ENOMEM.
 */
int mt_perf_map_load(struct mt_perf_map *m, uint32_t pid);

/*
 * The symbol containing PC, the last one in the file when several do (a
 * JIT reuses addresses for new code), or NULL.
 */
const struct mt_perf_sym *mt_perf_map_find(const struct mt_perf_map *m,
					   uint64_t pc);

void mt_perf_map_free(struct mt_perf_map *m);

/*
 * The maps of processes that exited: mt_perf_map_keep reads PID's map
 * while it can (a process stopped at its exit) and keeps it for the
 * reports written after it is gone; mt_perf_map_kept gives the last one
 * kept for PID (valid until mt_perf_map_forget_all), or NULL.
 */
void mt_perf_map_keep(uint32_t pid);
const struct mt_perf_map *mt_perf_map_kept(uint32_t pid);
void mt_perf_map_forget_all(void);

#endif /* MEMTRACE_PERF_MAP_H */
