/* SPDX-License-Identifier: MIT */
/*
 * proc_dwfl.h: a libdwfl session describing one traced process, built from
 * the modules the loader captured (struct mt_process).
 */
#ifndef MEMTRACE_PROC_DWFL_H
#define MEMTRACE_PROC_DWFL_H

#include <elfutils/libdwfl.h>
#include "profile.h"
#include "sym_index.h"

/*
 * Report every module of PROC at its load bias.  A module whose ELF file
 * cannot be opened or does not fit is skipped.  Returns NULL only when out
 * of memory.  PROC must outlive the session; close it with
 * mt_proc_dwfl_close.
 */
Dwfl *mt_proc_dwfl_open(const struct mt_process *proc);

/* End a session from mt_proc_dwfl_open (NULL is ignored). */
void mt_proc_dwfl_close(Dwfl *dwfl);

/* The struct mt_module that MOD was reported from, or NULL. */
const struct mt_module *mt_proc_dwfl_module(Dwfl_Module *mod);

/*
 * The compilation unit DIE covering PC (a run-time address) in MOD, like
 * dwfl_module_addrdie, but also right for units missing from .debug_aranges
 * (clang emits none by default).  Sets
 * *CUDIE (NULL when no unit covers PC) and *BIAS.  Returns 0 or -ENOMEM.
 */
int mt_proc_dwfl_addrdie(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Die **cudie,
			 Dwarf_Addr *bias);

/*
 * MOD's function symbols by address (built on first use, kept with the
 * module): *SYMS, or NULL for a module not reported by mt_proc_dwfl_open.
 * Returns 0 or -ENOMEM.
 */
int mt_proc_dwfl_symbols(Dwfl_Module *mod, const struct mt_sym_index **syms);

#endif /* MEMTRACE_PROC_DWFL_H */
