/* SPDX-License-Identifier: MIT */
/* local_elf.c: a profile's file as it is on this machine (see local_elf.h). */
#include "local_elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <unistd.h>
#include "build_id.h"

/* Bias of M (mapped from text_offset at text_start) from ELF's headers. */
static int load_bias(int fd, struct mt_module *m)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n = 0;
	int ret = -ENOENT;

	if (!elf)
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &n) != 0)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t lo;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		lo = ph.p_offset & ~(uint64_t)4095;
		if (m->text_offset < lo || m->text_offset >= ph.p_offset + ph.p_filesz)
			continue;
		m->bias = m->text_start - (ph.p_vaddr - ph.p_offset + m->text_offset);
		ret = 0;
		break;
	}
	elf_end(elf);
	return ret;
}

/* DT_SONAME of ELF's dynamic section into BUF; -ENODATA if none. */
static int soname_of(Elf *elf, char *buf, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				return -ENOEXEC;
			snprintf(buf, len, "%s", s);
			return 0;
		}
	}
	return -ENODATA;
}

int mt_local_elf_soname(const char *path, char *buf, size_t len)
{
	Elf *elf;
	int fd, err;

	if (!path || elf_version(EV_CURRENT) == EV_NONE)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf && elf_kind(elf) == ELF_K_ELF ? soname_of(elf, buf, len)
						 : -ENOEXEC;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int mt_local_elf(struct mt_module *m)
{
	int fd, err;

	if (!m->path || elf_version(EV_CURRENT) == EV_NONE)
		return -ENOENT;
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = load_bias(fd, m);
	if (!err)
		mt_build_id_hex(fd, m->build_id, sizeof(m->build_id));
	close(fd);
	return err;
}
