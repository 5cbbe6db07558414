/* SPDX-License-Identifier: MIT */
/*
 * test_symbolize_clang.c: symbolisation of code built by clang with DWARF 5
 * (symbolize_clang.c, linked in): its unit is missing from .debug_aranges
 * and its DW_AT_decl_file/DW_AT_call_file use file index 0, both of which
 * libdw 0.188 mishandles (see src/report/symbols/cu_index.h and resolve.c).
 * A binary of its own: valgrind 3.19 cannot read clang's DWARF 5.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>
#include "cu_index.h"
#include "file_dwfl.h"
#include "self_profile.h"
#include "symbolize.h"

/* In symbolize_clang.c: clang_outer inlines clang_inlined, which records. */
struct clang_site {
	uint64_t ra;
	int line, call_line;
};
extern const int clang_inlined_decl, clang_outer_decl;
void clang_outer(struct clang_site *s);

static void test_clang_frames(void **state)
{
	struct fixture *fx = *state;
	struct clang_site s = { 0 };

	clang_outer(&s);
	add_self(&fx->raw);
	add_stack(&fx->raw, (uint32_t)getpid(), 1, &s.ra, 1);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_profile *p = &fx->out;

	/* Found through the unit's ranges: the inlined frame and its caller. */
	assert_int_equal(p->samples[0].nframes, 2);
	for (size_t k = 0; k < 2; k++) {
		const struct mt_frame *f = frame_of(p, 0, k);

		assert_non_null(f->file);
		assert_string_equal(base(f->file), "symbolize_clang.c");
		/* File index 0 (DWARF 5) is the unit's own file. */
		assert_non_null(f->decl_file);
		assert_string_equal(base(f->decl_file), "symbolize_clang.c");
	}
	assert_string_equal(frame_of(p, 0, 0)->function, "clang_inlined");
	assert_int_equal(frame_of(p, 0, 0)->line, s.line);
	assert_int_equal(frame_of(p, 0, 0)->decl_line, clang_inlined_decl);
	assert_true(frame_of(p, 0, 0)->inlined);
	assert_string_equal(frame_of(p, 0, 1)->function, "clang_outer");
	assert_int_equal(frame_of(p, 0, 1)->line, s.call_line);
	assert_int_equal(frame_of(p, 0, 1)->decl_line, clang_outer_decl);
	assert_false(frame_of(p, 0, 1)->inlined);
}

/* The name of the unit the index finds for run-time address PC. */
static const char *unit_at(struct mt_cu_index *ix, Dwarf_Addr bias, uint64_t pc)
{
	Dwarf_Die *cu = mt_cu_index_find(ix, pc - bias);

	return cu ? base(dwarf_diename(cu)) : NULL;
}

static void test_cu_index(void **state)
{
	struct fixture *fx = *state;
	const struct mt_process *self = add_self(&fx->raw);
	const struct mt_module *exe = NULL;

	for (size_t i = 0; i < self->nmods && !exe; i++)
		if ((uint64_t)(uintptr_t)&clang_outer >= self->mods[i].start &&
		    (uint64_t)(uintptr_t)&clang_outer < self->mods[i].end)
			exe = &self->mods[i];
	assert_non_null(exe);
	/* The file's session has it at its ELF addresses. */
	uint64_t clang_pc = (uint64_t)(uintptr_t)&clang_outer - exe->bias;
	uint64_t gcc_pc = (uint64_t)(uintptr_t)&test_cu_index - exe->bias;
	Dwfl *dwfl = mt_file_dwfl_open(exe);

	assert_non_null(dwfl);
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, clang_pc);
	Dwarf_Addr bias = 0;
	Dwarf *dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	struct mt_cu_index ix;

	assert_non_null(dw);
	assert_int_equal(mt_cu_index_build(&ix, dw), 0);
	assert_true(ix.n > 0);
	assert_string_equal(unit_at(&ix, bias, clang_pc), "symbolize_clang.c");
	assert_string_equal(unit_at(&ix, bias, gcc_pc), "test_symbolize_clang.c");
	assert_null(mt_cu_index_find(&ix, 0));
	assert_null(mt_cu_index_find(&ix, UINT64_MAX));
	mt_cu_index_free(&ix);

	/* The lookup the symboliser uses agrees, whatever .debug_aranges say. */
	Dwarf_Die *cu;

	assert_int_equal(mt_file_dwfl_addrdie(mod, clang_pc, &cu, &bias), 0);
	assert_non_null(cu);
	assert_string_equal(base(dwarf_diename(cu)), "symbolize_clang.c");
	mt_file_dwfl_close(dwfl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clang_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cu_index, setup, teardown),
	};

	return cmocka_run_group_tests_name("symbolize_clang", tests, NULL, NULL);
}
