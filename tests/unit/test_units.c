/* SPDX-License-Identifier: MIT */
/* test_units.c: byte formatting and value/unit names (src/report/model/units.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include "units.h"

static const char *fmt(int64_t v, enum mt_unit u)
{
	static char buf[64];

	return mt_format_bytes(buf, sizeof(buf), v, u);
}

static void test_auto_below_1k_is_bytes(void **state)
{
	(void)state;
	assert_string_equal(fmt(0, MT_UNIT_AUTO), "0B");
	assert_string_equal(fmt(1000, MT_UNIT_AUTO), "1000B");
	assert_string_equal(fmt(1023, MT_UNIT_AUTO), "1023B");
	assert_string_equal(fmt(-1023, MT_UNIT_AUTO), "-1023B");
}

static void test_auto_picks_largest_unit(void **state)
{
	(void)state;
	assert_string_equal(fmt(1024, MT_UNIT_AUTO), "1.00KiB");
	assert_string_equal(fmt(1536, MT_UNIT_AUTO), "1.50KiB");
	assert_string_equal(fmt(3 << 20, MT_UNIT_AUTO), "3.00MiB");
	assert_string_equal(fmt((INT64_C(5) << 30) / 4, MT_UNIT_AUTO),
			    "1.25GiB");
	/* Terabytes stay in GiB, the largest unit. */
	assert_string_equal(fmt(INT64_C(2048) << 30, MT_UNIT_AUTO),
			    "2048.00GiB");
}

static void test_negative_keeps_sign(void **state)
{
	(void)state;
	assert_string_equal(fmt(-1536, MT_UNIT_AUTO), "-1.50KiB");
	assert_string_equal(fmt(-(3 << 20), MT_UNIT_MIB), "-3.00MiB");
	assert_string_equal(fmt(-5, MT_UNIT_B), "-5B");
	/* The most negative value does not overflow. */
	assert_string_equal(fmt(INT64_MIN, MT_UNIT_B), "-9223372036854775808B");
	assert_string_equal(fmt(INT64_MIN, MT_UNIT_AUTO),
			    "-8589934592.00GiB");
}

static void test_fixed_units(void **state)
{
	(void)state;
	assert_string_equal(fmt(1536, MT_UNIT_B), "1536B");
	assert_string_equal(fmt(1536, MT_UNIT_KIB), "1.50KiB");
	assert_string_equal(fmt(10, MT_UNIT_KIB), "0.01KiB");
	assert_string_equal(fmt(1536, MT_UNIT_MIB), "0.00MiB");
	assert_string_equal(fmt(3 << 20, MT_UNIT_KIB), "3072.00KiB");
	assert_string_equal(fmt(INT64_C(3) << 30, MT_UNIT_GIB), "3.00GiB");
}

static void test_no_spaces_and_truncation(void **state)
{
	char small[4];
	const int64_t values[] = { 0, 1, 1023, 1024, 123456789, -987654321 };

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		for (int u = MT_UNIT_AUTO; u <= MT_UNIT_GIB; u++)
			assert_null(strchr(fmt(values[i], (enum mt_unit)u), ' '));
	}
	assert_ptr_equal(mt_format_bytes(small, sizeof(small), 1536,
					 MT_UNIT_KIB),
			 small);
	assert_string_equal(small, "1.5");
}

static void test_unit_parse(void **state)
{
	enum mt_unit u = MT_UNIT_B;

	(void)state;
	assert_int_equal(mt_unit_parse("auto", &u), 0);
	assert_int_equal(u, MT_UNIT_AUTO);
	assert_int_equal(mt_unit_parse("B", &u), 0);
	assert_int_equal(u, MT_UNIT_B);
	assert_int_equal(mt_unit_parse("KiB", &u), 0);
	assert_int_equal(u, MT_UNIT_KIB);
	assert_int_equal(mt_unit_parse("MiB", &u), 0);
	assert_int_equal(u, MT_UNIT_MIB);
	assert_int_equal(mt_unit_parse("GiB", &u), 0);
	assert_int_equal(u, MT_UNIT_GIB);
	/* Rejected values leave *u alone. */
	assert_int_equal(mt_unit_parse("kib", &u), -1);
	assert_int_equal(mt_unit_parse("KB", &u), -1);
	assert_int_equal(mt_unit_parse("", &u), -1);
	assert_int_equal(mt_unit_parse(NULL, &u), -1);
	assert_int_equal(u, MT_UNIT_GIB);
}

static void test_value_names(void **state)
{
	static const char *const names[MT_NVALUES] = {
		"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"
	};
	enum mt_value v;

	(void)state;
	for (int i = 0; i < MT_NVALUES; i++) {
		assert_string_equal(mt_value_name((enum mt_value)i), names[i]);
		v = MT_NVALUES;
		assert_int_equal(mt_value_parse(names[i], &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(mt_value_parse("inuse", &v), -1);
	assert_int_equal(mt_value_parse("INUSE_SPACE", &v), -1);
	assert_int_equal(mt_value_parse(NULL, &v), -1);
	assert_string_equal(mt_value_name(MT_NVALUES), "?");
}

static void test_value_is_bytes(void **state)
{
	(void)state;
	assert_false(mt_value_is_bytes(MT_ALLOC_OBJECTS));
	assert_true(mt_value_is_bytes(MT_ALLOC_SPACE));
	assert_false(mt_value_is_bytes(MT_INUSE_OBJECTS));
	assert_true(mt_value_is_bytes(MT_INUSE_SPACE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_below_1k_is_bytes),
		cmocka_unit_test(test_auto_picks_largest_unit),
		cmocka_unit_test(test_negative_keeps_sign),
		cmocka_unit_test(test_fixed_units),
		cmocka_unit_test(test_no_spaces_and_truncation),
		cmocka_unit_test(test_unit_parse),
		cmocka_unit_test(test_value_names),
		cmocka_unit_test(test_value_is_bytes),
	};

	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
