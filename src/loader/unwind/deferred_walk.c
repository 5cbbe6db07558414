// SPDX-License-Identifier: MIT
/* deferred_walk.c: the loader's walk of a copied stack (deferred_walk.h). */
#include "deferred_walk.h"

#include <stddef.h>
#include <string.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The walk's state, as the BPF program's (struct mt_unwind_state). */
struct dw_state {
	__u64 pc, sp, bp;
	__u32 status;
	__u32 reason;   /* UW_TRUNCATED: why (enum mt_trunc_reason) */
};

enum { UW_RUN = 0, UW_DONE, UW_TRUNCATED };

/* The tables of the walk under way (walks run one at a time, on the
 * session's thread): what uw_row() and uw_page() read. */
static const struct mt_dw_tables *cur;
static __u32 cur_mode;

static struct mt_unwind_row *uw_row(__u32 i)
{
	return i < cur->nrows ? (struct mt_unwind_row *)&cur->rows[i] : NULL;
}

static __u64 *uw_page(__u32 i)
{
	return i < cur->npages ? (__u64 *)&cur->pages[i] : NULL;
}

/* The walk under way read above its copy's bound (MT_DEFER_BOUNDED). */
static int read_past_bound;

/* The word at ADDR of the copy CTX; -1 outside it, where the BPF walk
 * would have read the live stack. */
static int uw_read_word(void *ctx, __u64 addr, __u64 *out)
{
	const struct mt_defer_copy *c = ctx;
	__u64 off = addr - c->sp;

	if (addr >= c->sp && off + 8 > MT_DEFER_STACK_MAX &&
	    (c->flags & MT_DEFER_BOUNDED))
		read_past_bound = 1;
	if (addr < c->sp || off > c->len || c->len - off < 8)
		return -1;
	/* A page the BPF program could not read (stack words are 8-byte
	 * aligned: a word lies in one page). */
	if (!(c->pages_read & (1U << (((addr >> 12) - (c->sp >> 12)) & 31))))
		return -1;
	memcpy(out, c->stack + off, 8);
	return 0;
}

#define UW_STATE_T struct dw_state
#define UW_MODE cur_mode
#include "unwind_step.h"

/* The same mixing as the BPF program's mix() (memleak.bpf.c). */
#define MT_MIX_SEED 0xcbf29ce484222325ULL

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* The stack's segments and their keys, as the BPF program's. */
#include "stack_key.h"

uint64_t mt_dw_stack_id(const uint64_t *ips, uint32_t n)
{
	uint64_t h = 0;

	if (n > MT_MAX_STACK_DEPTH)
		n = MT_MAX_STACK_DEPTH;
	for (uint32_t k = seg_count(n); k-- > 0;)
		h = seg_key(h, (const __u64 *)ips, seg_from(n, k), seg_to(n, k));
	return h ? h : 1;
}

/* A walk's view of the mapping of pc and its table (the BPF walk's
 * vm_start, vm_end, vm_delta, mod, has_rows). */
struct dw_where {
	struct mt_dw_mapping m;
	struct mt_unwind_module mod;
	int has_rows;
	__u32 reason;   /* why the walk cannot go past pc, if it cannot */
};

/* Why the last walk was cut short (enum mt_trunc_reason). */
static __u32 last_reason;

/* locate() of bpf/unwind.h: 0; -1 when pc is in no executable mapping;
 * 1 when the walk cannot go past pc; 2 when its file's table is not
 * there yet. */
static int locate(const struct mt_defer_copy *c, const struct mt_dw_env *env,
		  __u64 pc, struct dw_where *w)
{
	struct mt_dw_mapping m;

	if (pc >= c->vm_start && pc < c->vm_end) {
		m = (struct mt_dw_mapping){ c->vm_start, c->vm_end, c->vm_delta,
					    c->file };
	} else if (!env->mapping || env->mapping(env->ctx, pc, &m)) {
		w->reason = MT_TRUNC_BAD_STACK;
		return -1;
	}
	w->m = m;
	w->has_rows = 0;
	w->reason = MT_TRUNC_NO_CFI;
	if (env->mode == MT_UNWIND_FP || (!m.file.dev && !m.file.ino))
		return env->mode == MT_UNWIND_CFI ? 1 : 0;
	switch (env->module(env->ctx, &m, &w->mod)) {
	case MT_DW_MODULE_FOUND:
		break;
	case MT_DW_MODULE_LATER:
		return 2;
	case MT_DW_MODULE_UNREADABLE:
		w->reason = MT_TRUNC_UNREADABLE;
		return 1;
	default:
		w->reason = MT_TRUNC_NO_TABLE;
		return 1; /* the BPF walk's "no table": the walk ends here */
	}
	w->has_rows = w->mod.nrows > 0;
	return !w->has_rows && env->mode == MT_UNWIND_CFI ? 1 : 0;
}

enum mt_dw_result mt_dw_walk(const struct mt_defer_copy *c,
			     const struct mt_dw_env *env, uint64_t *ips,
			     uint32_t *n_out, uint64_t *used)
{
	struct dw_state u = { c->pc, c->sp, c->bp, UW_RUN, 0 };
	struct dw_where w = { { 0, 0, 0, { 0, 0 } }, { 0 }, 0, 0 };
	__u32 n = c->n < MT_MAX_STACK_DEPTH ? c->n : MT_MAX_STACK_DEPTH;
	__u32 steps = c->steps;
	long end = 0;

	cur = &env->tables;
	cur_mode = env->mode;
	read_past_bound = 0;
	memcpy(ips, MT_DEFER_FRAMES(c), n * sizeof(*ips));
	/* The BPF walk's bpf_loop(), from the iteration it stopped at. */
	for (__u32 i = steps; i < MT_MAX_STACK_DEPTH + 1 && !end; i++) {
		struct mt_unwind_row row;
		int where = 0;

		if (!u.pc) {
			u.status = UW_DONE;
			break;
		}
		if (u.pc < w.m.start || u.pc >= w.m.end)
			where = locate(c, env, u.pc, &w);
		if (where == 2 && n < MT_MAX_STACK_DEPTH) {
			*n_out = n;
			*used = u.sp - c->sp;
			return MT_DW_WAIT;
		}
		if (where < 0 && steps == 0)
			where = 1;
		if (where < 0 || where == 2 || n >= MT_MAX_STACK_DEPTH) {
			u.status = UW_TRUNCATED;
			u.reason = where < 0 ? w.reason : MT_TRUNC_DEPTH;
			break;
		}
		if (where > 0 || !w.has_rows) {
			ips[n++] = u.pc;
			steps++;
			if (where == 0) {
				end = uw_fp_step(&u, (void *)c);
				continue;
			}
			u.status = UW_TRUNCATED;
			u.reason = w.reason;
			break;
		}
		row = find_row(&w.mod, u.pc - (steps > 0 ? 1 : 0) + w.m.delta);
		if (n > 0 || !(row.kind & MT_UW_SKIP))
			ips[n++] = u.pc;
		steps++;
		end = uw_cfi_step(&u, (void *)c, row);
	}
	*n_out = n;
	*used = u.sp - c->sp;
	/* A word above the copy's bound: not a stack that does not unwind,
	 * one whose frames (large buffers) outgrew the copy. */
	if (u.status == UW_TRUNCATED && u.reason == MT_TRUNC_BAD_STACK &&
	    read_past_bound)
		u.reason = MT_TRUNC_COPY_SHORT;
	/* Past the loop's bound: as deep as a stack is kept. */
	last_reason = u.status == UW_TRUNCATED && u.reason < MT_TRUNC__COUNT
			      ? u.reason : MT_TRUNC_DEPTH;
	return u.status == UW_DONE ? MT_DW_DONE : MT_DW_TRUNCATED;
}

enum mt_trunc_reason mt_dw_last_reason(void)
{
	return (enum mt_trunc_reason)last_reason;
}
