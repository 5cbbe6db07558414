// SPDX-License-Identifier: MIT
/* elf_syms.c: symbol offsets, dynamic-ness and load bias, through libelf. */
#include "elf_syms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Elf *open_elf(int fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return elf_begin(fd, ELF_C_READ_MMAP, NULL);
}

/* A definition's rank: global beats weak beats local; 0 for no definition. */
static int def_rank(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
	    sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return 0;
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	default:
		return 1;
	}
}

/* Look every name up in one symbol table, keeping the best definition. */
static void scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       const char *const *names, size_t n, uint64_t *offs,
		       int *rank)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t nsyms = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	if (!data)
		return;
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		const char *sname;
		int r;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		r = def_rank(&sym);
		if (!r)
			continue;
		sname = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sname)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (r <= rank[k] || sname[0] != names[k][0] ||
			    strcmp(sname, names[k]) != 0)
				continue;
			tscn = elf_getscn(elf, sym.st_shndx);
			if (!tscn || !gelf_getshdr(tscn, &tsh))
				continue;
			/* uprobes take file offsets, not virtual addresses */
			offs[k] = sym.st_value - tsh.sh_addr + tsh.sh_offset;
			rank[k] = r;
		}
	}
}

int mt_elf_func_offsets(const char *path, const char *const *names, size_t n,
			uint64_t *offs, bool *found)
{
	static const GElf_Word kinds[] = { SHT_SYMTAB, SHT_DYNSYM };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int *rank;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = open_elf(fd);
	rank = calloc(n ? n : 1, sizeof(*rank));
	if (!elf || !rank) {
		if (elf)
			elf_end(elf);
		free(rank);
		close(fd);
		return elf ? -ENOMEM : -ENOEXEC;
	}
	for (size_t k = 0; k < 2; k++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == kinds[k])
				scan_table(elf, scn, &sh, names, n, offs, rank);
		}
	}
	for (size_t k = 0; k < n; k++)
		found[k] = rank[k] > 0;
	free(rank);
	elf_end(elf);
	close(fd);
	return 0;
}

int mt_elf_func_offset(const char *path, const char *name, uint64_t *offset)
{
	bool found = false;
	int ret = mt_elf_func_offsets(path, &name, 1, offset, &found);

	if (ret)
		return ret;
	return found ? 0 : -ENOENT;
}

int mt_elf_load_bias(int fd, uint64_t start, uint64_t offset, uint64_t *bias)
{
	Elf *elf = open_elf(fd);
	size_t n;
	int ret = -ENOENT;

	if (!elf)
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &n) != 0) {
		elf_end(elf);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t lo;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		lo = ph.p_offset & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
		if (offset < lo || offset >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = start - (ph.p_vaddr - ph.p_offset + offset);
		ret = 0;
		break;
	}
	elf_end(elf);
	return ret;
}
