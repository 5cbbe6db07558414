/* SPDX-License-Identifier: MIT */
/*
 * test_bpf_log.c: libbpf's warnings are shown without -v, its debug output
 * only with -v, and the warnings of an attempt memtrace handles itself are
 * dropped (src/loader/bpf/bpf_log.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf_log.h"

static FILE *out;

static void say(enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mt_bpf_log_print(level, fmt, ap);
	va_end(ap);
}

/* What was printed since the last call. */
static const char *printed(void)
{
	static char buf[1024];
	size_t n;

	fflush(out);
	rewind(out);
	n = fread(buf, 1, sizeof(buf) - 1, out);
	buf[n] = '\0';
	rewind(out);
	if (ftruncate(fileno(out), 0))
		return NULL;
	return buf;
}

static int setup(void **state)
{
	(void)state;
	out = tmpfile();
	return out ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	fclose(out);
	return 0;
}

static void test_quiet_shows_warnings_only(void **state)
{
	(void)state;
	mt_bpf_log_init(out, false);
	say(LIBBPF_WARN, "libbpf: warning %d\n", 1);
	say(LIBBPF_INFO, "libbpf: info %d\n", 2);
	say(LIBBPF_DEBUG, "libbpf: debug %d\n", 3);
	assert_string_equal(printed(), "libbpf: warning 1\nlibbpf: info 2\n");
}

static void test_verbose_shows_debug(void **state)
{
	(void)state;
	mt_bpf_log_init(out, true);
	say(LIBBPF_WARN, "w\n");
	say(LIBBPF_DEBUG, "d\n");
	assert_string_equal(printed(), "w\nd\n");
}

static void test_held_warnings(void **state)
{
	(void)state;
	mt_bpf_log_init(out, false);
	mt_bpf_log_hold();
	say(LIBBPF_WARN, "from a failed attempt\n");
	assert_string_equal(printed(), "");
	mt_bpf_log_release(false);
	assert_string_equal(printed(), "");
	mt_bpf_log_hold();
	say(LIBBPF_WARN, "from the attempt that worked\n");
	say(LIBBPF_DEBUG, "debug\n");
	mt_bpf_log_release(true);
	say(LIBBPF_WARN, "later\n");
	assert_string_equal(printed(), "from the attempt that worked\nlater\n");
	mt_bpf_log_release(true); /* not holding: nothing */
	assert_string_equal(printed(), "");
}

static void test_verbose_holds_nothing(void **state)
{
	(void)state;
	mt_bpf_log_init(out, true);
	mt_bpf_log_hold();
	say(LIBBPF_WARN, "at once\n");
	assert_string_equal(printed(), "at once\n");
	mt_bpf_log_release(false);
	assert_string_equal(printed(), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_quiet_shows_warnings_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbose_shows_debug, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_warnings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbose_holds_nothing, setup, teardown),
	};

	return cmocka_run_group_tests_name("bpf_log", tests, NULL, NULL);
}
