// SPDX-License-Identifier: MIT
/* go_exe.c: recognising a Go executable (see go_exe.h). */
#include "go_exe.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* Does the symbol table section SCN (of ELF) define runtime.main? */
static bool has_runtime_main(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && strcmp(name, "runtime.main") == 0)
			return true;
	}
	return false;
}

static bool go_elf(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (elf_getshdrstrndx(elf, &shstr) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstr, sh.sh_name);
		if (name && strcmp(name, ".go.buildinfo") == 0)
			return true;
		if (sh.sh_type == SHT_SYMTAB && has_runtime_main(elf, scn, &sh))
			return true;
	}
	return false;
}

bool mt_go_exe(const char *path)
{
	bool go = false;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		go = go_elf(elf);
	if (elf)
		elf_end(elf);
	close(fd);
	return go;
}
