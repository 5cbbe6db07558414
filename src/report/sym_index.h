/* SPDX-License-Identifier: MIT */
/*
 * sym_index.h: the public name of a function, as valgrind and perf print
 * it, from a module's ELF symbols.
 *
 * glibc defines most of its functions under several names at one address:
 * the internal __GI___strdup (LOCAL), __strdup (GLOBAL) and the public
 * strdup (WEAK); dlopen is ___dlopen (LOCAL), dlopen@@GLIBC_2.34 and
 * dlopen@GLIBC_2.2.5.  DWARF and libdwfl's address lookup may give any of
 * them.  The public name is, among the function symbols starting at the
 * address, a GLOBAL, WEAK or unique one if there is any (else a LOCAL
 * one), with the shortest name without its version (valgrind's rule), then
 * the lexically least; printed without the version.
 */
#ifndef MEMTRACE_SYM_INDEX_H
#define MEMTRACE_SYM_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdwfl.h>

struct mt_sym {
	Dwarf_Addr addr;   /* run-time address (the module's bias added) */
	const char *name;  /* libdwfl's string, with any @version */
	size_t len;        /* length of the name without its version */
	bool global;       /* GLOBAL, WEAK or GNU_UNIQUE binding */
};

struct mt_sym_index {
	struct mt_sym *v;  /* function symbols, sorted by addr */
	size_t n;
};

/*
 * Index the function symbols (FUNC, GNU_IFUNC, non-zero address) of MOD,
 * from its symbol table (.symtab, of the debug file if there is one, else
 * .dynsym).  Returns 0 or -ENOMEM (IX is then empty).
 */
int mt_sym_index_build(struct mt_sym_index *ix, Dwfl_Module *mod);

/*
 * The public name of the function starting at ADDR (run-time address):
 * points into libdwfl's string table, *LEN characters long (the version,
 * if any, not counted).  NULL when no function symbol starts at ADDR.
 */
const char *mt_sym_index_public(const struct mt_sym_index *ix,
				Dwarf_Addr addr, size_t *len);

/* True when some function symbol at ADDR is named NAME (without version). */
bool mt_sym_index_has(const struct mt_sym_index *ix, Dwarf_Addr addr,
		      const char *name);

void mt_sym_index_free(struct mt_sym_index *ix);

#endif /* MEMTRACE_SYM_INDEX_H */
