// SPDX-License-Identifier: MIT
/* elf_syms.c: symbol offsets, dynamic-ness and load bias, through libelf. */
#include "elf_syms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

static Elf *open_elf(int fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return elf_begin(fd, ELF_C_READ_MMAP, NULL);
}

/* Search one symbol table; 0 and *offset set when found, -ENOENT if not. */
static int find_in_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 const char *name, uint64_t *offset)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	int best_bind = -1;

	if (!data)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		const char *sname;
		int bind, type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		sname = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sname || strcmp(sname, name) != 0)
			continue;
		/* Prefer a global definition to a weak one to a local one. */
		if (bind == STB_GLOBAL)
			bind = 3;
		else if (bind == STB_WEAK)
			bind = 2;
		else
			bind = 1;
		if (bind <= best_bind)
			continue;
		tscn = elf_getscn(elf, sym.st_shndx);
		if (!tscn || !gelf_getshdr(tscn, &tsh))
			continue;
		*offset = sym.st_value - tsh.sh_addr + tsh.sh_offset;
		best_bind = bind;
	}
	return best_bind < 0 ? -ENOENT : 0;
}

int mt_elf_func_offset(const char *path, const char *name, uint64_t *offset)
{
	static const GElf_Word kinds[] = { SHT_SYMTAB, SHT_DYNSYM };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = -ENOENT;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = open_elf(fd);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	for (size_t k = 0; k < 2 && ret == -ENOENT; k++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != kinds[k])
				continue;
			ret = find_in_table(elf, scn, &sh, name, offset);
			if (ret == 0)
				break;
		}
	}
	elf_end(elf);
	close(fd);
	return ret;
}

int mt_elf_is_dynamic(const char *path, bool *dynamic)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = open_elf(fd);
	if (!elf || elf_getphdrnum(elf, &n) != 0) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	*dynamic = false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			*dynamic = true;
	}
	elf_end(elf);
	close(fd);
	return 0;
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
