/* SPDX-License-Identifier: MIT */
/*
 * symbolize_clang.c: code for test_symbolize.c built by clang with DWARF 5,
 * as clang builds by default: no .debug_aranges for this unit (libdw 0.188
 * cannot find its CU without them) and file index 0 for this file in
 * DW_AT_decl_file/DW_AT_call_file (which libdw 0.188's dwarf_decl_file
 * rejects).  Always built without sanitizers: it is a fixture.
 */
#include <stdint.h>

void record_return(uint64_t *ra);

struct clang_site {
	uint64_t ra;
	int line;       /* of the call in clang_inlined */
	int call_line;  /* of the call of clang_inlined in clang_outer */
};

const int clang_inlined_decl = __LINE__ + 1;
static inline __attribute__((always_inline)) void clang_inlined(struct clang_site *s)
{
	record_return(&s->ra); s->line = __LINE__;
}

const int clang_outer_decl = __LINE__ + 1;
__attribute__((noinline)) void clang_outer(struct clang_site *s)
{
	clang_inlined(s); s->call_line = __LINE__;
	__asm__ volatile("" ::: "memory");
}
