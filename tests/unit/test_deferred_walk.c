/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_walk.c: the loader's walk of a copied stack
 * (src/loader/unwind/deferred_walk.c, with the step of bpf/unwind_step.h).  A
 * table of one file (a frame whose CFA is rsp + 16, then the outermost
 * frame), a copy of a stack through it: the walk gives both frames and
 * ends at the outermost; a frame skipped at the top (operator new's);
 * the word it needs on a page the BPF program could not read: cut short,
 * as the BPF walk would be; a file whose table is not there yet: wait;
 * a frame with no table (auto) stepped by frame pointer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "deferred_walk.h"

#define BASE 0x400000ULL   /* where the file is mapped (offset 0) */
#define SP 0x7ffd0000ULL   /* page-aligned stack pointer of the copy */

static struct mt_unwind_row rows[3];
static uint64_t pages[2];
static enum mt_dw_module module_answer;

static enum mt_dw_module module(void *ctx, const struct mt_dw_mapping *m,
				struct mt_unwind_module *out)
{
	(void)ctx;
	assert_int_equal(m->file.ino, 2);
	*out = (struct mt_unwind_module){ .row_first = 0, .nrows = 3,
					  .page_first = 0, .npages = 1,
					  .first_page = 0 };
	return module_answer;
}

static int no_mapping(void *ctx, uint64_t pc, struct mt_dw_mapping *out)
{
	(void)ctx;
	(void)pc;
	(void)out;
	return -1;
}

/* Rows: [0, 0x800) CFA = rsp + 16 (SKIP when SKIP_TOP), [0x800, 0x900)
 * no CFI, [0x900, ...) the outermost frame. */
static void tables(struct mt_dw_env *env, uint32_t mode, int skip_top)
{
	rows[0] = (struct mt_unwind_row){ .pc = 0, .kind = MT_UW_RSP |
					  (skip_top ? MT_UW_SKIP : 0),
					  .cfa_off8 = 2 };
	rows[1] = (struct mt_unwind_row){ .pc = 0x800, .kind = MT_UW_NONE };
	rows[2] = (struct mt_unwind_row){ .pc = 0x900, .kind = MT_UW_END };
	pages[0] = 0;
	pages[1] = 2;
	memset(env, 0, sizeof(*env));
	env->mode = mode;
	env->tables = (struct mt_dw_tables){ rows, 3, pages, 2 };
	env->mapping = no_mapping;
	env->module = module;
	module_answer = MT_DW_MODULE_FOUND;
}

/* A copy at the first frame, pc at offset 0x100, RA at SP + 8. */
static struct mt_defer_copy *copy_of(uint64_t ra)
{
	struct mt_defer_copy *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->pc = BASE + 0x100;
	c->sp = SP;
	c->bp = 0;
	c->len = 4096;
	c->pages_read = 1;
	c->vm_start = BASE;
	c->vm_end = BASE + 0x1000;
	c->vm_delta = (uint64_t)0 - BASE;
	c->file = (struct mt_file_key){ 1, 2 };
	memcpy(c->stack + 8, &ra, 8);
	return c;
}

static void whole(void **state)
{
	struct mt_dw_env env;
	struct mt_defer_copy *c = copy_of(BASE + 0x950);
	uint64_t ips[MT_MAX_STACK_DEPTH], used = 0;
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_CFI, 0);
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_DONE);
	assert_int_equal(n, 2);
	assert_int_equal(ips[0], BASE + 0x100);
	assert_int_equal(ips[1], BASE + 0x950);
	assert_int_equal(used, 16);
	free(c);
}

static void skipped_top(void **state)
{
	struct mt_dw_env env;
	struct mt_defer_copy *c = copy_of(BASE + 0x950);
	uint64_t ips[MT_MAX_STACK_DEPTH], used = 0;
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_CFI, 1);
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_DONE);
	assert_int_equal(n, 1);
	assert_int_equal(ips[0], BASE + 0x950);
	free(c);
}

static void hole(void **state)
{
	struct mt_dw_env env;
	struct mt_defer_copy *c = copy_of(BASE + 0x950);
	uint64_t ips[MT_MAX_STACK_DEPTH], used = 0;
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_CFI, 0);
	c->pages_read = 0; /* the page of the return address: not read */
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_TRUNCATED);
	assert_int_equal(n, 1);
	assert_int_equal(mt_dw_last_reason(), MT_TRUNC_BAD_STACK);
	assert_int_equal(ips[0], BASE + 0x100);
	free(c);
}

static void waits(void **state)
{
	struct mt_dw_env env;
	struct mt_defer_copy *c = copy_of(BASE + 0x950);
	uint64_t ips[MT_MAX_STACK_DEPTH], used = 0;
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_CFI, 0);
	module_answer = MT_DW_MODULE_LATER;
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_WAIT);
	module_answer = MT_DW_MODULE_NEVER; /* the BPF walk's "no table" */
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_TRUNCATED);
	assert_int_equal(n, 1);
	assert_int_equal(mt_dw_last_reason(), MT_TRUNC_NO_TABLE);
	free(c);
}

static void frame_pointer(void **state)
{
	struct mt_dw_env env;
	/* A return address into the code with no CFI (0x800): auto steps it
	 * by frame pointer, rbp saved at SP + 32, RA above it: the outermost. */
	struct mt_defer_copy *c = copy_of(BASE + 0x850);
	uint64_t ips[MT_MAX_STACK_DEPTH], used = 0, rbp = 0, ra = BASE + 0x960;
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_AUTO, 0);
	c->bp = SP + 32;
	memcpy(c->stack + 32, &rbp, 8);
	memcpy(c->stack + 40, &ra, 8);
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_DONE);
	assert_int_equal(n, 3);
	assert_int_equal(ips[1], BASE + 0x850);
	assert_int_equal(ips[2], BASE + 0x960);
	/* --unwind cfi: the same stack ends at the frame with no CFI. */
	env.mode = MT_UNWIND_CFI;
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_TRUNCATED);
	assert_int_equal(n, 2);
	assert_int_equal(mt_dw_last_reason(), MT_TRUNC_NO_CFI);
	free(c);
}

static void ids_differ(void **state)
{
	uint64_t a[2] = { 1, 2 }, b[2] = { 2, 1 };

	(void)state;
	assert_true(mt_dw_stack_id(a, 2) != mt_dw_stack_id(b, 2));
	assert_true(mt_dw_stack_id(a, 2) != 0);
	assert_true(mt_dw_stack_id(a, 1) != mt_dw_stack_id(a, 2));
}

/* Deep stacks (segments of MT_STACK_SEG frames): a frame changed
 * anywhere, at the leaf or at the outermost end, changes the id, and so
 * does one frame more. */
static void deep_ids_differ(void **state)
{
	static uint64_t a[MT_MAX_STACK_DEPTH], b[MT_MAX_STACK_DEPTH];
	const uint32_t n = 500;
	uint64_t id;

	(void)state;
	for (uint32_t i = 0; i < MT_MAX_STACK_DEPTH; i++)
		a[i] = b[i] = 0x400000 + 16 * i;
	id = mt_dw_stack_id(a, n);
	assert_true(id == mt_dw_stack_id(b, n));
	b[0]++;
	assert_true(id != mt_dw_stack_id(b, n));
	b[0]--;
	b[n - 1]++;
	assert_true(id != mt_dw_stack_id(b, n));
	b[n - 1]--;
	b[n / 2]++;
	assert_true(id != mt_dw_stack_id(b, n));
	assert_true(id != mt_dw_stack_id(a, n + 1));
	assert_true(mt_dw_stack_id(a, MT_STACK_SEG) !=
		    mt_dw_stack_id(a, MT_STACK_SEG + 1));
}

/* The frames walked before the copy come after its stack bytes: a walk
 * goes on from them. */
static void frames_before(void **state)
{
	struct mt_dw_env env;
	struct mt_defer_copy *c = copy_of(BASE + 0x950);
	uint64_t ips[MT_MAX_STACK_DEPTH], used = 0, before[2] = { 7, 9 };
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_CFI, 0);
	c->len = 64;
	c->n = 2;
	c->steps = 2;
	memcpy(MT_DEFER_FRAMES(c), before, sizeof(before));
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_DONE);
	assert_int_equal(n, 4);
	assert_int_equal(ips[0], 7);
	assert_int_equal(ips[1], 9);
	assert_int_equal(ips[2], BASE + 0x100);
	assert_int_equal(ips[3], BASE + 0x950);
	free(c);
}

/* A copy whose frames walked before fill the stack to one short of the
 * limit: the walk keeps one more and is cut there, for its depth. */
static void depth(void **state)
{
	struct mt_dw_env env;
	struct mt_defer_copy *c = copy_of(BASE + 0x950);
	static uint64_t ips[MT_MAX_STACK_DEPTH];
	uint64_t used = 0;
	uint32_t n = 0;

	(void)state;
	tables(&env, MT_UNWIND_CFI, 0);
	c->len = 64;
	c->n = MT_MAX_STACK_DEPTH - 1;
	c->steps = c->n;
	for (uint32_t i = 0; i < c->n; i++)
		memcpy(MT_DEFER_FRAMES(c) + 8 * i, &(uint64_t){ 0x1000 + i }, 8);
	assert_int_equal(mt_dw_walk(c, &env, ips, &n, &used), MT_DW_TRUNCATED);
	assert_int_equal(n, MT_MAX_STACK_DEPTH);
	assert_int_equal(ips[MT_MAX_STACK_DEPTH - 1], BASE + 0x100);
	assert_int_equal(mt_dw_last_reason(), MT_TRUNC_DEPTH);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole),
		cmocka_unit_test(skipped_top),
		cmocka_unit_test(hole),
		cmocka_unit_test(waits),
		cmocka_unit_test(frame_pointer),
		cmocka_unit_test(ids_differ),
		cmocka_unit_test(deep_ids_differ),
		cmocka_unit_test(frames_before),
		cmocka_unit_test(depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
