// SPDX-License-Identifier: MIT
/*
 * unwind_table.c: an ELF file's call frame information as unwind rows.
 *
 * libdw evaluates the CFI: for an address, dwarf_cfi_addrframe() gives the
 * rules in force there and dwarf_frame_info() the range they hold for, so
 * walking each executable segment range by range yields every row.  Only
 * what an x86-64 unwinder needs is kept: how to find the CFA (rsp or rbp
 * plus an offset, or the PLT's expression), whether the return address is
 * defined (it is at CFA - 8 in every row that can be followed) and where
 * the caller's rbp is.  Rows are keyed by file offset, so that one table
 * serves the file wherever it is mapped.
 */
#include "unwind_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* DWARF register numbers on x86-64. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

struct builder {
	struct mt_unwind_table *t;
	uint32_t cap;
	const struct mt_skip_range *skip;
	size_t nskip;
	/* Where each FDE starts (vaddr), sorted, from .eh_frame_hdr's search
	 * table: a gap in the CFI is crossed in one step, not byte by byte
	 * (each byte a failed lookup: 266,000 of libcrypto's 343,000). */
	const unsigned char *fde_table; /* (int32 start, int32 fde) pairs */
	size_t nfde;
	uint64_t hdr_vaddr;             /* starts are relative to it */
};

/* .eh_frame_hdr's encodings that fde_table is read with (as GCC and the
 * linkers write them): pc-relative and data-relative 4-byte values. */
#define EH_PE_PCREL_SDATA4 0x1b
#define EH_PE_UDATA4 0x03
#define EH_PE_DATAREL_SDATA4 0x3b

static int32_t le32(const unsigned char *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The search table of ELF's .eh_frame_hdr (PT_GNU_EH_FRAME), when it has
 * the usual encodings; else none, and gaps are crossed byte by byte. */
static void find_fde_table(Elf *elf, size_t nph, struct builder *b)
{
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const unsigned char *p;
		uint32_t n;

		if (!gelf_getphdr(elf, (int)i, &ph) ||
		    ph.p_type != PT_GNU_EH_FRAME || ph.p_filesz < 12)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
					 ph.p_filesz, ELF_T_BYTE);
		if (!d || !d->d_buf || d->d_size < 12)
			return;
		p = d->d_buf;
		if (p[0] != 1 || p[1] != EH_PE_PCREL_SDATA4 ||
		    p[2] != EH_PE_UDATA4 || p[3] != EH_PE_DATAREL_SDATA4)
			return;
		n = (uint32_t)le32(p + 8);
		if (n > (d->d_size - 12) / 8)
			return;
		b->fde_table = p + 12;
		b->nfde = n;
		b->hdr_vaddr = ph.p_vaddr;
		return;
	}
}

/* Where the search table's FDE I starts. */
static uint64_t fde_start(const struct builder *b, size_t i)
{
	return b->hdr_vaddr + (uint64_t)(int64_t)le32(b->fde_table + 8 * i);
}

/*
 * The next address that may have CFI, past A, which has none: the lowest
 * FDE start above A (UINT64_MAX: no FDE starts above), or without the
 * table A + 1.  No FDE covers what lies between: one that began lower and
 * reached past A would cover A.
 */
static uint64_t next_covered(const struct builder *b, uint64_t a)
{
	size_t lo = 0, hi = b->nfde;

	if (!b->fde_table)
		return a + 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fde_start(b, mid) <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nfde ? fde_start(b, lo) : UINT64_MAX;
}

/* Whether file offset OFF is skipped code; *NEXT: the next range edge
 * above OFF (UINT64_MAX: none). */
static bool skipped(const struct builder *b, uint64_t off, uint64_t *next)
{
	bool in = false;

	*next = UINT64_MAX;
	for (size_t i = 0; i < b->nskip; i++) {
		const struct mt_skip_range *r = &b->skip[i];

		if (off >= r->start && off < r->end)
			in = true;
		if (r->start > off && r->start < *next)
			*next = r->start;
		if (r->end > off && r->end < *next)
			*next = r->end;
	}
	return in;
}

static int push_row(struct builder *b, struct mt_unwind_row r)
{
	struct mt_unwind_table *t = b->t;
	struct mt_unwind_row *last = t->nrows ? &t->rows[t->nrows - 1] : NULL;

	/* Rules that did not change for us make no new row. */
	if (last && last->kind == r.kind && last->cfa_off8 == r.cfa_off8 &&
	    last->rbp_off8 == r.rbp_off8)
		return 0;
	if (last && last->pc == r.pc) {
		*last = r;
		return 0;
	}
	if (!t->rows || t->nrows == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 1024;
		struct mt_unwind_row *nv = realloc(t->rows, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		t->rows = nv;
		b->cap = cap;
	}
	t->rows[t->nrows++] = r;
	return 0;
}

/* A byte offset as a count of 8 bytes in [min, max], or false. */
static bool off8(int64_t off, int64_t min, int64_t max, int64_t *out)
{
	if (off % 8 || off / 8 < min || off / 8 > max)
		return false;
	*out = off / 8;
	return true;
}

/* The lazy-binding PLT's CFA: rsp + 8, + 8 once (rip & 15) >= THRESHOLD. */
static bool plt_cfa(const Dwarf_Op *ops, size_t n, uint8_t *threshold)
{
	static const uint8_t shape[] = {
		DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
		DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus,
	};

	if (n != sizeof(shape) || ops[0].number != 8 || ops[1].number != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return false;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
		return false;
	*threshold = (uint8_t)(ops[4].atom - DW_OP_lit0);
	return true;
}

/* FRAME's rules as a row (its pc is the caller's to set). */
static struct mt_unwind_row row_of(Dwarf_Frame *frame)
{
	struct mt_unwind_row r = { .kind = MT_UW_STOP };
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t v;
	uint8_t thr;
	int ra = dwarf_frame_info(frame, NULL, NULL, NULL);

	/* The return address: undefined in the outermost frame, else it
	 * must be saved at CFA - 8. */
	if (ra != REG_RIP ||
	    dwarf_frame_register(frame, ra, mem, &ops, &nops) != 0)
		return r;
	if (nops == 0 && ops) {
		r.kind = MT_UW_END;
		return r;
	}
	if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa ||
	    ops[1].atom != DW_OP_plus_uconst || (int64_t)ops[1].number != -8)
		return r;
	/* The CFA. */
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
		return r;
	if (nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == REG_RSP || ops[0].number == REG_RBP) &&
	    off8((int64_t)ops[0].number2, 1, UINT16_MAX, &v)) {
		r.kind = ops[0].number == REG_RSP ? MT_UW_RSP : MT_UW_RBP;
		r.cfa_off8 = (uint16_t)v;
	} else if (plt_cfa(ops, nops, &thr)) {
		r.kind = MT_UW_PLT;
		r.cfa_off8 = 1;
		r.rbp_off8 = (int8_t)thr;
		return r; /* PLT entries leave rbp alone */
	} else {
		return r;
	}
	/* The caller's rbp: kept (same value, or unspecified, which the
	 * x86-64 ABI makes the same for a callee-saved register), saved at
	 * CFA + offset, or lost. */
	if (dwarf_frame_register(frame, REG_RBP, mem, &ops, &nops) != 0) {
		nops = SIZE_MAX; /* no rule: lost */
		ops = NULL;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    ops[1].atom == DW_OP_plus_uconst &&
	    off8((int64_t)ops[1].number, INT8_MIN, INT8_MAX, &v) && v)
		r.rbp_off8 = (int8_t)v;
	else if (nops != 0) /* 0: same value (ops NULL) or unspecified */
		r.kind |= MT_UW_RBP_LOST;
	return r;
}

/* The rows of one executable segment: [vaddr, vaddr + size) at file
 * offset OFFSET. */
static int segment_rows(struct builder *b, Dwarf_CFI *cfi, uint64_t vaddr,
			uint64_t size, uint64_t offset)
{
	uint64_t a = vaddr, end = vaddr + size;
	int ret = 0;

	if (offset + size > UINT32_MAX)
		return -EFBIG;
	while (a < end && ret == 0) {
		struct mt_unwind_row r = { .pc = (uint32_t)(a - vaddr + offset) };
		Dwarf_Frame *frame;
		Dwarf_Addr start, stop;

		uint64_t edge;
		bool skip = skipped(b, a - vaddr + offset, &edge);

		if (dwarf_cfi_addrframe(cfi, a, &frame) != 0) {
			/* No CFI here: step by frame pointer up to the next
			 * FDE (gaps are padding, mostly). */
			uint64_t next = next_covered(b, a);

			if (next > end)
				next = end;
			r.kind = MT_UW_NONE;
			b->t->uncovered += next - a;
			ret = push_row(b, r);
			a = next;
			continue;
		}
		if (dwarf_frame_info(frame, &start, &stop, NULL) < 0 ||
		    stop <= a)
			stop = a + 1;
		/* A skipped range starts or ends within: a row of its own. */
		if (edge != UINT64_MAX && edge - offset + vaddr < stop)
			stop = edge - offset + vaddr;
		r = row_of(frame);
		r.pc = (uint32_t)(a - vaddr + offset);
		if (skip)
			r.kind |= MT_UW_SKIP;
		free(frame);
		b->t->nstop += (r.kind & MT_UW_KIND_MASK) == MT_UW_STOP;
		ret = push_row(b, r);
		a = stop < end ? stop : end;
	}
	/* Past the segment, nothing. */
	if (ret == 0)
		ret = push_row(b, (struct mt_unwind_row){
			.pc = (uint32_t)(end - vaddr + offset),
			.kind = MT_UW_NONE });
	return ret;
}

/* The page index of a table whose rows are complete. */
static int build_pages(struct mt_unwind_table *t)
{
	uint64_t last;
	uint32_t i = 0;

	if (!t->nrows)
		return 0;
	t->first_page = t->rows[0].pc >> MT_UW_PAGE_SHIFT;
	last = t->rows[t->nrows - 1].pc >> MT_UW_PAGE_SHIFT;
	t->npages = (uint32_t)(last - t->first_page + 1);
	t->pages = calloc((size_t)t->npages + 1, sizeof(*t->pages));
	if (!t->pages)
		return -ENOMEM;
	for (uint32_t k = 0; k <= t->npages; k++) {
		uint64_t at = (t->first_page + k) << MT_UW_PAGE_SHIFT;

		while (i + 1 < t->nrows && t->rows[i + 1].pc <= at)
			i++;
		t->pages[k] = i;
	}
	return 0;
}

int mt_unwind_table_build(int fd, const struct mt_skip_range *skip,
			  size_t nskip, struct mt_unwind_table *t)
{
	struct builder b = { .t = t, .skip = skip, .nskip = nskip };
	Elf *elf = NULL;
	Dwarf_CFI *cfi = NULL;
	size_t nph = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph)) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		goto cleanup; /* no .eh_frame: no rows */
	find_fde_table(elf, nph, &b);
	for (size_t i = 0; i < nph && ret == 0; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		ret = segment_rows(&b, cfi, ph.p_vaddr, ph.p_filesz,
				   ph.p_offset);
	}
	if (ret == 0)
		ret = build_pages(t);
cleanup:
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	if (ret)
		mt_unwind_table_free(t);
	return ret;
}

void mt_unwind_table_free(struct mt_unwind_table *t)
{
	free(t->rows);
	free(t->pages);
	memset(t, 0, sizeof(*t));
}
