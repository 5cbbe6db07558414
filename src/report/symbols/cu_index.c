/* SPDX-License-Identifier: MIT */
/* cu_index.c: address -> compilation unit from the units' ranges. */
#include "cu_index.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int add_range(struct mt_cu_index *ix, size_t *cap, Dwarf_Addr lo,
		     Dwarf_Addr hi, const Dwarf_Die *cu)
{
	if (ix->n == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct mt_cu_range *v = reallocarray(ix->v, n, sizeof(*v));

		if (!v)
			return -ENOMEM;
		ix->v = v;
		*cap = n;
	}
	ix->v[ix->n++] = (struct mt_cu_range){ .lo = lo, .hi = hi, .cu = *cu };
	return 0;
}

/* Add the ranges of one unit (RANGES_DIE) as belonging to CU. */
static int add_unit(struct mt_cu_index *ix, size_t *cap, Dwarf_Die *ranges_die,
		    const Dwarf_Die *cu)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int err = 0;

	while (!err &&
	       (off = dwarf_ranges(ranges_die, off, &base, &start, &end)) > 0) {
		if (start < end)
			err = add_range(ix, cap, start, end, cu);
	}
	return err;
}

static int cmp_lo(const void *a, const void *b)
{
	const struct mt_cu_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

int mt_cu_index_build(struct mt_cu_index *ix, Dwarf *dw)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	size_t cap = 0;
	int err = 0;

	memset(ix, 0, sizeof(*ix));
	while (!err && dw &&
	       dwarf_get_units(dw, cu, &next, &version, &type, &cudie,
			       &subdie) == 0) {
		bool split = type == DW_UT_skeleton && dwarf_tag(&subdie) > 0;

		cu = next;
		if (type == DW_UT_compile || type == DW_UT_partial ||
		    type == DW_UT_skeleton)
			err = add_unit(ix, &cap, &cudie, split ? &subdie : &cudie);
	}
	if (err) {
		mt_cu_index_free(ix);
		return err;
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), cmp_lo);
	return 0;
}

Dwarf_Die *mt_cu_index_find(struct mt_cu_index *ix, Dwarf_Addr addr)
{
	size_t lo = 0, hi = ix->n;

	/* The last range starting at or below ADDR. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= ix->v[lo - 1].hi)
		return NULL;
	return &ix->v[lo - 1].cu;
}

void mt_cu_index_free(struct mt_cu_index *ix)
{
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}
