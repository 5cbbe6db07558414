/* SPDX-License-Identifier: MIT */
/*
 * proc_dwfl.h: a libdwfl session describing one traced process, built from
 * the modules the loader captured (struct mt_process).
 */
#ifndef MEMTRACE_PROC_DWFL_H
#define MEMTRACE_PROC_DWFL_H

#include <elfutils/libdwfl.h>
#include "profile.h"

/*
 * Report every module of PROC at its load bias.  A module whose ELF file
 * cannot be opened or does not fit is skipped.  Returns NULL only when
 * libdwfl cannot allocate the session.  PROC must outlive the session.
 */
Dwfl *mt_proc_dwfl_open(const struct mt_process *proc);

/* The struct mt_module that MOD was reported from, or NULL. */
const struct mt_module *mt_proc_dwfl_module(Dwfl_Module *mod);

#endif /* MEMTRACE_PROC_DWFL_H */
