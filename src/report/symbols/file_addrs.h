/* SPDX-License-Identifier: MIT */
/*
 * file_addrs.h: the frames an address of a file resolves to, shared by
 * every process that maps the file, wherever it is loaded: keyed by the
 * file (its identity and the path it was mapped as) and the address
 * relative to its load bias.  A family of short processes all mapping
 * libc has libc's addresses resolved once, not once per process.
 */
#ifndef MEMTRACE_FILE_ADDRS_H
#define MEMTRACE_FILE_ADDRS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "file_id.h"
#include "itab.h"
#include "profile.h"

/*
 * A mapped file as symbolisation sees it: what stat says of the file
 * (device, inode, size, modification time), the path the process mapped
 * (frames name it) and its build id.
 */
struct mt_sym_file {
	struct mt_file_id id;
	const char *path;
	const char *build_id;
};

/*
 * The key of module M's file, from its descriptor (else its path): 0, or
 * -1 when M has no path or the file cannot be stat'ed.  KEY's strings are
 * M's.
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
};

/*
 * The frames of address REL (relative to the load bias) of file KEY: true
 * and *FIRST, *COUNT (the caller's: what mt_file_addrs_add stored) if
 * known.
 */
bool mt_file_addrs_find(const struct mt_file_addrs *fa,
			const struct mt_sym_file *key, uint64_t rel,
			size_t *first, size_t *count);

/* Remember FIRST, COUNT for (KEY, REL).  Returns 0 or -ENOMEM/-EOVERFLOW. */
int mt_file_addrs_add(struct mt_file_addrs *fa, const struct mt_sym_file *key,
		      uint64_t rel, size_t first, size_t count);

void mt_file_addrs_free(struct mt_file_addrs *fa);

#endif /* MEMTRACE_FILE_ADDRS_H */
