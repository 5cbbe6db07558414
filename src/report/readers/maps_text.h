/* SPDX-License-Identifier: MIT */
/*
 * maps_text.h: the /proc/PID/maps lines that tcmalloc and jemalloc heap
 * profiles end with (MAPPED_LIBRARIES:), turned into the modules of a
 * struct mt_process, so that the profile's addresses are symbolised with
 * the files it names, as they are on this machine.
 */
#ifndef MEMTRACE_MAPS_TEXT_H
#define MEMTRACE_MAPS_TEXT_H

#include <stdbool.h>
#include "itab.h"
#include "line_scan.h"
#include "profile.h"

/* Reading a section into the modules of PROC: { proc } at first. */
struct mt_maps_text {
	struct mt_process *proc;
	size_t cap;              /* of proc->mods */
	struct mt_itab paths;    /* proc->mods by path */
};

/*
 * Add the mapping line L describes to the modules of MT's process: a file
 * mapping starts or extends the module of its path (found by its hash, so
 * that a section of n lines takes time in n), and its first executable
 * mapping is the module's text.  Other lines (anonymous, [heap],
 * malformed) are ignored.  Returns 0 or -ENOMEM.
 */
int mt_maps_text_line(struct mt_maps_text *mt, struct mt_line l);

/* Release MT's index (the modules stay the process's). */
void mt_maps_text_free(struct mt_maps_text *mt);

/*
 * Finish PROC's modules: the load bias of each (from the ELF program
 * headers of the file at its path) and its build id.  A module whose file
 * cannot be read here keeps bias 0 and stays unresolved.
 */
void mt_maps_text_finish(struct mt_process *proc);

/* The module of PROC containing address IP, or NULL. */
const struct mt_module *mt_maps_text_module(const struct mt_process *proc,
					    uint64_t ip);

#endif
