/* SPDX-License-Identifier: MIT */
/*
 * deferred_walk.h: the loader's walk of a copied user stack (struct
 * mt_defer_copy), step for step the BPF program's (bpf/unwind.h), with
 * the same step (bpf/unwind_step.h): the same rows, read the same way,
 * and the same checks.  What differs is where the words, the mappings
 * and the tables come from: the copy, the caller's callbacks, and the
 * rows the loader wrote (the same memory the BPF program reads).
 */
#ifndef MEMTRACE_DEFERRED_WALK_H
#define MEMTRACE_DEFERRED_WALK_H
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"

/* An executable mapping: [start, end), file offset = address + delta;
 * file 0, 0: anonymous. */
struct mt_dw_mapping {
	uint64_t start, end, delta;
	struct mt_file_key file;
};

/* The loaded tables: rows and page indices, as many as can be read. */
struct mt_dw_tables {
	const struct mt_unwind_row *rows;
	uint64_t nrows;
	const uint64_t *pages;
	uint64_t npages;
};

/* What a module lookup says. */
enum mt_dw_module {
	MT_DW_MODULE_FOUND = 0,
	MT_DW_MODULE_LATER,     /* no table yet: try again later */
	MT_DW_MODULE_NEVER,     /* no table will come: go on as without */
	MT_DW_MODULE_UNREADABLE, /* nor will it: its file cannot be opened */
};

struct mt_dw_env {
	uint32_t mode;          /* enum mt_unwind_mode */
	struct mt_dw_tables tables;
	/* The mapping of PC (besides the copy's own): 0, or -1 for none. */
	int (*mapping)(void *ctx, uint64_t pc, struct mt_dw_mapping *out);
	/* The table of the file mapped at M (enum mt_dw_module). */
	enum mt_dw_module (*module)(void *ctx, const struct mt_dw_mapping *m,
				    struct mt_unwind_module *out);
	void *ctx;
};

/* How a walk ended. */
enum mt_dw_result {
	MT_DW_DONE = 0,         /* at the outermost frame */
	MT_DW_TRUNCATED,        /* cut short, as the BPF walk would be */
	MT_DW_WAIT,             /* a file's table is not there yet */
};

/* Unwind copy C into IPS (MT_MAX_STACK_DEPTH frames, leaf first, the
 * frames walked before the copy included); their number into *N, and
 * into *USED the bytes of the copy the walk went through (from its
 * start to the last frame's stack pointer). */
enum mt_dw_result mt_dw_walk(const struct mt_defer_copy *c,
			     const struct mt_dw_env *env, uint64_t *ips,
			     uint32_t *n, uint64_t *used);

/* Why the last walk that mt_dw_walk() cut short was (its
 * MT_DW_TRUNCATED), as the BPF walk counts it. */
enum mt_trunc_reason mt_dw_last_reason(void);

/* The id the BPF program gives the stack IPS[0..N) (its hash_stack). */
uint64_t mt_dw_stack_id(const uint64_t *ips, uint32_t n);

#endif
