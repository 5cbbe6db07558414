/* SPDX-License-Identifier: MIT */
/*
 * cu_index.h: which compilation unit of a module covers an address, for
 * DWARF without .debug_aranges.
 *
 * libdw 0.188 (Debian 12) finds the CU of an address only through
 * .debug_aranges, which clang does not emit by default: without them
 * dwfl_module_addrdie fails, and for a unit missing from them it returns
 * the unit listed before.  This index is built from each CU's own address
 * ranges (dwarf_ranges) instead.
 */
#ifndef MEMTRACE_CU_INDEX_H
#define MEMTRACE_CU_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>

struct mt_cu_range {
	Dwarf_Addr lo, hi;  /* [lo, hi) in the DWARF's address space */
	Dwarf_Die cu;       /* the unit's DIE (the split unit for skeletons) */
};

struct mt_cu_index {
	struct mt_cu_range *v;  /* sorted by lo */
	size_t n;
};

/* Index every unit of DW.  Returns 0 or -ENOMEM (IX is then empty). */
int mt_cu_index_build(struct mt_cu_index *ix, Dwarf *dw);

/* The unit whose ranges contain ADDR (no load bias), or NULL. */
Dwarf_Die *mt_cu_index_find(struct mt_cu_index *ix, Dwarf_Addr addr);

void mt_cu_index_free(struct mt_cu_index *ix);

#endif /* MEMTRACE_CU_INDEX_H */
