// SPDX-License-Identifier: MIT
/*
 * test_size_class.c: the size class of bpf/size_class.h (the code the BPF
 * program runs) at every boundary, against the bit length the compiler
 * computes, and the layout of the histogram's entries (bpf/memleak.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "size_class.h"

/* What the class must be: the bit length of SIZE, at most the last. */
static uint32_t expected(uint64_t size)
{
	uint32_t bits = size ? 64 - (uint32_t)__builtin_clzll(size) : 0;

	return bits < MT_SIZE_CLASSES - 1 ? bits : MT_SIZE_CLASSES - 1;
}

static void test_boundaries(void **state)
{
	const uint64_t last = 1ULL << MT_SIZE_LAST_SHIFT;

	(void)state;
	assert_int_equal(MT_SIZE_LAST_SHIFT, 30);  /* 1 GiB, as documented */
	assert_int_equal(mt_size_class(0), 0);
	assert_int_equal(mt_size_class(1), 1);
	assert_int_equal(mt_size_class(2), 2);
	assert_int_equal(mt_size_class(3), 2);
	assert_int_equal(mt_size_class(4), 3);
	assert_int_equal(mt_size_class(1023), 10);
	assert_int_equal(mt_size_class(1024), 11);
	assert_int_equal(mt_size_class(last - 1), MT_SIZE_CLASSES - 2);
	assert_int_equal(mt_size_class(last), MT_SIZE_CLASSES - 1);
	assert_int_equal(mt_size_class(last + 1), MT_SIZE_CLASSES - 1);
	assert_int_equal(mt_size_class(1ULL << 32), MT_SIZE_CLASSES - 1);
	assert_int_equal(mt_size_class(1ULL << 63), MT_SIZE_CLASSES - 1);
	assert_int_equal(mt_size_class(UINT64_MAX), MT_SIZE_CLASSES - 1);
}

/* Every power of two, one less and one more, and a fixed random walk. */
static void test_against_bit_length(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int k = 0; k < 64; k++) {
		uint64_t p = 1ULL << k;

		assert_int_equal(mt_size_class(p - 1), expected(p - 1));
		assert_int_equal(mt_size_class(p), expected(p));
		assert_int_equal(mt_size_class(p + 1), expected(p + 1));
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (x & 63);  /* every magnitude */
		if (mt_size_class(v) != expected(v))
			fail_msg("class of %llu: %u, expected %u",
				 (unsigned long long)v, mt_size_class(v),
				 expected(v));
	}
}

/* A class's smallest size is in it, the size below it in the class before. */
static void test_class_min(void **state)
{
	(void)state;
	assert_int_equal(mt_size_class_min(0), 0);
	assert_int_equal(mt_size_class_min(1), 1);
	assert_int_equal(mt_size_class_min(2), 2);
	assert_int_equal(mt_size_class_min(MT_SIZE_CLASSES - 1),
			 1ULL << MT_SIZE_LAST_SHIFT);
	for (uint32_t k = 0; k < MT_SIZE_CLASSES; k++) {
		assert_int_equal(mt_size_class(mt_size_class_min(k)), k);
		if (k)
			assert_int_equal(mt_size_class(mt_size_class_min(k) - 1),
					 k - 1);
	}
}

/* One entry per (category, class), the categories one after the other. */
static void test_layout(void **state)
{
	(void)state;
	assert_int_equal(MT_SIZE_INDEX(MT_CAT_HEAP, 0), 0);
	assert_int_equal(MT_SIZE_INDEX(MT_CAT_MMAP, 0), MT_SIZE_CLASSES);
	assert_int_equal(MT_SIZE_INDEX(MT_NCATEGORIES - 1, MT_SIZE_CLASSES - 1),
			 MT_SIZE_ENTRIES - 1);
	assert_int_equal(sizeof(struct mt_size_count), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_against_bit_length),
		cmocka_unit_test(test_class_min),
		cmocka_unit_test(test_layout),
	};

	return cmocka_run_group_tests_name("size_class", tests, NULL, NULL);
}
