/* SPDX-License-Identifier: MIT */
/*
 * file_addrs.h: the files symbolisation knows, each with its libdwfl
 * session (file_dwfl.h, opened on first use), and the frames each address
 * of a file resolves to, shared by every process that maps the file,
 * wherever it is loaded: keyed by the file (its identity and the path it
 * was mapped as) and the address relative to its load bias.  A process's
 * dlopen adds a file (or finds it known); nothing is made again.  A family
 * of short processes all mapping libc has libc's addresses resolved once,
 * not once per process.
 */
#ifndef MEMTRACE_FILE_ADDRS_H
#define MEMTRACE_FILE_ADDRS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdwfl.h>
#include "itab.h"
#include "profile.h"

/*
 * A mapped file as symbolisation sees it: its identity (stat(2)'s device
 * and inode; 0, 0 when it could not be known, the path and build id then
 * tell it), the path the process mapped (frames name it) and its build id
 * (a file rewritten in place keeps its inode, not its build id).
 */
struct mt_sym_file {
	uint64_t dev, ino;
	const char *path;
	const char *build_id;
};

/*
 * The key of module M's file: M's dev/ino if the loader gave them, else
 * fstat of its descriptor, else stat of its path, else 0, 0.  Returns 0,
 * or -1 when M has no path.  KEY's strings are M's.
 */
int mt_sym_file_of(const struct mt_module *m, struct mt_sym_file *key);

/* The files and their addresses; zero-initialised is empty. */
struct mt_file_addrs {
	struct mt_file_addrs_file *files;
	size_t nfiles, files_cap;
	struct mt_itab file_tab;
	struct mt_file_addrs_addr *addrs;
	size_t naddrs, addrs_cap;
	struct mt_itab addr_tab;
	size_t sessions;          /* libdwfl sessions opened */
};

/* The index of file KEY in *FILE, added if new.  0 or -ENOMEM/-EOVERFLOW. */
int mt_file_addrs_file(struct mt_file_addrs *fa, const struct mt_sym_file *key,
		       uint32_t *file);

/*
 * The session of FILE, opened from module M (a mapping of that file) on
 * first use, in *DWFL.  Returns 0 or -ENOMEM.
 */
int mt_file_addrs_dwfl(struct mt_file_addrs *fa, uint32_t file,
		       const struct mt_module *m, Dwfl **dwfl);

/*
 * The frames of address REL (relative to the load bias) of FILE: true and
 * *FIRST, *COUNT (the caller's: what mt_file_addrs_add stored) if known.
 */
bool mt_file_addrs_find(const struct mt_file_addrs *fa, uint32_t file,
			uint64_t rel, size_t *first, size_t *count);

/* Remember FIRST, COUNT for (FILE, REL).  Returns 0 or -ENOMEM/-EOVERFLOW. */
int mt_file_addrs_add(struct mt_file_addrs *fa, uint32_t file, uint64_t rel,
		      size_t first, size_t count);

/* Free FA, its sessions closed. */
void mt_file_addrs_free(struct mt_file_addrs *fa);

#endif /* MEMTRACE_FILE_ADDRS_H */
