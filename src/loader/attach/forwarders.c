// SPDX-License-Identifier: MIT
/*
 * forwarders.c: C++ operator new/delete functions that only forward.
 *
 * A function forwards when it calls (or jumps to) at least one probed
 * function, or another forwarding operator, and every other function it
 * names is a helper known not to allocate (std::get_new_handler, the
 * exception machinery).  Anything else it calls by name (jemalloc's and
 * tcmalloc's operators call their allocator's internals) keeps it probed.
 * Indirect calls (the new handler) and jumps to unnamed code (its own cold
 * part) are not followed: what they allocate goes through malloc again.
 */
#include "forwarders.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "capstone_lazy.h"

/* Helpers of operator new and delete that allocate nothing themselves. */
static const char *const harmless[] = {
	"_ZSt15get_new_handlerv", "__cxa_throw", "__cxa_allocate_exception",
	"__cxa_begin_catch", "__cxa_end_catch", "__cxa_rethrow",
	"_Unwind_Resume", "__stack_chk_fail", "__popcountdi2",
	"__cxa_throw_bad_array_new_length", "_ZSt17__throw_bad_allocv",
	"_ZSt28__throw_bad_array_new_lengthv",
};

bool mt_is_cxx_alloc_name(const char *name)
{
	return strncmp(name, "_Znwm", 5) == 0 || strncmp(name, "_Znam", 5) == 0 ||
	       strncmp(name, "_ZdlPv", 6) == 0 || strncmp(name, "_ZdaPv", 6) == 0;
}

/* A named address: a function symbol, or a PLT entry by its target. */
struct named {
	uint64_t addr;
	char *name;
	bool plt;       /* a PLT entry (named by its target), not a definition */
};

struct names {
	struct named *v;
	size_t n;
};

static int add_name(struct names *ns, uint64_t addr, const char *name,
		    bool plt)
{
	struct named *nv = realloc(ns->v, (ns->n + 1) * sizeof(*nv));
	char *copy = strdup(name);

	if (!nv || !copy) {
		free(copy);
		if (nv)
			ns->v = nv;
		return -ENOMEM;
	}
	ns->v = nv;
	ns->v[ns->n].addr = addr;
	ns->v[ns->n].name = copy;
	ns->v[ns->n].plt = plt;
	ns->n++;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct named *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* NS sorted by address (sort_names()): the first name at ADDR, or NULL. */
static const struct named *named_at(const struct names *ns, uint64_t addr)
{
	size_t lo = 0, hi = ns->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ns->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ns->n && ns->v[lo].addr == addr ? &ns->v[lo] : NULL;
}

static void free_names(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i].name);
	free(ns->v);
	ns->v = NULL;
	ns->n = 0;
}

static void sort_names(struct names *ns)
{
	if (ns->n)
		qsort(ns->v, ns->n, sizeof(*ns->v), by_addr);
}

/* A symbol name without its version (malloc@GLIBC_2.2.5 -> malloc). */
static void plain(const char *name, char *buf, size_t len)
{
	size_t n = strcspn(name, "@");

	if (n >= len)
		n = len - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
}

/* Every defined function symbol of .symtab and .dynsym. */
static int read_funcs(Elf *elf, struct names *ns)
{
	Elf_Scn *scn = NULL;
	int ret = 0;

	while (ret == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && ret == 0 && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			char buf[256];

			if (!gelf_getsym(d, (int)i, &s) ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!n || !*n)
				continue;
			plain(n, buf, sizeof(buf));
			ret = add_name(ns, s.st_value, buf, false);
		}
	}
	return ret;
}

/* Every RELA entry's slot (a GOT address), named by the symbol it binds:
 * NS's addresses are slots here, sorted (sort_names()). */
static int read_relocs(Elf *elf, struct names *ns)
{
	Elf_Scn *scn = NULL;
	int ret = 0;

	while (ret == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh, ssh;
		Elf_Scn *syms;
		Elf_Data *d, *sd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		syms = elf_getscn(elf, sh.sh_link);
		sd = syms ? elf_getdata(syms, NULL) : NULL;
		if (!d || !sd || !gelf_getshdr(syms, &ssh))
			continue;
		for (size_t i = 0; ret == 0 && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *n;
			char buf[256];

			if (!gelf_getrela(d, (int)i, &r) || !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			n = elf_strptr(elf, ssh.sh_link, sym.st_name);
			if (!n || !*n)
				continue;
			plain(n, buf, sizeof(buf));
			ret = add_name(ns, r.r_offset, buf, false);
		}
	}
	sort_names(ns);
	return ret;
}

/* The PLT entries of .plt, .plt.sec and .plt.got, named by their target. */
static int read_plt(Elf *elf, const struct mt_capstone *cap, csh cs,
		    struct names *ns)
{
	struct names relocs = { 0 };
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int ret = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	ret = read_relocs(elf, &relocs);
	while (ret == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sn;
		Elf_Data *d;
		cs_insn *insn = NULL;
		size_t n, ent;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		sn = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sn || strncmp(sn, ".plt", 4) != 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		ent = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;
		n = cap->disasm(cs, d->d_buf, d->d_size, sh.sh_addr, 0, &insn);
		for (size_t i = 0; i < n && ret == 0; i++) {
			const cs_x86 *x = &insn[i].detail->x86;
			uint64_t slot, entry;
			const struct named *bound;

			if (insn[i].id != X86_INS_JMP || x->op_count != 1 ||
			    x->operands[0].type != X86_OP_MEM ||
			    x->operands[0].mem.base != X86_REG_RIP)
				continue;
			slot = insn[i].address + insn[i].size +
			       (uint64_t)x->operands[0].mem.disp;
			entry = sh.sh_addr + (insn[i].address - sh.sh_addr) / ent * ent;
			bound = named_at(&relocs, slot);
			if (bound)
				ret = add_name(ns, entry, bound->name, true);
		}
		cap->free(insn, n);
	}
	free_names(&relocs);
	return ret;
}

static bool is_harmless(const char *name)
{
	for (size_t i = 0; i < sizeof(harmless) / sizeof(harmless[0]); i++)
		if (strcmp(name, harmless[i]) == 0)
			return true;
	return false;
}

/* The file offset of virtual address VADDR in an executable segment. */
static bool file_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/*
 * What function F (at VADDR, SIZE bytes) calls by name: *PROBED_CALLS and
 * *CXX_CALLS count calls to probed functions and to other operators (whose
 * names go to CXX, at most NCXX); false when it names anything else.
 */
static bool callees(Elf *elf, const struct mt_capstone *cap, csh cs,
		    const struct names *ns, uint64_t vaddr, uint64_t size, bool (*probed)(const char *, bool, void *),
		    void *ctx, int *probed_calls, const char **cxx, size_t ncxx,
		    size_t *ncalled)
{
	uint64_t off;
	Elf_Data *code;
	cs_insn *insn = NULL;
	size_t n;
	bool ok = true;

	*probed_calls = 0;
	*ncalled = 0;
	if (!file_offset(elf, vaddr, &off))
		return false;
	code = elf_getdata_rawchunk(elf, (int64_t)off, size, ELF_T_BYTE);
	if (!code || !code->d_buf)
		return false;
	n = cap->disasm(cs, code->d_buf, code->d_size, vaddr, 0, &insn);
	if (!n)
		return false;
	for (size_t i = 0; i < n && ok; i++) {
		const cs_x86 *x = &insn[i].detail->x86;
		const struct named *to_name;
		const char *name;
		uint64_t to;

		if (!cap->insn_group(cs, &insn[i], CS_GRP_CALL) &&
		    !cap->insn_group(cs, &insn[i], CS_GRP_JUMP))
			continue;
		if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
			continue; /* indirect: the new handler */
		to = (uint64_t)x->operands[0].imm;
		if (to >= vaddr && to < vaddr + size)
			continue; /* within itself */
		to_name = named_at(ns, to);
		if (!to_name)
			continue; /* its own cold part */
		name = to_name->name;
		if (probed(name, to_name->plt, ctx))
			(*probed_calls)++;
		else if (mt_is_cxx_alloc_name(name) && *ncalled < ncxx)
			cxx[(*ncalled)++] = name;
		else if (!is_harmless(name))
			ok = false;
	}
	cap->free(insn, n);
	return ok;
}

const struct mt_cxx_func *mt_cxx_funcs_find(const struct mt_cxx_funcs *funcs,
					    const char *name)
{
	for (size_t i = 0; i < funcs->n; i++)
		if (strcmp(funcs->v[i].name, name) == 0)
			return &funcs->v[i];
	return NULL;
}

/* The callees of each operator, kept for the fixed point. */
struct pending {
	const char *calls[8];
	size_t ncalls;
	int probed_calls;
	bool named_ok;
};

int mt_cxx_funcs_read(int fd,
		      bool (*probed)(const char *name, bool via_plt, void *ctx),
		      void *ctx, struct mt_cxx_funcs *out)
{
	struct names ns = { 0 };
	struct pending *pend = NULL;
	Elf *elf;
	const struct mt_capstone *cap = NULL;
	csh cs = 0;
	int ret = 0;
	bool changed = true, any = false;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	ret = read_funcs(elf, &ns);
	if (ret)
		goto cleanup;
	for (size_t i = 0; i < ns.n && !any; i++)
		any = mt_is_cxx_alloc_name(ns.v[i].name);
	if (!any)
		goto cleanup; /* most files: no operator new or delete */
	cap = mt_capstone_get();
	if (!cap) {
		ret = -ENOENT;
		goto cleanup;
	}
	if (cap->open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		cs = 0;
		ret = -ENOMEM;
		goto cleanup;
	}
	cap->option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	ret = read_plt(elf, cap, cs, &ns);
	if (ret)
		goto cleanup;
	sort_names(&ns);
	/* The operators the file defines, and whom each calls. */
	for (size_t i = 0; i < ns.n; i++) {
		struct mt_cxx_func f = { .name = NULL };
		struct mt_cxx_func *nv;
		struct pending *np;
		uint64_t size = 0;

		if (ns.v[i].plt || !mt_is_cxx_alloc_name(ns.v[i].name) ||
		    !file_offset(elf, ns.v[i].addr, &f.offset))
			continue;
		/* Its size, from the next named address above it. */
		for (size_t k = 0; k < ns.n; k++)
			if (ns.v[k].addr > ns.v[i].addr &&
			    (!size || ns.v[k].addr - ns.v[i].addr < size))
				size = ns.v[k].addr - ns.v[i].addr;
		if (!size || size > 4096 || mt_cxx_funcs_find(out, ns.v[i].name))
			continue;
		f.end = f.offset + size;
		nv = realloc(out->v, (out->n + 1) * sizeof(*nv));
		if (nv)
			out->v = nv;
		np = nv ? realloc(pend, (out->n + 1) * sizeof(*np)) : NULL;
		if (np)
			pend = np;
		f.name = np ? strdup(ns.v[i].name) : NULL;
		if (!f.name) {
			ret = -ENOMEM;
			goto cleanup;
		}
		memset(&pend[out->n], 0, sizeof(*pend));
		pend[out->n].named_ok = callees(elf, cap, cs, &ns, ns.v[i].addr, size,
						probed, ctx,
						&pend[out->n].probed_calls,
						pend[out->n].calls, 8,
						&pend[out->n].ncalls);
		out->v[out->n++] = f;
	}
	/* Forwarding spreads from the functions calling probed ones. */
	while (changed && pend) {
		changed = false;
		for (size_t i = 0; i < out->n; i++) {
			const struct pending *p = &pend[i];
			bool fwd = p->named_ok, via = p->probed_calls > 0;

			if (out->v[i].forwards)
				continue;
			for (size_t k = 0; k < p->ncalls && fwd; k++) {
				const struct mt_cxx_func *g =
					mt_cxx_funcs_find(out, p->calls[k]);

				fwd = g && g->forwards;
				via = true;
			}
			if (fwd && via) {
				out->v[i].forwards = true;
				changed = true;
			}
		}
	}
cleanup:
	free_names(&ns);
	free(pend);
	if (cs)
		cap->close(&cs);
	if (elf)
		elf_end(elf);
	if (ret)
		mt_cxx_funcs_free(out);
	return ret;
}

void mt_cxx_funcs_free(struct mt_cxx_funcs *funcs)
{
	for (size_t i = 0; i < funcs->n; i++)
		free((char *)funcs->v[i].name);
	free(funcs->v);
	funcs->v = NULL;
	funcs->n = 0;
}
