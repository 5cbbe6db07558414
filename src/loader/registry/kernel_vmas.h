/* SPDX-License-Identifier: MIT */
/*
 * kernel_vmas.h: processes' executable file mappings as the kernel told
 * them (struct mt_vma_record, bpf/vma_dump.h), kept after the processes
 * are gone.  A process that lives a few milliseconds has exited, and its
 * /proc/PID with it, before the loader reads its stacks' copies: from
 * these the deferred unwinder knows which file lies where and opens it
 * to make its table, and a report names the frames of such a process.
 * Each file is opened once, when first told of, by its path, and kept
 * only when it is the very inode the process mapped (dev and inode
 * checked): one descriptor per file, by the kernel's identity.
 */
#ifndef MEMTRACE_KERNEL_VMAS_H
#define MEMTRACE_KERNEL_VMAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "memleak.h"

struct mt_process;

/* One mapping: [start, end) holds FILE from file offset OFFSET. */
struct mt_kvma {
	uint64_t start, end, offset;
	struct mt_file_key file;
};

/* Take a record of SIZE bytes from the unwind_copies ring buffer. */
void mt_kvmas_add(const void *data, size_t size);

/* Process PID's mappings as last told (*N of them), or NULL. */
const struct mt_kvma *mt_kvmas_of(uint32_t pid, size_t *n);

/* Process PID's mappings before its last exec (*N of them), or NULL. */
const struct mt_kvma *mt_kvmas_before_exec(uint32_t pid, size_t *n);

/* A new descriptor open on FILE (to be closed by the caller), its path
 * into *NAME (valid until mt_kvmas_free()); -1 when it could not be
 * opened as the inode mapped. */
int mt_kvmas_open(const struct mt_file_key *file, const char **name);

/* Give PROC (pid set) modules for PID's mappings that overlap none of
 * its own: it was gone before /proc could be read, or read again after
 * a dlopen.  How many were added. */
size_t mt_kvmas_modules(struct mt_process *proc);

/* PID's mappings are not needed any more (it exited, its allocations
 * were harvested and its copies unwound): they go.  Its files stay, for
 * the unwind tables asked of them. */
void mt_kvmas_forget(uint32_t pid);

/* Processes whose mappings are kept (for -v, and tests). */
size_t mt_kvmas_nprocs(void);

/* Files told of, and those that could not be opened (for -v). */
void mt_kvmas_stats(uint64_t *files, uint64_t *unopened);

void mt_kvmas_free(void);

#endif
