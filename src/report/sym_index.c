/* SPDX-License-Identifier: MIT */
/* sym_index.c: a module's function symbols by address (see sym_index.h). */
#include "sym_index.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static int cmp_addr(const void *a, const void *b)
{
	const struct mt_sym *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static bool is_function(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF;
}

int mt_sym_index_build(struct mt_sym_index *ix, Dwfl_Module *mod)
{
	int nsyms = dwfl_module_getsymtab(mod);

	memset(ix, 0, sizeof(*ix));
	if (nsyms <= 0)
		return 0;
	ix->v = calloc((size_t)nsyms, sizeof(*ix->v));
	if (!ix->v)
		return -ENOMEM;
	for (int i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   NULL, NULL, NULL);
		int bind = GELF_ST_BIND(sym.st_info);

		if (!name || !name[0] || !addr || !is_function(&sym))
			continue;
		ix->v[ix->n++] = (struct mt_sym){
			.addr = addr,
			.name = name,
			.len = strcspn(name, "@"),
			.global = bind == STB_GLOBAL || bind == STB_WEAK ||
				  bind == STB_GNU_UNIQUE,
		};
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), cmp_addr);
	return 0;
}

/* The first symbol at ADDR, or NULL. */
static const struct mt_sym *first_at(const struct mt_sym_index *ix,
				     Dwarf_Addr addr)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->v[lo].addr == addr ? &ix->v[lo] : NULL;
}

/* True when A is a better public name than B (B may be NULL). */
static bool better(const struct mt_sym *a, const struct mt_sym *b)
{
	if (!b)
		return true;
	if (a->global != b->global)
		return a->global;
	if (a->len != b->len)
		return a->len < b->len;
	int cmp = strncmp(a->name, b->name, a->len);

	if (cmp != 0)
		return cmp < 0;
	/* The same name: valgrind prefers a versioned one. */
	return a->name[a->len] && !b->name[b->len];
}

const char *mt_sym_index_public(const struct mt_sym_index *ix,
				Dwarf_Addr addr, size_t *len)
{
	const struct mt_sym *s = first_at(ix, addr), *best = NULL;
	const struct mt_sym *end = ix->v + ix->n;

	for (; s && s < end && s->addr == addr; s++)
		if (better(s, best))
			best = s;
	if (!best)
		return NULL;
	*len = best->len;
	return best->name;
}

bool mt_sym_index_has(const struct mt_sym_index *ix, Dwarf_Addr addr,
		      const char *name)
{
	const struct mt_sym *s = first_at(ix, addr);
	const struct mt_sym *end = ix->v + ix->n;
	size_t len = strlen(name);

	for (; s && s < end && s->addr == addr; s++)
		if (s->len == len && strncmp(s->name, name, len) == 0)
			return true;
	return false;
}

void mt_sym_index_free(struct mt_sym_index *ix)
{
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}
