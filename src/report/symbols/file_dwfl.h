/* SPDX-License-Identifier: MIT */
/*
 * file_dwfl.h: a libdwfl session describing one mapped file, at its ELF
 * addresses (load bias 0), shared by every process that maps the file
 * wherever it loads it: an address of a process is looked up in it at
 * the address minus the process's load bias of the file.
 */
#ifndef MEMTRACE_FILE_DWFL_H
#define MEMTRACE_FILE_DWFL_H

#include <elfutils/libdwfl.h>
#include "profile.h"
#include "sym_index.h"

/*
 * Report M's file (its descriptor, else its path; a duplicate of the
 * descriptor is taken, M need not outlive the session) at its ELF
 * addresses.  A file that cannot be opened or is no ELF file gives a
 * session without modules.  Returns NULL only when out of memory; close
 * it with mt_file_dwfl_close.
 */
Dwfl *mt_file_dwfl_open(const struct mt_module *m);

/* End a session from mt_file_dwfl_open (NULL is ignored). */
void mt_file_dwfl_close(Dwfl *dwfl);

/*
 * The compilation unit DIE covering PC (an address of the session) in MOD,
 * like dwfl_module_addrdie, but also right for units missing from
 * .debug_aranges (clang emits none by default).  Sets *CUDIE (NULL when no
 * unit covers PC) and *BIAS.  Returns 0 or -ENOMEM.
 */
int mt_file_dwfl_addrdie(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Die **cudie,
			 Dwarf_Addr *bias);

/*
 * MOD's function symbols by address (built on first use, kept with the
 * module): *SYMS, or NULL for a module not reported by mt_file_dwfl_open.
 * Returns 0 or -ENOMEM.
 */
int mt_file_dwfl_symbols(Dwfl_Module *mod, const struct mt_sym_index **syms);

#endif /* MEMTRACE_FILE_DWFL_H */
