/* SPDX-License-Identifier: MIT */
/* test_blocks.c: outstanding blocks linked to their samples (src/report/model/blocks.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include "blocks.h"

/*
 * One process, one stack id, two categories: a heap block and an
 * anonymous mapping made from the same call site are different samples,
 * so each block must point at the sample of its own category.
 */
static void test_category_tells_samples_apart(void **state)
{
	struct mt_raw_stack stacks[] = {
		{ .pid = 7, .stack_id = 42, .category = MT_CAT_MMAP },
		{ .pid = 7, .stack_id = 42, .category = MT_CAT_HEAP },
		{ .pid = 8, .stack_id = 42, .category = MT_CAT_HEAP },
	};
	struct mt_raw_block blocks[] = {
		{ .pid = 7, .stack_id = 42, .category = MT_CAT_HEAP, .addr = 0x1000 },
		{ .pid = 7, .stack_id = 42, .category = MT_CAT_MMAP, .addr = 0x2000 },
		{ .pid = 8, .stack_id = 42, .category = MT_CAT_HEAP, .addr = 0x3000 },
		{ .pid = 8, .stack_id = 42, .category = MT_CAT_MMAP, .addr = 0x4000 },
	};
	struct mt_raw_profile raw = { .stacks = stacks, .nstacks = 3,
				      .blocks = blocks, .nblocks = 4 };
	struct mt_profile p = { .nsamples = 3 };

	(void)state;
	assert_int_equal(mt_profile_add_blocks(&p, &raw), 0);
	assert_int_equal(p.nblocks, 4);
	assert_int_equal(p.blocks[0].addr, 0x1000);
	assert_int_equal(p.blocks[0].sample, 1);
	assert_int_equal(p.blocks[1].sample, 0);
	assert_int_equal(p.blocks[2].sample, 2);
	/* No mmap sample for pid 8: the block has none. */
	assert_int_equal(p.blocks[3].sample, SIZE_MAX);
	free(p.blocks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_category_tells_samples_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
