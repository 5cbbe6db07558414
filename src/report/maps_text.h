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
#include "line_scan.h"
#include "profile.h"

/*
 * Add the mapping line L describes to PROC's modules: a file mapping
 * starts or extends the module of its path, and its first executable
 * mapping is the module's text.  Other lines (anonymous, [heap],
 * malformed) are ignored.  Returns 0 or -ENOMEM.
 */
int mt_maps_text_line(struct mt_process *proc, struct mt_line l);

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
