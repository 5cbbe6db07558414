/* SPDX-License-Identifier: MIT */
/* build_id.c: GNU build ids (see build_id.h). */
#include "build_id.h"

#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <sys/types.h>
#include <elfutils/libdwelf.h>

int mt_build_id_hex(int fd, char *hex, size_t len)
{
	Elf *elf;
	const void *id = NULL;
	ssize_t n;
	int err = 0;

	if (len)
		hex[0] = '\0';
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (n > 0 && (size_t)n * 2 + 1 > len) {
		err = -ENOSPC;
	} else if (n > 0) {
		const unsigned char *b = id;

		for (ssize_t i = 0; i < n; i++)
			snprintf(hex + i * 2, 3, "%02x", b[i]);
	}
	if (elf)
		elf_end(elf);
	return err;
}
