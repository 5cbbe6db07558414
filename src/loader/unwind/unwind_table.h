/* SPDX-License-Identifier: MIT */
/*
 * unwind_table.h: compiling an ELF file's call frame information into the
 * rows the BPF unwinder follows (struct mt_unwind_row, bpf/memleak.h).
 */
#ifndef MEMTRACE_UNWIND_TABLE_H
#define MEMTRACE_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "memleak.h"

struct mt_unwind_table {
	struct mt_unwind_row *rows;  /* sorted by pc (a file offset) */
	uint32_t nrows;              /* 0: the file has no CFI */
	uint32_t *pages;             /* npages + 1 entries, see memleak.h */
	uint32_t npages;
	uint64_t first_page;
	/* What was found (for -v): rows whose rule cannot be followed
	 * (MT_UW_STOP), and code bytes no CFI covers. */
	uint32_t nstop;
	uint64_t uncovered;
};

/* Code whose rows carry MT_UW_SKIP: file offsets [start, end). */
struct mt_skip_range {
	uint64_t start, end;
};

/*
 * Compile the .eh_frame CFI of the ELF file open on FD (read, not kept)
 * for its executable segments; rows within the NSKIP ranges of SKIP carry
 * MT_UW_SKIP (rows are split at their ends).  A file without CFI gives a
 * table without rows.  Returns 0 or -errno (-ENOEXEC: not an ELF file).
 */
int mt_unwind_table_build(int fd, const struct mt_skip_range *skip,
			  size_t nskip, struct mt_unwind_table *t);

void mt_unwind_table_free(struct mt_unwind_table *t);

#endif
