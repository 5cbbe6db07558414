/* SPDX-License-Identifier: MIT */
/* local_elf.c: a profile's file as it is on this machine (see local_elf.h). */
#include "local_elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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
