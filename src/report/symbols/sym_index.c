/* SPDX-License-Identifier: MIT */
/*
 * sym_index.c: a module's symbols by address (see sym_index.h).
 *
 * mt_sym_index_containing gives what libdwfl's dwfl_module_addrinfo
 * gives (elfutils 0.188, libdwfl/dwfl_module_addrsym.c), for a file
 * reported at its load bias on a target whose symbol values are code
 * addresses (no function descriptors).  libdwfl walks the whole table for
 * every address: its global symbols, then, if none fits, its local ones;
 * it keeps the sized symbol containing the address that is nearer or of
 * better binding than the one kept so far, and else falls back to a size-0
 * label at or below the address, in its section, that no symbol's extent
 * passes.  Only the symbols containing the address (and the size-0 ones at
 * the highest address not above it) can change what is kept; here each
 * pass finds them by a binary search and a walk back over the symbols
 * whose extent may reach the address (the running highest end says when
 * none can), and replays libdwfl's rules over them in its order.  The
 * other symbols only raise the bar a label must clear: the highest end,
 * kept per position.
 */
#include "sym_index.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static int cmp_sym(const void *a, const void *b)
{
	const struct mt_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

static int cmp_ndx(const void *a, const void *b)
{
	const struct mt_sym *x = *(const struct mt_sym *const *)a;
	const struct mt_sym *y = *(const struct mt_sym *const *)b;

	return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

/* libdwfl's order of bindings (binding_value). */
static uint8_t rank_of(int bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* A symbol libdwfl's address lookup considers. */
static bool is_candidate(const GElf_Sym *sym, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && sym->st_shndx != SHN_UNDEF &&
	       type != STT_SECTION && type != STT_FILE && type != STT_TLS;
}

static bool is_function(const GElf_Sym *sym, GElf_Addr addr)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && addr;
}

/* Sort pass P's symbols and record the highest end up to each. */
static int finish_pass(struct mt_sym_pass *p)
{
	Dwarf_Addr hi = 0;

	qsort(p->v, p->n, sizeof(*p->v), cmp_sym);
	p->end = calloc(p->n ? p->n : 1, sizeof(*p->end));
	if (!p->end)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		Dwarf_Addr end = p->v[i].addr + p->v[i].size;

		if (end > hi)
			hi = end;
		p->end[i] = hi;
	}
	return 0;
}

int mt_sym_index_build(struct mt_sym_index *ix, Dwfl_Module *mod)
{
	int nsyms = dwfl_module_getsymtab(mod);
	int first = dwfl_module_getsymtab_first_global(mod);
	int err = 0;

	memset(ix, 0, sizeof(*ix));
	ix->mod = mod;
	if (nsyms <= 1 || first < 0)
		return 0;
	ix->first_global = (uint32_t)first;
	for (int k = 0; k < 2; k++) {
		ix->pass[k].v = calloc((size_t)nsyms, sizeof(*ix->pass[k].v));
		if (!ix->pass[k].v) {
			mt_sym_index_free(ix);
			return -ENOMEM;
		}
	}
	/* Index 0 is the null symbol; with first == 0 (no table but the
	 * dynamic one, found through the program headers) every symbol is
	 * in the first pass. */
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, NULL, NULL);

		if (!is_candidate(&sym, name))
			continue;
		int bind = GELF_ST_BIND(sym.st_info);
		struct mt_sym_pass *p = &ix->pass[i >= first ? 0 : 1];

		p->v[p->n++] = (struct mt_sym){
			.addr = addr,
			.size = sym.st_size,
			.name = name,
			.len = strcspn(name, "@"),
			.ndx = (uint32_t)i,
			.rank = rank_of(bind),
			.global = bind == STB_GLOBAL || bind == STB_WEAK ||
				  bind == STB_GNU_UNIQUE,
			.func = is_function(&sym, addr),
			.abs = shndx >= SHN_LORESERVE,
		};
	}
	for (int k = 0; k < 2 && !err; k++)
		err = finish_pass(&ix->pass[k]);
	if (err)
		mt_sym_index_free(ix);
	return err;
}

/* The number of P's symbols at or below ADDR. */
static size_t upper_bound(const struct mt_sym_pass *p, Dwarf_Addr addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One address lookup: libdwfl's search_state. */
struct search {
	const struct mt_sym_index *ix;
	Dwarf_Addr addr;
	const struct mt_sym *closest;
	const struct mt_sym *sizeless;
	Dwarf_Addr min_label;
	bool addr_scn_known;
	size_t addr_scn;
	/* The symbols that matter to one pass, in libdwfl's order: in
	 * SCRATCH unless there are more. */
	const struct mt_sym **cand;
	size_t ncand, cand_cap;
	const struct mt_sym *scratch[32];
};

/* The index of the section holding ADDR (SHN_UNDEF: none), as libdwfl's
 * __libdwfl_find_section_ndx finds it. */
static size_t section_of(Dwfl_Module *mod, Dwarf_Addr addr)
{
	Dwarf_Addr bias;
	Elf_Scn *scn = dwfl_module_address_section(mod, &addr, &bias);

	return scn ? elf_ndxscn(scn) : SHN_UNDEF;
}

/* libdwfl's same_section: is size-0 symbol S in the section of the address? */
static bool same_section(struct search *st, const struct mt_sym *s)
{
	if (s->abs)
		return s->addr == st->addr;
	if (!st->addr_scn_known) {
		st->addr_scn = section_of(st->ix->mod, st->addr);
		st->addr_scn_known = true;
	}
	return st->addr_scn == section_of(st->ix->mod, s->addr);
}

/* libdwfl's try_sym_value, for symbol S (at or below the address). */
static void try_sym(struct search *st, const struct mt_sym *s)
{
	const struct mt_sym *c = st->closest;

	if (s->addr + s->size > st->min_label)
		st->min_label = s->addr + s->size;
	if (s->size != 0 && st->addr - s->addr >= s->size)
		return;
	if (!c || c->addr < s->addr || c->rank < s->rank) {
		if (s->size != 0)
			st->closest = s;
		else if (!c && s->addr >= st->min_label && same_section(st, s))
			st->sizeless = s;
	} else if (s->size != 0 && c->addr == s->addr &&
		   ((c->size > s->size && c->rank <= s->rank) ||
		    (c->size >= s->size && c->rank < s->rank))) {
		st->closest = s;
	}
}

static int add_cand(struct search *st, const struct mt_sym *s)
{
	if (st->ncand == st->cand_cap) {
		size_t n = st->cand_cap ? st->cand_cap * 2 : 32;
		const struct mt_sym **v = malloc(n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memcpy(v, st->cand, st->ncand * sizeof(*v));
		if (st->cand != st->scratch)
			free(st->cand);
		st->cand = v;
		st->cand_cap = n;
	}
	st->cand[st->ncand++] = s;
	return 0;
}

/*
 * One of libdwfl's passes over P: the symbols containing the address and
 * the size-0 ones at the highest address not above it, tried in libdwfl's
 * order; then the bar of the others.
 */
static int search_pass(struct search *st, const struct mt_sym_pass *p)
{
	size_t n = upper_bound(p, st->addr);
	int err = 0;

	st->ncand = 0;
	if (n == 0)
		return 0;
	/* Sized symbols whose extent reaches the address. */
	for (size_t i = n; i-- > 0 && p->end[i] > st->addr && !err;) {
		const struct mt_sym *s = &p->v[i];

		if (s->size != 0 && st->addr - s->addr < s->size)
			err = add_cand(st, s);
	}
	/* Labels at the highest address. */
	for (size_t i = n; i-- > 0 && p->v[i].addr == p->v[n - 1].addr && !err;)
		if (p->v[i].size == 0)
			err = add_cand(st, &p->v[i]);
	if (err)
		return err;
	qsort(st->cand, st->ncand, sizeof(*st->cand), cmp_ndx);
	for (size_t i = 0; i < st->ncand; i++)
		try_sym(st, st->cand[i]);
	if (p->end[n - 1] > st->min_label)
		st->min_label = p->end[n - 1];
	return 0;
}

int mt_sym_index_containing(const struct mt_sym_index *ix, Dwarf_Addr addr,
			    const struct mt_sym **sym)
{
	struct search st = { .ix = ix, .addr = addr };
	int err;

	st.cand = st.scratch;
	st.cand_cap = sizeof(st.scratch) / sizeof(st.scratch[0]);
	err = search_pass(&st, &ix->pass[0]);

	/* The local symbols, unless a global one fits, or a global label is
	 * at the address itself. */
	if (!err && !st.closest && ix->first_global > 1 &&
	    (!st.sizeless || st.sizeless->addr != addr))
		err = search_pass(&st, &ix->pass[1]);
	*sym = st.closest;
	if (!*sym && st.sizeless && st.sizeless->addr >= st.min_label)
		*sym = st.sizeless;
	if (st.cand != st.scratch)
		free(st.cand);
	if (err)
		*sym = NULL;
	return err;
}

/* The first function symbol of P at ADDR, or NULL. */
static const struct mt_sym *first_at(const struct mt_sym_pass *p,
				     Dwarf_Addr addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && p->v[lo].addr == addr ? &p->v[lo] : NULL;
}

/* True when A is a better public name than B (B may be NULL). */
static bool better(const struct mt_sym *a, const struct mt_sym *b)
{
	if (!b)
		return true;
	if ((a->size != 0) != (b->size != 0))
		return a->size != 0;
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
	const struct mt_sym *best = NULL;

	for (int k = 0; k < 2; k++) {
		const struct mt_sym_pass *p = &ix->pass[k];
		const struct mt_sym *s = first_at(p, addr);

		for (; s && s < p->v + p->n && s->addr == addr; s++)
			if (s->func && better(s, best))
				best = s;
	}
	if (!best)
		return NULL;
	*len = best->len;
	return best->name;
}

bool mt_sym_index_has(const struct mt_sym_index *ix, Dwarf_Addr addr,
		      const char *name)
{
	size_t len = strlen(name);

	for (int k = 0; k < 2; k++) {
		const struct mt_sym_pass *p = &ix->pass[k];
		const struct mt_sym *s = first_at(p, addr);

		for (; s && s < p->v + p->n && s->addr == addr; s++)
			if (s->func && s->len == len &&
			    strncmp(s->name, name, len) == 0)
				return true;
	}
	return false;
}

void mt_sym_index_free(struct mt_sym_index *ix)
{
	for (int k = 0; k < 2; k++) {
		free(ix->pass[k].v);
		free(ix->pass[k].end);
	}
	memset(ix, 0, sizeof(*ix));
}
