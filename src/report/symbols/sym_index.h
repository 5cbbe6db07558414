/* SPDX-License-Identifier: MIT */
/*
 * sym_index.h: a module's ELF symbols sorted by address, built once per
 * module: the symbol containing an address (what libdwfl's
 * dwfl_module_addrinfo answers, by a binary search instead of its walk
 * over the whole table for every address), and the public name of a
 * function, as valgrind and perf print it.
 *
 * glibc defines most of its functions under several names at one address:
 * the internal __GI___strdup (LOCAL), __strdup (GLOBAL) and the public
 * strdup (WEAK); dlopen is ___dlopen (LOCAL), dlopen@@GLIBC_2.34 and
 * dlopen@GLIBC_2.2.5.  DWARF and the address lookup may give any of them.
 * The public name is, among the function symbols starting at the address,
 * one with a size if there is any (clang's libraries have size-0 aliases
 * of unrelated functions folded into one: perf prefers the sized symbol,
 * valgrind ignores size-0 ones), then a GLOBAL, WEAK or unique one if
 * there is any (else a LOCAL one), with the shortest name without its
 * version (valgrind's rule), then the lexically least; printed without
 * the version.
 */
#ifndef MEMTRACE_SYM_INDEX_H
#define MEMTRACE_SYM_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct mt_sym {
	Dwarf_Addr addr;   /* run-time address (the module's bias added) */
	uint64_t size;     /* st_size */
	const char *name;  /* libdwfl's string, with any @version */
	size_t len;        /* length of the name without its version */
	uint32_t ndx;      /* index in libdwfl's table (its search order) */
	uint8_t rank;      /* binding as libdwfl ranks it: GLOBAL 3, WEAK 2,
			    * LOCAL 1, others 0 */
	bool global;       /* GLOBAL, WEAK or GNU_UNIQUE binding */
	bool func;         /* FUNC or GNU_IFUNC at a non-zero address */
	bool abs;          /* in no section (SHN_ABS, SHN_COMMON...) */
};

/* The symbols of one of libdwfl's passes, sorted by (addr, ndx). */
struct mt_sym_pass {
	struct mt_sym *v;        /* named defined symbols but sections, files
				  * and TLS ones */
	Dwarf_Addr *end;         /* the highest addr + size of v[0..i] */
	size_t n;
};

struct mt_sym_index {
	/* libdwfl's first pass (its global symbols, from first_global on)
	 * and its second (the local ones before them). */
	struct mt_sym_pass pass[2];
	uint32_t first_global;
	Dwfl_Module *mod;        /* for the sections of size-0 symbols */
};

/*
 * Index the symbols of MOD, from the symbol table libdwfl reads (.symtab,
 * of the debug file if there is one, else .dynsym).  Returns 0 or -ENOMEM
 * (IX is then empty).
 */
int mt_sym_index_build(struct mt_sym_index *ix, Dwfl_Module *mod);

/*
 * The symbol dwfl_module_addrinfo gives for ADDR (run-time address), in
 * *SYM, or NULL: the nearest sized symbol containing ADDR, by libdwfl's
 * rules (global ones first, then local ones; between symbols containing
 * it, the nearer one or the better binding, in the order libdwfl meets
 * them), else a size-0 label below ADDR in its section that no symbol's
 * extent passes.  Returns 0 or -ENOMEM.
 */
int mt_sym_index_containing(const struct mt_sym_index *ix, Dwarf_Addr addr,
			    const struct mt_sym **sym);

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
