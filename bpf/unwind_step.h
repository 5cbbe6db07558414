/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwind_step.h: one step of the user-stack unwinder, written once for
 * both sides.  The BPF program (bpf/unwind.h) steps the live stack; the
 * loader (src/loader/unwind/deferred_unwind.c) steps a copy of it taken when a
 * frame's file had no table yet.  Both run these functions, so a row
 * means the same and the same checks end a walk on either side.
 *
 * The includer defines, before including:
 *   UW_STATE_T           a struct with __u64 pc, sp, bp and __u32 status,
 *                        reason (why a walk was cut short)
 *   UW_MODE              the unwind mode (enum mt_unwind_mode)
 *   uw_read_word(ctx, addr, &out)  0, or -1 when ADDR cannot be read
 *   uw_row(i), uw_page(i)           row I and page index I of the loaded
 *                                   tables, or NULL (struct mt_unwind_row,
 *                                   __u64)
 *   UW_RUN, UW_DONE, UW_TRUNCATED  the walk's states
 * and the types of memleak.h.
 */
#ifndef MEMTRACE_BPF_UNWIND_STEP_H
#define MEMTRACE_BPF_UNWIND_STEP_H

/* The walk of U ends, cut short for WHY (enum mt_trunc_reason); 1. */
#define UW_CUT(u, why) ((u)->status = UW_TRUNCATED, (u)->reason = (why), 1)

/* The row of the module's table that covers file offset OFF; a zero row
 * (MT_UW_NONE) where none does. */
static __always_inline struct mt_unwind_row find_row(
	const struct mt_unwind_module *m, __u64 off)
{
	struct mt_unwind_row none = {};
	__u64 k = (off >> MT_UW_PAGE_SHIFT) - m->first_page;
	__u32 key, lo, hi;
	__u64 *p;
	struct mt_unwind_row *r;

	if (k >= m->npages)
		return none;
	key = m->page_first + (__u32)k;
	p = uw_page(key);
	if (!p)
		return none;
	lo = (__u32)*p;
	p = uw_page(key + 1);
	if (!p)
		return none;
	hi = (__u32)*p;
	/* The last row at or before OFF, among at most a page's rows. */
	for (int i = 0; i < 13 && lo < hi; i++) {
		__u32 mid = lo + (hi - lo + 1) / 2;

		r = uw_row(m->row_first + mid);
		if (!r)
			return none;
		if (r->pc <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	r = uw_row(m->row_first + lo);
	if (!r || r->pc > off)
		return none;
	return *r;
}

/* One step by frame pointer: the caller's frame is at bp. */
static __always_inline long uw_fp_step(UW_STATE_T *u, void *ctx)
{
	__u64 bp, ra; /* the saved rbp, the return address */

	/* The x86-64 psABI marks the deepest frame with a zero frame
	 * pointer (_start and ld.so's _dl_start_user clear rbp). */
	if (!u->bp) {
		u->status = UW_DONE;
		return 1;
	}
	if ((u->bp & 7) || u->bp < u->sp || uw_read_word(ctx, u->bp, &bp) ||
	    uw_read_word(ctx, u->bp + 8, &ra))
		return UW_CUT(u, MT_TRUNC_NO_CFI); /* no frame pointer */
	u->sp = u->bp + 16;
	u->bp = bp;
	u->pc = ra;
	return 0;
}

/* One step by the row R: the caller's CFA, return address and rbp. */
static __always_inline long uw_cfi_step(UW_STATE_T *u, void *ctx,
					struct mt_unwind_row r)
{
	__u64 cfa, ra, bp;

	switch (r.kind & MT_UW_KIND_MASK) {
	case MT_UW_RSP:
		cfa = u->sp + 8 * (__u64)r.cfa_off8;
		break;
	case MT_UW_RBP:
		cfa = u->bp + 8 * (__u64)r.cfa_off8;
		break;
	case MT_UW_PLT:
		cfa = u->sp + 8 * (__u64)r.cfa_off8 +
		      ((u->pc & 15) >= (__u64)(__u8)r.rbp_off8 ? 8 : 0);
		break;
	case MT_UW_END:
		u->status = UW_DONE;
		return 1;
	case MT_UW_NONE:
		if (UW_MODE == MT_UNWIND_AUTO)
			return uw_fp_step(u, ctx);
		return UW_CUT(u, MT_TRUNC_NO_CFI);
	default:
		return UW_CUT(u, MT_TRUNC_CFI_RULE);
	}
	/* The caller's frame lies above this one. */
	if (cfa <= u->sp || uw_read_word(ctx, cfa - 8, &ra))
		return UW_CUT(u, MT_TRUNC_BAD_STACK);
	if (r.rbp_off8 && (r.kind & MT_UW_KIND_MASK) != MT_UW_PLT) {
		if (uw_read_word(ctx, cfa + 8 * (__s64)r.rbp_off8, &bp))
			return UW_CUT(u, MT_TRUNC_BAD_STACK);
		u->bp = bp;
	} else if (r.kind & MT_UW_RBP_LOST) {
		u->bp = 0;
	}
	u->sp = cfa;
	u->pc = ra;
	return 0;
}

#endif /* MEMTRACE_BPF_UNWIND_STEP_H */
