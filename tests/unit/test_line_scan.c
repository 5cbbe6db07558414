/* SPDX-License-Identifier: MIT */
/*
 * test_line_scan.c: cmocka tests of src/report/readers/line_scan.c, the text
 * profiles' lines and numbers: lines found where they lie ('\r\n', no
 * final newline), numbers at their limits and one past them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include "line_scan.h"

static struct mt_line of(const char *s)
{
	return (struct mt_line){ s, s + strlen(s) };
}

static void test_lines(void **state)
{
	static const char text[] = "one\r\n\ntwo words\nlast";
	struct mt_line l;
	size_t pos = 0;

	(void)state;
	assert_true(mt_line_next(text, sizeof(text) - 1, &pos, &l));
	assert_int_equal(l.end - l.p, 3);  /* "one", '\r' left out */
	assert_true(mt_line_next(text, sizeof(text) - 1, &pos, &l));
	assert_true(mt_line_blank(&l));
	assert_true(mt_line_next(text, sizeof(text) - 1, &pos, &l));
	assert_true(mt_line_starts(&l, "two"));
	assert_true(mt_line_lit(&l, "words"));
	assert_true(mt_line_blank(&l));
	assert_true(mt_line_next(text, sizeof(text) - 1, &pos, &l));
	assert_int_equal(l.end - l.p, 4);  /* "last", no newline */
	assert_false(mt_line_next(text, sizeof(text) - 1, &pos, &l));
	pos = 0;
	assert_false(mt_line_next("", 0, &pos, &l));
}

static void test_numbers(void **state)
{
	struct mt_line l;
	uint64_t u;
	int64_t i;

	(void)state;
	l = of(" 18446744073709551615 x");
	assert_true(mt_line_u64(&l, UINT64_MAX, &u));
	assert_true(u == UINT64_MAX);
	assert_true(mt_line_lit(&l, "x"));
	l = of("18446744073709551616");
	assert_false(mt_line_u64(&l, UINT64_MAX, &u));
	assert_ptr_equal(l.p, l.end - 20);  /* nothing consumed */
	l = of("9223372036854775808");
	assert_false(mt_line_u64(&l, INT64_MAX, &u));
	l = of("-1");
	assert_false(mt_line_u64(&l, UINT64_MAX, &u));
	l = of("");
	assert_false(mt_line_u64(&l, UINT64_MAX, &u));

	l = of("-9223372036854775808");
	assert_true(mt_line_i64(&l, &i));
	assert_true(i == INT64_MIN);
	l = of("9223372036854775807");
	assert_true(mt_line_i64(&l, &i));
	assert_true(i == INT64_MAX);
	l = of("9223372036854775808");
	assert_false(mt_line_i64(&l, &i));
	l = of("-9223372036854775809");
	assert_false(mt_line_i64(&l, &i));
	l = of("- 1");
	assert_false(mt_line_i64(&l, &i));

	l = of("0xffffffffffffffff");
	assert_true(mt_line_hex(&l, false, &u));
	assert_true(u == UINT64_MAX);
	l = of("0x000000000000000000001f");
	assert_true(mt_line_hex(&l, false, &u));
	assert_int_equal(u, 0x1f);
	l = of("0x10000000000000000");
	assert_false(mt_line_hex(&l, false, &u));
	l = of("0x-1");
	assert_false(mt_line_hex(&l, false, &u));
	l = of("1f");
	assert_false(mt_line_hex(&l, false, &u));
	assert_true(mt_line_hex(&l, true, &u));
	assert_int_equal(u, 0x1f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
