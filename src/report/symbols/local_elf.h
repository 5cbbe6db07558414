/* SPDX-License-Identifier: MIT */
/*
 * local_elf.h: a file a saved profile names, as it is on this machine: its
 * load bias in the profile's process (from the ELF program headers) and
 * its GNU build id.
 */
#ifndef MEMTRACE_LOCAL_ELF_H
#define MEMTRACE_LOCAL_ELF_H

#include "profile.h"

/*
 * Open M->path and set M->bias (M->text_start was mapped from file offset
 * M->text_offset) and M->build_id.  Returns 0, or -errno / -ENOEXEC /
 * -ENOENT (no such file, not ELF, no segment at that offset); M's bias and
 * build id are then unchanged.
 */
int mt_local_elf(struct mt_module *m);

/*
 * The soname (DT_SONAME) of the ELF file PATH into BUF.  Returns 0,
 * -ENODATA when it has none (an executable), or -errno / -ENOEXEC when it
 * cannot be read here.
 */
int mt_local_elf_soname(const char *path, char *buf, size_t len);

#endif
