// SPDX-License-Identifier: MIT
/*
 * test_unwind_table.c: src/loader/unwind/unwind_table.c, on a fixture whose call
 * frame information is known row by row (unwind_fixture.S, built into
 * build/unit-objs/libunwind_fixture.so) and on Debian's libc.
 *
 * Rows are looked up as the BPF unwinder does (bpf/unwind.h: the page
 * index, then the last row at or before the offset), so the page index is
 * tested along with the rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "unwind_table.h"

static char fixture[PATH_MAX];

/* The fixture's path: build/unit-objs/, from build/tests/unit/NAME. */
static void find_fixture(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	assert_true(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = '\0';
	assert_true((size_t)snprintf(fixture, sizeof(fixture),
				     "%.*s/../../unit-objs/libunwind_fixture.so",
				     PATH_MAX - 64, self) < sizeof(fixture));
}

/* The file offset of symbol NAME in the ELF file open on FD. */
static uint64_t sym_offset(int fd, const char *name)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	uint64_t vaddr = UINT64_MAX, off = UINT64_MAX;
	size_t nph;

	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) != NULL && vaddr == UINT64_MAX) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0)
				vaddr = s.st_value;
		}
	}
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(elf);
	if (off == UINT64_MAX)
		fail_msg("no symbol %s in the fixture's code", name);
	return off;
}

/* The row covering file offset OFF, found as bpf/unwind.h finds it. */
static struct mt_unwind_row lookup(const struct mt_unwind_table *t,
				   uint64_t off)
{
	struct mt_unwind_row none = { 0 };
	uint64_t k = (off >> MT_UW_PAGE_SHIFT) - t->first_page;
	uint32_t lo, hi;

	if (k >= t->npages)
		return none;
	lo = t->pages[k];
	hi = t->pages[k + 1];
	assert_true(lo <= hi && hi < t->nrows);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (t->rows[mid].pc <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return t->rows[lo].pc <= off ? t->rows[lo] : none;
}

struct want {
	const char *label;
	int delta;        /* bytes from the label */
	uint8_t kind;
	uint16_t cfa_off8;
	int8_t rbp_off8;
};

static const struct want wants[] = {
	{ "fx_rsp", 0, MT_UW_RSP, 1, 0 },
	{ "L_rsp_pushed", -1, MT_UW_RSP, 1, 0 },
	{ "L_rsp_pushed", 0, MT_UW_RSP, 2, 0 },
	{ "L_rsp_sub", 0, MT_UW_RSP, 5, 0 },
	{ "L_rsp_add", 0, MT_UW_RSP, 2, 0 },
	{ "L_rsp_pop", 0, MT_UW_RSP, 1, 0 },
	{ "fx_rbp", 0, MT_UW_RSP, 1, 0 },
	{ "L_rbp_pushed", 0, MT_UW_RSP, 2, -2 },
	{ "L_rbp_set", 0, MT_UW_RBP, 2, -2 },
	{ "L_rbp_set", 1, MT_UW_RBP, 2, -2 },
	{ "L_rbp_popped", 0, MT_UW_RSP, 1, 0 },
	{ "fx_nocfi", 0, MT_UW_NONE, 0, 0 },
	{ "fx_nocfi", 2, MT_UW_NONE, 0, 0 },
	{ "fx_end", 0, MT_UW_END, 0, 0 },
	{ "fx_stop", 0, MT_UW_RSP, 1, 0 },
	{ "L_stop_odd", 0, MT_UW_STOP, 0, 0 },
	{ "L_stop_back", 0, MT_UW_RSP, 1, 0 },
	{ "L_stop_r12", 0, MT_UW_STOP, 0, 0 },
	{ "L_stop_rsp", 0, MT_UW_RSP, 1, 0 },
	{ "fx_plt", 0, MT_UW_PLT, 1, 11 },
	{ "fx_lost", 0, MT_UW_RSP, 1, 0 },
	{ "L_lost_moved", 0, MT_UW_RSP | MT_UW_RBP_LOST, 1, 0 },
	{ "L_lost_back", 0, MT_UW_RSP, 1, 0 },
	{ "fx_big", 0, MT_UW_RSP, 1, 0 },
	{ "L_big_sub", 0, MT_UW_RSP, 70008 / 8, 0 },
	{ "L_big_add", 0, MT_UW_RSP, 1, 0 },
};

static void fixture_rows(void **state)
{
	struct mt_unwind_table t;
	int fd;

	(void)state;
	find_fixture();
	fd = open(fixture, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mt_unwind_table_build(fd, NULL, 0, &t), 0);
	assert_true(t.nrows > 10);
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		uint64_t off = sym_offset(fd, w->label) + (uint64_t)(int64_t)w->delta;
		struct mt_unwind_row r = lookup(&t, off);

		if (r.kind != w->kind || r.cfa_off8 != w->cfa_off8 ||
		    r.rbp_off8 != w->rbp_off8)
			fail_msg("%s%+d (offset 0x%llx): kind 0x%x cfa %u rbp %d, expected kind 0x%x cfa %u rbp %d",
				 w->label, w->delta, (unsigned long long)off,
				 r.kind, r.cfa_off8, r.rbp_off8, w->kind,
				 w->cfa_off8, w->rbp_off8);
	}
	/* Two rules the unwinder cannot follow, counted. */
	assert_int_equal(t.nstop, 2);
	assert_true(t.uncovered >= 3); /* fx_nocfi's three bytes at least */
	mt_unwind_table_free(&t);
	close(fd);
}

/* Rows within a skipped range carry MT_UW_SKIP, split at its ends. */
static void skip_ranges(void **state)
{
	struct mt_unwind_table t;
	struct mt_skip_range skip;
	int fd;

	(void)state;
	find_fixture();
	fd = open(fixture, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* From the middle of a row (after sub) to the middle of another. */
	skip.start = sym_offset(fd, "L_rsp_sub") + 1;
	skip.end = sym_offset(fd, "L_rsp_pop") + 1;
	assert_int_equal(mt_unwind_table_build(fd, &skip, 1, &t), 0);
	assert_int_equal(lookup(&t, skip.start - 1).kind, MT_UW_RSP);
	assert_int_equal(lookup(&t, skip.start).kind, MT_UW_RSP | MT_UW_SKIP);
	assert_int_equal(lookup(&t, skip.start).cfa_off8, 5);
	assert_int_equal(lookup(&t, sym_offset(fd, "L_rsp_add")).kind,
			 MT_UW_RSP | MT_UW_SKIP);
	assert_int_equal(lookup(&t, skip.end - 1).kind, MT_UW_RSP | MT_UW_SKIP);
	assert_int_equal(lookup(&t, skip.end - 1).cfa_off8, 1);
	assert_int_equal(lookup(&t, skip.end).kind, MT_UW_RSP);
	assert_int_equal(lookup(&t, skip.end).cfa_off8, 1);
	mt_unwind_table_free(&t);
	close(fd);
}

/* Rows sorted, merged and indexed, on a real library. */
static void libc_table(void **state)
{
	static const char *paths[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	struct mt_unwind_table t;
	int fd = -1;

	(void)state;
	for (size_t i = 0; i < 2 && fd < 0; i++)
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mt_unwind_table_build(fd, NULL, 0, &t), 0);
	assert_true(t.nrows > 5000);
	assert_true(t.nstop < t.nrows / 100);
	for (uint32_t i = 1; i < t.nrows; i++) {
		const struct mt_unwind_row *a = &t.rows[i - 1], *b = &t.rows[i];

		assert_true(a->pc < b->pc);
		assert_false(a->kind == b->kind && a->cfa_off8 == b->cfa_off8 &&
			     a->rbp_off8 == b->rbp_off8);
	}
	/* Every row is found at its first and last byte. */
	for (uint32_t i = 0; i + 1 < t.nrows; i++) {
		struct mt_unwind_row r = lookup(&t, t.rows[i].pc);

		assert_int_equal(r.pc, t.rows[i].pc);
		r = lookup(&t, t.rows[i + 1].pc - 1);
		assert_int_equal(r.pc, t.rows[i].pc);
	}
	mt_unwind_table_free(&t);
	close(fd);
}

static void not_elf(void **state)
{
	struct mt_unwind_table t;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(mt_unwind_table_build(fd, NULL, 0, &t), -ENOEXEC);
	assert_null(t.rows);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixture_rows),
		cmocka_unit_test(skip_ranges),
		cmocka_unit_test(libc_table),
		cmocka_unit_test(not_elf),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
