/* SPDX-License-Identifier: MIT */
/*
 * test_proc_allocators.c: the allocator line of a family
 * (src/loader/attach/proc_allocators.c).  One allocator: its name alone, whatever
 * the number of processes.  Several: each name with the processes that
 * used it, the main process's first, the others in the order named; a
 * later exec of a pid replaces its entry; past four pids a count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "proc_allocators.h"

#define GLIBC "glibc /usr/lib/x86_64-linux-gnu/libc.so.6"
#define JE "jemalloc /usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
#define TC "tcmalloc /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"

static const char *comm(void *arg, uint32_t pid)
{
	static char buf[32];

	(void)arg;
	snprintf(buf, sizeof(buf), "c%u", pid);
	return buf;
}

static void one_allocator(void **state)
{
	struct mt_proc_allocs a = { 0 };
	char line[512];

	(void)state;
	assert_int_equal(mt_proc_allocs_line(&a, 1, comm, NULL, line, sizeof(line)), 0);
	assert_string_equal(line, "");
	assert_int_equal(mt_proc_allocs_set(&a, 1, 0, 1, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_set(&a, 2, 0, 1, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_line(&a, 1, comm, NULL, line, sizeof(line)), 1);
	assert_string_equal(line, GLIBC);
	mt_proc_allocs_free(&a);
}

/* One file by two paths is one allocator; two files by one path, two. */
static void by_file_not_path(void **state)
{
	struct mt_proc_allocs a = { 0 };
	char line[512];

	(void)state;
	assert_int_equal(mt_proc_allocs_set(&a, 1, 0, 1, "glibc /lib/x86_64-linux-gnu/libc.so.6"), 0);
	assert_int_equal(mt_proc_allocs_set(&a, 2, 0, 1, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_line(&a, 1, comm, NULL, line, sizeof(line)), 1);
	assert_string_equal(line, "glibc /lib/x86_64-linux-gnu/libc.so.6");
	/* A chroot's own copy under the same path: another file. */
	assert_int_equal(mt_proc_allocs_set(&a, 3, 0, 4, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_line(&a, 1, comm, NULL, line, sizeof(line)), 2);
	assert_string_equal(line, "glibc /lib/x86_64-linux-gnu/libc.so.6 (pid 1 c1, pid 2 c2); "
			    GLIBC " (pid 3 c3)");
	mt_proc_allocs_free(&a);
}

static void several(void **state)
{
	struct mt_proc_allocs a = { 0 };
	char line[512];

	(void)state;
	assert_int_equal(mt_proc_allocs_set(&a, 7, 0, 2, JE), 0);
	assert_int_equal(mt_proc_allocs_set(&a, 5, 0, 1, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_set(&a, 9, 0, 1, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_set(&a, 8, 0, 3, TC), 0);
	/* The main process (5) first, then jemalloc, then tcmalloc. */
	assert_int_equal(mt_proc_allocs_line(&a, 5, comm, NULL, line, sizeof(line)), 3);
	assert_string_equal(line, GLIBC " (pid 5 c5, pid 9 c9); " JE " (pid 7 c7); "
			    TC " (pid 8 c8)");
	/* pid 7 exec'd again, now on glibc: jemalloc is gone from the line. */
	assert_int_equal(mt_proc_allocs_set(&a, 7, 0, 1, GLIBC), 0);
	assert_string_equal(mt_proc_allocs_of(&a, 7), GLIBC);
	assert_null(mt_proc_allocs_of(&a, 99));
	assert_int_equal(mt_proc_allocs_line(&a, 8, comm, NULL, line, sizeof(line)), 2);
	assert_string_equal(line, TC " (pid 8 c8); " GLIBC " (pid 7 c7, pid 5 c5, pid 9 c9)");
	mt_proc_allocs_free(&a);
}

static void many_pids_and_short_buffer(void **state)
{
	struct mt_proc_allocs a = { 0 };
	char line[512], tiny[20];

	(void)state;
	assert_int_equal(mt_proc_allocs_set(&a, 1, 0, 2, JE), 0);
	for (uint32_t pid = 10; pid < 16; pid++)
		assert_int_equal(mt_proc_allocs_set(&a, pid, 0, 1, GLIBC), 0);
	assert_int_equal(mt_proc_allocs_line(&a, 1, comm, NULL, line, sizeof(line)), 2);
	assert_string_equal(line, JE " (pid 1 c1); " GLIBC
			    " (pid 10 c10, pid 11 c11, pid 12 c12, pid 13 c13 and 2 more)");
	/* Cut short, never past the buffer, always terminated. */
	assert_int_equal(mt_proc_allocs_line(&a, 1, comm, NULL, tiny, sizeof(tiny)), 2);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_memory_equal(tiny, JE, sizeof(tiny) - 1);
	mt_proc_allocs_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_allocator),
		cmocka_unit_test(by_file_not_path),
		cmocka_unit_test(several),
		cmocka_unit_test(many_pids_and_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
