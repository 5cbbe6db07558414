/* SPDX-License-Identifier: MIT */
/*
 * test_prologue.c: where entry uprobes go (src/loader/attach/prologue.c): the
 * decoding rules on byte strings, the whole-file checks on functions of
 * this test binary, and the answers on Debian's allocator libraries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include <capstone/capstone.h>

#include "memleak.h"
#include "prologue.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"
#define LIBC LIBDIR "libc.so.6"
#define JEMALLOC LIBDIR "libjemalloc.so.2"
#define TCMALLOC LIBDIR "libtcmalloc.so.4"
#define LIBSTDCXX LIBDIR "libstdc++.so.6"

/* ---- byte strings: mt_prologue_scan() -------------------------------- */

/* The arguments of the plainest function of KIND (malloc, free, ...). */
static int kind_nargs(int kind)
{
	switch (kind) {
	case MT_CALL_MALLOC: case MT_CALL_FREE: case MT_CALL_DELETE:
	case MT_CALL_VALLOC: case MT_CALL_PVALLOC:
		return 1;
	case MT_CALL_CALLOC: case MT_CALL_REALLOC: case MT_CALL_ALIGNED_ALLOC:
	case MT_CALL_MUNMAP:
		return 2;
	case MT_CALL_POSIX_MEMALIGN: case MT_CALL_REALLOCARRAY:
		return 3;
	default:
		return 6;
	}
}

/* Scan CODE for KIND with NARGS arguments: the advance, or -1 when nothing
 * was found. */
static long scan_n(const uint8_t *code, size_t len, int kind, int nargs)
{
	size_t adv = 12345;
	bool found = mt_prologue_scan(code, len, kind, nargs, &adv);

	if (!found) {
		assert_int_equal(adv, 0);
		return -1;
	}
	return (long)adv;
}

static long scan(const uint8_t *code, size_t len, int kind)
{
	return scan_n(code, len, kind, kind_nargs(kind));
}

#define SCAN(kind, ...)                                                       \
	scan((const uint8_t[]){ __VA_ARGS__ },                                \
	     sizeof((const uint8_t[]){ __VA_ARGS__ }), (kind))
#define SCAN_N(kind, nargs, ...)                                              \
	scan_n((const uint8_t[]){ __VA_ARGS__ },                              \
	       sizeof((const uint8_t[]){ __VA_ARGS__ }), (kind), (nargs))

static void test_emulated_first_instruction_stays(void **state)
{
	(void)state;
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x55, 0xc3), 0);       /* push %rbp */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x41, 0x54, 0xc3), 0);   /* push %r12 */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x90, 0xc3), 0);         /* nop */
	assert_int_equal(SCAN(MT_CALL_DELETE, 0xe9, 0, 0, 0, 0), 0); /* jmp */
}

static void test_argument_or_stack_write_stops(void **state)
{
	(void)state;
	/* mov %rsi,%rdi writes an argument: nothing may be skipped. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x89, 0xf7, 0x55), -1);
	/* mov %rdi,%r8: r8 is the fifth argument register, kept when the
	 * function's arguments are not known. */
	assert_int_equal(SCAN_N(MT_CALL_FREE, -1, 0x49, 0x89, 0xf8, 0x55), -1);
	assert_int_equal(SCAN_N(MT_CALL_XALLOCX, 5, 0x49, 0x89, 0xf8, 0x55), -1);
	/* sub $8,%rsp and mov %rsp,%rbp move the stack or frame pointer. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x83, 0xec, 0x08, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x89, 0xe5, 0x55), -1);
	/* A store to memory: mov %rdi,(%rax). */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x89, 0x38, 0x55), -1);
	/* mov 0x0(%rip),%rdx loads into posix_memalign's size. */
	assert_int_equal(SCAN(MT_CALL_POSIX_MEMALIGN, 0x48, 0x8b, 0x15, 0, 0, 0,
			      0, 0x55),
			 -1);
	/* Without REX, 8-bit register 7 is %bh (rbx), 6 %dh (rdx): mov $1,%dh
	 * writes posix_memalign's size, mov $1,%bh nothing of calloc's. */
	assert_int_equal(SCAN(MT_CALL_POSIX_MEMALIGN, 0xb6, 0x01, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_CALLOC, 0xb7, 0x01, 0x55), 2);
	/* With REX, it is %dil: rdi. */
	assert_int_equal(SCAN(MT_CALL_CALLOC, 0x40, 0xb7, 0x01, 0x55), -1);
	/* A store through a fs-relative address: mov %rax,%fs:0x10. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x64, 0x48, 0x89, 0x04, 0x25,
			      0x10, 0, 0, 0, 0x55),
			 -1);
	/* mul, div (implicit rdx:rax; div traps), xchg, pop, call *%rax. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0xf7, 0xe6, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0xf7, 0xf1, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x87, 0xc1, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x58, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0xff, 0xd0, 0x55), -1);
	/* lea's register form does not exist; cqto writes rdx. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x8d, 0xc0, 0x55), -1);
	assert_int_equal(SCAN(MT_CALL_POSIX_MEMALIGN, 0x48, 0x99, 0x55), -1);
}

static void test_flags_and_scratch_writes_are_skipped(void **state)
{
	(void)state;
	/* tcmalloc's free: mov 0x0(%rip),%rax; test %rax,%rax; jne. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x8b, 0x05, 1, 2, 3, 4,
			      0x48, 0x85, 0xc0, 0x0f, 0x85, 0x90, 0, 0, 0),
			 10);
	/* glibc's posix_memalign: cmpb $0x0,0x0(%rip); push %r12. */
	assert_int_equal(SCAN(MT_CALL_POSIX_MEMALIGN, 0x80, 0x3d, 1, 2, 3, 4,
			      0x00, 0x41, 0x54),
			 7);
	/* libstdc++: endbr64; test %rdi,%rdi; mov $1,%eax; push %rbx. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0xf3, 0x0f, 0x1e, 0xfa, 0x48,
			      0x85, 0xff, 0xb8, 1, 0, 0, 0, 0x53),
			 12);
	/* mov %fs:0x28,%rax (segment prefix, SIB without base); push %rbp. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x64, 0x48, 0x8b, 0x04, 0x25,
			      0x28, 0, 0, 0, 0x55),
			 9);
	/* mov %ecx,%r10d; test $0xfff,%r9d; jne (glibc's mmap). */
	assert_int_equal(SCAN(MT_CALL_MMAP, 0x41, 0x89, 0xca, 0x41, 0xf7, 0xc1,
			      0xff, 0x0f, 0, 0, 0x75, 0x14),
			 10);
	/* lea -0x1(%rsi),%rax; or $7,%rax; test %rsi,%rax; jne. */
	assert_int_equal(SCAN(MT_CALL_POSIX_MEMALIGN, 0x48, 0x8d, 0x46, 0xff,
			      0x48, 0x83, 0xc8, 0x07, 0x48, 0x85, 0xf0, 0x75,
			      0x2b),
			 11);
}

static void test_null_check_skipped_for_free_like(void **state)
{
	(void)state;
	/* test %rdi,%rdi; je +1; push %rbp; ret <- the je's target */
#define NULL_CHECK8 0x48, 0x85, 0xff, 0x74, 0x01, 0x55, 0xc3
	assert_int_equal(SCAN(MT_CALL_FREE, NULL_CHECK8), 5);
	assert_int_equal(SCAN(MT_CALL_DELETE, NULL_CHECK8), 5);
	/* Any other kind stops at the (emulated) je: no branch skipped. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, NULL_CHECK8), 3);
	assert_int_equal(SCAN(MT_CALL_REALLOC, NULL_CHECK8), 3);
	assert_int_equal(SCAN(MT_CALL_MUNMAP, NULL_CHECK8), 3);
	/* glibc's form: je rel32 to a ret further on, past a pop and ret. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x0f, 0x84, 3, 0,
			      0, 0, 0x55, 0x5d, 0xc3, 0xc3),
			 9);
	/* NOPs before the ret, and rep ret, are fine. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x74, 0x01, 0x55,
			      0x0f, 0x1f, 0x40, 0x00, 0x90, 0xf3, 0xc3),
			 5);
}

static void test_null_check_with_work_not_skipped(void **state)
{
	(void)state;
	/* The target calls something: stop at the je. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x74, 0x01, 0x55,
			      0xe8, 0, 0, 0, 0, 0xc3),
			 3);
	/* The target is a tail jump (it could free): stop at the je. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x74, 0x01, 0x55,
			      0xe9, 0, 0, 0, 0),
			 3);
	/* The target does something else first (xor %eax,%eax; ret). */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x74, 0x01, 0x55,
			      0x31, 0xc0, 0xc3),
			 3);
	/* The target lies outside what was read, or before the entry. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x74, 0x40, 0x55,
			      0xc3),
			 3);
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x74, 0xf0, 0x55,
			      0xc3),
			 3);
	/* Not a NULL check of rdi (test %rsi,%rsi): stop at the je. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xf6, 0x74, 0x01, 0x55,
			      0xc3),
			 3);
	/* jne, not je: the fall-through is the NULL path. */
	assert_int_equal(SCAN(MT_CALL_FREE, 0x48, 0x85, 0xff, 0x75, 0x01, 0xc3,
			      0x55),
			 3);
	/* What follows the je moves rsp: fall back to the je itself. */
	assert_int_equal(SCAN(MT_CALL_DELETE, 0x48, 0x85, 0xff, 0x74, 0x05,
			      0x48, 0x83, 0xec, 0x08, 0x55, 0xc3),
			 3);
}

static void test_nargs_by_name(void **state)
{
	(void)state;
	assert_int_equal(mt_prologue_nargs("malloc"), 1);
	assert_int_equal(mt_prologue_nargs("free"), 1);
	assert_int_equal(mt_prologue_nargs("calloc"), 2);
	assert_int_equal(mt_prologue_nargs("posix_memalign"), 3);
	assert_int_equal(mt_prologue_nargs("xallocx"), 4);
	assert_int_equal(mt_prologue_nargs("sdallocx"), 3);
	assert_int_equal(mt_prologue_nargs("tc_free_sized"), 2);
	assert_int_equal(mt_prologue_nargs("_dl_debug_state"), 0);
	/* C++: by the mangled parameter types. */
	assert_int_equal(mt_prologue_nargs("_Znwm"), 1);
	assert_int_equal(mt_prologue_nargs("_ZdaPv"), 1);
	assert_int_equal(mt_prologue_nargs("_ZdlPvm"), 2);
	assert_int_equal(mt_prologue_nargs("_ZnwmRKSt9nothrow_t"), 2);
	assert_int_equal(mt_prologue_nargs("_ZnamSt11align_val_t"), 2);
	assert_int_equal(mt_prologue_nargs("_ZnwmSt11align_val_tRKSt9nothrow_t"), 3);
	assert_int_equal(mt_prologue_nargs("_ZdlPvmSt11align_val_t"), 3);
	assert_int_equal(mt_prologue_nargs("_ZdaPvSt11align_val_tRKSt9nothrow_t"), 3);
	/* Unknown: -1 (all six kept). */
	assert_int_equal(mt_prologue_nargs("_Znwj"), -1);
	assert_int_equal(mt_prologue_nargs("_Zplm"), -1);
	assert_int_equal(mt_prologue_nargs("_Znw"), -1);
	assert_int_equal(mt_prologue_nargs("je_malloc"), -1);
}

static void test_allocator_prologues_by_arguments(void **state)
{
	(void)state;
	/* jemalloc 5.3's free: nine loads and register operations (rax, rcx,
	 * rdx written), then jne: free's only argument is rdi. */
#define JE_FREE 0x48, 0x89, 0xf8, 0x48, 0x8b, 0x15, 1, 2, 3, 4, 0x48, 0x89,  \
	0xf9, 0x48, 0xc1, 0xe8, 0x1a, 0x48, 0x81, 0xe1, 0, 0, 0, 0xc0, 0x25,  \
	0xf0, 0, 0, 0, 0x64, 0x48, 0x03, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x01,  \
	0xd0, 0x48, 0x3b, 0x88, 0xb0, 0x01, 0, 0, 0x0f, 0x85, 0x8a, 0, 0, 0
	assert_int_equal(SCAN(MT_CALL_FREE, JE_FREE), 48);
	/* A function with rdx an argument (sdallocx) could not skip it. */
	assert_int_equal(SCAN_N(MT_CALL_FREE, 3, JE_FREE), -1);
	/* jemalloc's malloc: cmp $0x1000,%rdi; ja. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x81, 0xff, 0, 0x10, 0, 0,
			      0x0f, 0x87, 0x93, 0, 0, 0),
			 7);
	/* jemalloc's sdallocx: mov %rdi,%r8; cmp $0x1000,%rsi; ja. */
	assert_int_equal(SCAN_N(MT_CALL_FREE, 3, 0x49, 0x89, 0xf8, 0x48, 0x81,
				0xfe, 0, 0x10, 0, 0, 0x77, 0x0c),
			 10);
	/* tcmalloc's malloc: mov x(%rip),%rax; mov %rdi,%r8; test; jne. */
#define TC_MALLOC 0x48, 0x8b, 0x05, 1, 2, 3, 4, 0x49, 0x89, 0xf8, 0x48,     \
	0x85, 0xc0, 0x0f, 0x85, 0x8e, 0, 0, 0
	assert_int_equal(SCAN(MT_CALL_MALLOC, TC_MALLOC), 13);
	assert_int_equal(SCAN_N(MT_CALL_MALLOC, -1, TC_MALLOC), -1);
	/* tcmalloc's calloc: mov x(%rip),%rcx; cmpb $0,%fs:0x10(%rcx); jne:
	 * rcx is no argument of calloc's (it is of xallocx's). */
#define TC_CALLOC 0x48, 0x8b, 0x0d, 1, 2, 3, 4, 0x64, 0x80, 0x79, 0x10, 0,  \
	0x0f, 0x85, 0x7e, 0x01, 0, 0
	assert_int_equal(SCAN(MT_CALL_CALLOC, TC_CALLOC), 12);
	assert_int_equal(SCAN_N(MT_CALL_XALLOCX, 4, TC_CALLOC), -1);
	/* jemalloc's rallocx: xor %ecx,%ecx; jmp: rcx is no argument. */
	assert_int_equal(SCAN_N(MT_CALL_REALLOC, 3, 0x31, 0xc9, 0xe9, 0, 0, 0,
				0),
			 2);
}

static void test_more_encodings_skipped(void **state)
{
	(void)state;
	/* xor %r10w,%r10w (66 REX); mov $1,%ax (66: a 2-byte immediate);
	 * movzwl %dx,%esi... no: movzbl (%rdx,%rax),%esi writes rsi, an
	 * argument of calloc: a malloc may. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x66, 0x45, 0x31, 0xd2, 0x66, 0xb8,
			      1, 0, 0x0f, 0xb6, 0x34, 0x02, 0x55),
			 12);
	assert_int_equal(SCAN(MT_CALL_CALLOC, 0x0f, 0xb6, 0x34, 0x02, 0x55), -1);
	/* cmovne %rdi,%rax; setne %al; shl %cl,%rax; neg %rax; not %r11;
	 * imul $24,%rax,%rax; movslq %esi,%r9; cltq; then jne rel8. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x0f, 0x45, 0xc7, 0x0f, 0x95,
			      0xc0, 0x48, 0xd3, 0xe0, 0x48, 0xf7, 0xd8, 0x49,
			      0xf7, 0xd3, 0x48, 0x6b, 0xc0, 0x18, 0x4c, 0x63,
			      0xce, 0x48, 0x98, 0x75, 0x02),
			 25);
	/* An operand-size prefix on a two-byte opcode is not taken. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x66, 0x0f, 0xb6, 0xc0, 0x55), -1);
	/* mov $imm64,%rax (REX.W b8: 8 bytes); mov $1,%r9d (41 b9). */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8,
			      0x41, 0xb9, 1, 0, 0, 0, 0x55),
			 16);
	/* The same into rdi: no. */
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0xbf, 1, 2, 3, 4, 5, 6, 7, 8,
			      0x55),
			 -1);
}

static void test_not_emulated_encodings(void **state)
{
	static const uint8_t rexw_push[] = { 0x48, 0x55 };
	static const uint8_t pause[] = { 0xf3, 0x90 };
	static const uint8_t xchg_r8[] = { 0x41, 0x90 };
	static const uint8_t cs_nopw[] = { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0,
					   0, 0, 0 };
	static const uint8_t jmp16[] = { 0x66, 0xe9, 0, 0 };
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t nopl5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t nopw9[] = { 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 };
	static const uint8_t xchg_ax[] = { 0x66, 0x90 };

	(void)state;
	assert_int_equal(mt_prologue_emulated_len(rexw_push, 2), 0);
	assert_int_equal(mt_prologue_emulated_len(pause, 2), 0);
	assert_int_equal(mt_prologue_emulated_len(xchg_r8, 2), 0);
	assert_int_equal(mt_prologue_emulated_len(cs_nopw, 10), 0);
	assert_int_equal(mt_prologue_emulated_len(jmp16, 4), 0);
	assert_int_equal(mt_prologue_emulated_len(endbr, 4), 0);
	assert_int_equal(mt_prologue_emulated_len(nopl5, 5), 5);
	assert_int_equal(mt_prologue_emulated_len(nopw9, 9), 9);
	assert_int_equal(mt_prologue_emulated_len(xchg_ax, 2), 2);
	/* Truncated: a jcc rel32 needs its 6 bytes. */
	assert_int_equal(mt_prologue_emulated_len((const uint8_t[]){ 0x0f, 0x84,
								    0, 0 },
						  4),
			 0);
}

static void test_truncated_or_long_prologue(void **state)
{
	(void)state;
	assert_int_equal(scan(NULL, 0, MT_CALL_FREE), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x8b), -1);
	assert_int_equal(SCAN(MT_CALL_MALLOC, 0x48, 0x8b, 0x05, 0, 0), -1);
	/* Only the first 24 instructions are looked at. */
#define TEST8 0x48, 0x85, 0xc0, 0x48, 0x85, 0xc0, 0x48, 0x85, 0xc0, 0x48, \
	0x85, 0xc0, 0x48, 0x85, 0xc0, 0x48, 0x85, 0xc0, 0x48, 0x85, 0xc0,  \
	0x48, 0x85, 0xc0
	assert_int_equal(SCAN(MT_CALL_MALLOC, TEST8, TEST8, 0x48, 0x85, 0xc0,
			      0x48, 0x85, 0xc0, 0x48, 0x85, 0xc0, 0x48, 0x85,
			      0xc0, 0x48, 0x85, 0xc0, 0x48, 0x85, 0xc0, 0x48,
			      0x85, 0xc0, 0x55),
			 69);
	assert_int_equal(SCAN(MT_CALL_MALLOC, TEST8, TEST8, TEST8, 0x55), -1);
}

/* ---- ELF files: file offsets of functions ----------------------------- */

/* File offset of the defined function NAME in PATH, through libelf. */
static bool func_offset(const char *path, const char *name, uint64_t *off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	bool found = false;
	uint64_t value = 0;
	size_t nph = 0;
	Elf *elf;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0) {
				value = s.st_value;
				found = true;
				break;
			}
		}
	}
	found = found && elf_getphdrnum(elf, &nph) == 0;
	for (size_t i = 0; found && i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && value >= ph.p_vaddr &&
		    value < ph.p_vaddr + ph.p_filesz) {
			*off = value - ph.p_vaddr + ph.p_offset;
			elf_end(elf);
			close(fd);
			return true;
		}
	}
	elf_end(elf);
	close(fd);
	return false;
}

static void read_bytes(const char *path, uint64_t off, uint8_t *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
	close(fd);
}

/* Where the entry probe of NAME in PATH goes, relative to its entry, for a
 * function of NARGS arguments. */
static long probe_advance_n(const char *path, const char *name, int kind,
			    int nargs)
{
	uint64_t off, probe;

	if (!func_offset(path, name, &off))
		return -1;
	assert_int_equal(mt_prologue_entry_offset(path, off, kind, nargs,
						  &probe),
			 0);
	assert_true(probe >= off && probe < off + 64);
	return (long)(probe - off);
}

/* The same with NAME's own arguments (all six for an unknown name). */
static long probe_advance(const char *path, const char *name, int kind)
{
	return probe_advance_n(path, name, kind, mt_prologue_nargs(name));
}

/* ---- this binary's own functions: the whole-file checks --------------- */

/*
 * Fixtures, called by nobody.  t_loop_free jumps back to the push after its
 * NULL check; t_inner is a function starting at t_entry_free's push.  int3
 * padding keeps other code's bytes out of rel8 reach: they could look like
 * a branch into a fixture (which only makes the answer more cautious).
 */
__asm__(".pushsection .text.prologue_fixtures,\"ax\",@progbits\n"
	".fill 256,1,0xcc\n"
	".globl t_plain_free\n .type t_plain_free,@function\n"
	"t_plain_free: test %rdi,%rdi\n je 1f\n push %rbp\n pop %rbp\n1: ret\n"
	".size t_plain_free, .-t_plain_free\n"
	".globl t_loop_free\n .type t_loop_free,@function\n"
	"t_loop_free: test %rdi,%rdi\n je 1f\n2: push %rbp\n pop %rbp\n"
	" dec %rdi\n jnz 2b\n1: ret\n"
	".size t_loop_free, .-t_loop_free\n"
	".globl t_entry_free\n .type t_entry_free,@function\n"
	"t_entry_free: test %rdi,%rdi\n je 1f\n"
	".globl t_inner\n .type t_inner,@function\n"
	"t_inner: push %rbp\n pop %rbp\n1: ret\n"
	".size t_inner, .-t_inner\n"
	".size t_entry_free, .-t_entry_free\n"
	".globl t_checked_malloc\n .type t_checked_malloc,@function\n"
	"t_checked_malloc: cmpb $0,t_flag(%rip)\n push %r12\n pop %r12\n ret\n"
	".size t_checked_malloc, .-t_checked_malloc\n"
	/* and $0xc0000000,%rcx is 48 81 e1 00 00 00 c0: its e1 00 reads as
	 * loope into the and's own bytes (as in jemalloc's free). */
	".globl t_selfbyte_free\n .type t_selfbyte_free,@function\n"
	"t_selfbyte_free: and $0xffffffffc0000000,%rcx\n push %rbp\n pop %rbp\n ret\n"
	".size t_selfbyte_free, .-t_selfbyte_free\n"
	".fill 256,1,0xcc\n"
	".popsection\n"
	".pushsection .data\n t_flag: .byte 0\n .popsection\n");

static void test_self_null_check(void **state)
{
	(void)state;
	/* test (3 bytes) + je rel8 (2): the push. */
	assert_int_equal(probe_advance("/proc/self/exe", "t_plain_free",
				       MT_CALL_FREE),
			 5);
	assert_int_equal(probe_advance("/proc/self/exe", "t_plain_free",
				       MT_CALL_MALLOC),
			 3);
	/* cmpb $0,x(%rip) (7 bytes): the push. */
	assert_int_equal(probe_advance("/proc/self/exe", "t_checked_malloc",
				       MT_CALL_MALLOC),
			 7);
}

static void test_self_misaligned_branch_in_skipped_bytes(void **state)
{
	(void)state;
	/* The loope read inside the and (7 bytes) is no branch: the push. */
	assert_int_equal(probe_advance_n("/proc/self/exe", "t_selfbyte_free",
					 MT_CALL_FREE, 1),
			 7);
	/* rcx is the fourth argument: not for a function of four. */
	assert_int_equal(probe_advance_n("/proc/self/exe", "t_selfbyte_free",
					 MT_CALL_XALLOCX, 4),
			 0);
}

static void test_self_reentered_push_not_used(void **state)
{
	(void)state;
	/* A branch back to the push would fire it twice: use the je. */
	assert_int_equal(probe_advance("/proc/self/exe", "t_loop_free",
				       MT_CALL_FREE),
			 3);
	/* So would a function starting there. */
	assert_int_equal(probe_advance("/proc/self/exe", "t_entry_free",
				       MT_CALL_FREE),
			 3);
}

static void test_self_batch_matches_single(void **state)
{
	static const char *const names[] = { "t_plain_free", "t_loop_free",
					     "t_entry_free", "t_checked_malloc",
					     "t_plain_free" };
	static const int kinds[] = { MT_CALL_FREE, MT_CALL_FREE, MT_CALL_FREE,
				     MT_CALL_MALLOC, MT_CALL_MALLOC };
	static const uint64_t want[] = { 5, 3, 3, 7, 3 };
	uint64_t offs[5], probes[5];

	(void)state;
	for (size_t i = 0; i < 5; i++)
		assert_true(func_offset("/proc/self/exe", names[i], &offs[i]));
	assert_int_equal(mt_prologue_entry_offsets("/proc/self/exe", 5, offs,
						   kinds, NULL, probes),
			 0);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(probes[i] - offs[i], want[i]);
	assert_int_equal(mt_prologue_entry_offsets("/proc/self/exe", 0, NULL,
						   NULL, NULL, NULL),
			 0);
}

static void test_file_errors_and_non_elf(void **state)
{
	static const uint8_t null_check[] = { 0x48, 0x85, 0xff, 0x74, 0x01,
					      0x55, 0xc3 };
	char path[] = "/tmp/test_prologue.XXXXXX";
	uint64_t probe = 1;
	int fd = mkstemp(path);

	(void)state;
	assert_int_equal(mt_prologue_entry_offset("/nonexistent/lib.so", 16,
						  MT_CALL_FREE, 1, &probe),
			 -ENOENT);
	assert_int_equal(probe, 16);
	assert_false(mt_prologue_emulated("/nonexistent/lib.so", 0));

	/* Not ELF: nothing can be checked, so the entry is kept. */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, null_check, sizeof(null_check)),
			 (ssize_t)sizeof(null_check));
	close(fd);
	assert_int_equal(mt_prologue_entry_offset(path, 0, MT_CALL_FREE, 1, &probe),
			 0);
	assert_int_equal(probe, 0);
	/* Past the end of the file: the entry, no error. */
	assert_int_equal(mt_prologue_entry_offset(path, 100, MT_CALL_FREE,
						  1, &probe),
			 0);
	assert_int_equal(probe, 100);
	assert_false(mt_prologue_emulated(path, 0)); /* test %rdi,%rdi */
	assert_true(mt_prologue_emulated(path, 3));  /* je */
	assert_true(mt_prologue_emulated(path, 5));  /* push %rbp */
	unlink(path);
}

/* ---- Debian's libraries ----------------------------------------------- */

static void test_glibc_free_probes_push_after_null_check(void **state)
{
	static const uint8_t null_check[] = { 0x48, 0x85, 0xff, 0x0f, 0x84 };
	uint8_t code[10];
	uint64_t off, probe;

	(void)state;
	assert_true(func_offset(LIBC, "free", &off));
	read_bytes(LIBC, off, code, sizeof(code));
	/* glibc 2.36: test %rdi,%rdi; je rel32; push %rbp */
	assert_memory_equal(code, null_check, sizeof(null_check));
	assert_int_equal(code[9], 0x55);
	assert_int_equal(mt_prologue_entry_offset(LIBC, off, MT_CALL_FREE, 1, &probe),
			 0);
	assert_int_equal(probe, off + 9);
	read_bytes(LIBC, probe, code, 1);
	assert_int_equal(code[0], 0x55);
	assert_false(mt_prologue_emulated(LIBC, off));
	assert_true(mt_prologue_emulated(LIBC, probe));
}

static void test_glibc_malloc_stays_at_entry(void **state)
{
	uint8_t code[2];
	uint64_t off, probe;

	(void)state;
	assert_true(func_offset(LIBC, "malloc", &off));
	read_bytes(LIBC, off, code, sizeof(code));
	/* An emulated push first: push %reg or push %r8-r15. */
	assert_true((code[0] & 0xf8) == 0x50 ||
		    (code[0] == 0x41 && (code[1] & 0xf8) == 0x50));
	assert_int_equal(mt_prologue_entry_offset(LIBC, off, MT_CALL_MALLOC,
						  1, &probe),
			 0);
	assert_int_equal(probe, off);
	assert_true(mt_prologue_emulated(LIBC, off));
}

struct lib_func {
	const char *name;
	int kind;
};

static const struct lib_func all_funcs[] = {
	{ "malloc", MT_CALL_MALLOC },
	{ "free", MT_CALL_FREE },
	{ "calloc", MT_CALL_CALLOC },
	{ "realloc", MT_CALL_REALLOC },
	{ "reallocarray", MT_CALL_REALLOCARRAY },
	{ "posix_memalign", MT_CALL_POSIX_MEMALIGN },
	{ "aligned_alloc", MT_CALL_ALIGNED_ALLOC },
	{ "memalign", MT_CALL_ALIGNED_ALLOC },
	{ "valloc", MT_CALL_VALLOC },
	{ "pvalloc", MT_CALL_PVALLOC },
	{ "mallocx", MT_CALL_MALLOC },
	{ "rallocx", MT_CALL_REALLOC },
	{ "xallocx", MT_CALL_XALLOCX },
	{ "dallocx", MT_CALL_FREE },
	{ "sdallocx", MT_CALL_FREE },
	{ "tc_free", MT_CALL_FREE },
	{ "tc_free_sized", MT_CALL_FREE },
	{ "_Znwm", MT_CALL_MALLOC },
	{ "_ZdlPv", MT_CALL_DELETE },
	{ "_ZdlPvm", MT_CALL_DELETE },
	{ "_ZdlPvmSt11align_val_t", MT_CALL_DELETE },
	{ "mmap", MT_CALL_MMAP },
	{ "munmap", MT_CALL_MUNMAP },
	{ "mremap", MT_CALL_MREMAP },
};

/* Every answer is the entry or an emulated instruction close after it. */
static void check_library(const char *path)
{
	for (size_t i = 0; i < sizeof(all_funcs) / sizeof(all_funcs[0]); i++) {
		uint64_t off;
		long adv = probe_advance(path, all_funcs[i].name,
					 all_funcs[i].kind);

		if (adv <= 0)
			continue;
		assert_true(func_offset(path, all_funcs[i].name, &off));
		if (!mt_prologue_emulated(path, off + (uint64_t)adv))
			fail_msg("%s:%s: +%ld is not emulated", path,
				 all_funcs[i].name, adv);
	}
}

static bool present(const char *path)
{
	if (access(path, R_OK) == 0)
		return true;
	print_message("skipping: %s is not installed\n", path);
	return false;
}

static void test_library_answers_are_emulated(void **state)
{
	static const char *const libs[] = { LIBC, JEMALLOC, TCMALLOC,
					    LIBSTDCXX };

	(void)state;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (present(libs[i]))
			check_library(libs[i]);
}

/* Advance for NAME in PATH when its first bytes are PREFIX, else -2. */
static long advance_if(const char *path, const char *name, int kind,
		       const uint8_t *prefix, size_t n)
{
	uint8_t code[16];
	uint64_t off;

	if (!func_offset(path, name, &off))
		return -2;
	read_bytes(path, off, code, n);
	if (memcmp(code, prefix, n) != 0) {
		print_message("skipping %s: unexpected prologue\n", name);
		return -2;
	}
	return probe_advance(path, name, kind);
}

static void test_tcmalloc_free_probes_jne(void **state)
{
	/* mov 0x...(%rip),%rax; test %rax,%rax; jne */
	static const uint8_t pro[] = { 0x48, 0x8b, 0x05 };
	long adv;

	(void)state;
	if (!present(TCMALLOC))
		skip();
	adv = advance_if(TCMALLOC, "tc_free", MT_CALL_FREE, pro, sizeof(pro));
	if (adv == -2)
		skip();
	assert_int_equal(adv, 10);
}

static void test_jemalloc_free_and_malloc_probe_first_branch(void **state)
{
	static const uint8_t free_pro[] = { 0x48, 0x89, 0xf8, 0x48, 0x8b, 0x15 };
	static const uint8_t malloc_pro[] = { 0x48, 0x81, 0xff, 0x00, 0x10,
					      0x00, 0x00, 0x0f, 0x87 };
	long adv;

	(void)state;
	if (!present(JEMALLOC))
		skip();
	/* free: the jne after nine instructions (48 bytes). */
	adv = advance_if(JEMALLOC, "free", MT_CALL_FREE, free_pro,
			 sizeof(free_pro));
	if (adv == -2)
		skip();
	assert_int_equal(adv, 48);
	adv = advance_if(JEMALLOC, "malloc", MT_CALL_MALLOC, malloc_pro,
			 sizeof(malloc_pro));
	if (adv != -2)
		assert_int_equal(adv, 7);
}

static void test_tcmalloc_malloc_probes_jne(void **state)
{
	/* mov 0x...(%rip),%rax; mov %rdi,%r8; test %rax,%rax; jne */
	static const uint8_t pro[] = { 0x48, 0x8b, 0x05 };
	long adv;

	(void)state;
	if (!present(TCMALLOC))
		skip();
	adv = advance_if(TCMALLOC, "malloc", MT_CALL_MALLOC, pro, sizeof(pro));
	if (adv == -2)
		skip();
	assert_int_equal(adv, 13);
}

/* The x86 number (rax 0, ..., r15 15) of capstone's register name R, or -1
 * (flags, rip, ...). */
static int reg_number(const char *r)
{
	static const char *const names[8][5] = {
		{ "rax", "eax", "ax", "al", "ah" }, { "rcx", "ecx", "cx", "cl", "ch" },
		{ "rdx", "edx", "dx", "dl", "dh" }, { "rbx", "ebx", "bx", "bl", "bh" },
		{ "rsp", "esp", "sp", "spl", "" },  { "rbp", "ebp", "bp", "bpl", "" },
		{ "rsi", "esi", "si", "sil", "" },  { "rdi", "edi", "di", "dil", "" },
	};
	int n;

	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 5; j++)
			if (names[i][j][0] && strcmp(r, names[i][j]) == 0)
				return i;
	if (sscanf(r, "r%d", &n) == 1 && n >= 8 && n <= 15)
		return n;
	return -1;
}

/*
 * capstone's reading of [entry, probe) of NAME in PATH: no branch, no
 * memory written, no write to rsp, rbp or an argument register of NAME;
 * and the probed instruction a jmp, jcc, call, push or nop.  Returns the
 * number of instructions skipped.
 */
static int check_with_capstone(csh cs, const char *path, const char *name,
			       int kind)
{
	static const int args[6] = { 7, 6, 2, 1, 8, 9 }; /* rdi, rsi, ... */
	uint8_t code[256];
	uint64_t off;
	long adv = probe_advance(path, name, kind);
	int nargs = mt_prologue_nargs(name), n = 0;
	cs_insn *insn = NULL;
	size_t count;

	if (adv < 0)
		return 0; /* not defined here */
	assert_true(func_offset(path, name, &off));
	read_bytes(path, off, code, sizeof(code));
	count = cs_disasm(cs, code, sizeof(code), off, 0, &insn);
	for (size_t i = 0; i < count && insn[i].address < off + (uint64_t)adv;
	     i++, n++) {
		cs_regs rr, rw;
		uint8_t nr, nw;
		cs_detail *d = insn[i].detail;

		/* Rule 2: free's NULL check, `test %rdi,%rdi; je` to a ret. */
		bool null_check = (kind == MT_CALL_FREE || kind == MT_CALL_DELETE) &&
				  i > 0 && strcmp(insn[i].mnemonic, "je") == 0 &&
				  strcmp(insn[i - 1].mnemonic, "test") == 0 &&
				  strcmp(insn[i - 1].op_str, "rdi, rdi") == 0;

		for (uint8_t g = 0; g < d->groups_count && !null_check; g++)
			if (d->groups[g] == CS_GRP_JUMP || d->groups[g] == CS_GRP_CALL ||
			    d->groups[g] == CS_GRP_RET)
				fail_msg("%s:%s: skips %s %s", path, name,
					 insn[i].mnemonic, insn[i].op_str);
		for (uint8_t k = 0; k < d->x86.op_count; k++)
			if (d->x86.operands[k].type == X86_OP_MEM &&
			    (d->x86.operands[k].access & CS_AC_WRITE) &&
			    strcmp(insn[i].mnemonic, "lea") != 0)
				fail_msg("%s:%s: skips a store: %s %s", path,
					 name, insn[i].mnemonic, insn[i].op_str);
		assert_int_equal(cs_regs_access(cs, &insn[i], rr, &nr, rw, &nw),
				 CS_ERR_OK);
		for (uint8_t k = 0; k < nw; k++) {
			const char *r = cs_reg_name(cs, rw[k]);
			int num = reg_number(r);
			bool bad = num == 4 || num == 5;

			for (int a = 0; a < (nargs < 0 ? 6 : nargs); a++)
				bad |= num == args[a];
			if (bad)
				fail_msg("%s:%s: skips %s %s, which writes %s",
					 path, name, insn[i].mnemonic,
					 insn[i].op_str, r);
		}
	}
	if (adv > 0)
		assert_true(mt_prologue_emulated(path, off + (uint64_t)adv));
	cs_free(insn, count);
	return n;
}

static void test_skipped_instructions_checked_by_capstone(void **state)
{
	static const char *const libs[] = { LIBC, JEMALLOC, TCMALLOC,
					    LIBDIR "libtcmalloc_minimal.so.4",
					    LIBSTDCXX };
	int skipped = 0;
	csh cs;

	(void)state;
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]); l++)
		for (size_t i = 0; present(libs[l]) &&
				   i < sizeof(all_funcs) / sizeof(all_funcs[0]); i++)
			skipped += check_with_capstone(cs, libs[l],
						       all_funcs[i].name,
						       all_funcs[i].kind);
	cs_close(&cs);
	/* Something was skipped at all (jemalloc's free alone: 9). */
	assert_true(skipped >= 9);
}

static void test_jemalloc_sized_delete_stops_at_je(void **state)
{
	/* _ZdlPvm: test %rdi,%rdi; je; sub $8,%rsp; call sdallocx */
	static const uint8_t pro[] = { 0x48, 0x85, 0xff, 0x74, 0x13, 0x48, 0x83,
				       0xec, 0x08 };
	long adv;

	(void)state;
	if (!present(JEMALLOC))
		skip();
	adv = advance_if(JEMALLOC, "_ZdlPvm", MT_CALL_DELETE, pro, sizeof(pro));
	if (adv == -2)
		skip();
	assert_int_equal(adv, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emulated_first_instruction_stays),
		cmocka_unit_test(test_argument_or_stack_write_stops),
		cmocka_unit_test(test_flags_and_scratch_writes_are_skipped),
		cmocka_unit_test(test_null_check_skipped_for_free_like),
		cmocka_unit_test(test_null_check_with_work_not_skipped),
		cmocka_unit_test(test_not_emulated_encodings),
		cmocka_unit_test(test_truncated_or_long_prologue),
		cmocka_unit_test(test_self_null_check),
		cmocka_unit_test(test_self_reentered_push_not_used),
		cmocka_unit_test(test_self_batch_matches_single),
		cmocka_unit_test(test_file_errors_and_non_elf),
		cmocka_unit_test(test_glibc_free_probes_push_after_null_check),
		cmocka_unit_test(test_glibc_malloc_stays_at_entry),
		cmocka_unit_test(test_library_answers_are_emulated),
		cmocka_unit_test(test_tcmalloc_free_probes_jne),
		cmocka_unit_test(test_jemalloc_sized_delete_stops_at_je),
		cmocka_unit_test(test_nargs_by_name),
		cmocka_unit_test(test_allocator_prologues_by_arguments),
		cmocka_unit_test(test_more_encodings_skipped),
		cmocka_unit_test(test_self_misaligned_branch_in_skipped_bytes),
		cmocka_unit_test(test_jemalloc_free_and_malloc_probe_first_branch),
		cmocka_unit_test(test_tcmalloc_malloc_probes_jne),
		cmocka_unit_test(test_skipped_instructions_checked_by_capstone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
