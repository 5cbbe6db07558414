/* SPDX-License-Identifier: MIT */
/* elf_syms.h: reading what the loader needs from an ELF file. */
#ifndef MEMTRACE_ELF_SYMS_H
#define MEMTRACE_ELF_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Find the defined function NAME in the ELF file at PATH (.symtab first,
 * then .dynsym) and store its file offset, the value uprobes are placed at.
 * Returns 0, -ENOENT when the file has no such function, or -errno.
 */
int mt_elf_func_offset(const char *path, const char *name, uint64_t *offset);

/*
 * The same for N names at once, reading the symbol tables once: OFFS[k]
 * and FOUND[k] for NAMES[k].  Returns 0 (whatever was found) or -errno.
 */
int mt_elf_func_offsets(const char *path, const char *const *names, size_t n,
			uint64_t *offs, bool *found);

/*
 * Load bias of a mapping: the file at PATH is mapped at START from file
 * offset OFFSET; *bias = START - (ELF virtual address of OFFSET).
 */
int mt_elf_load_bias(int fd, uint64_t start, uint64_t offset, uint64_t *bias);

#endif
