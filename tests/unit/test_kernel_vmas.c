// SPDX-License-Identifier: MIT
/*
 * The mappings the kernel told of (kernel_vmas.c): kept per process, and
 * forgotten when the process is harvested (mt_kvmas_forget), so that a
 * long system-wide run does not keep those of every process that came and
 * went; the others stay found through the forgetting and the compaction
 * it makes now and then.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kernel_vmas.h"

#define NPROCS 300

static struct mt_file_key libc_key;

/* A record of one mapping of libc.so.6 by PID at START (FIRST: a new dump). */
static void tell(uint32_t pid, uint64_t start, bool first)
{
	static const char path[] = "libc.so.6\0x86_64-linux-gnu\0lib\0usr";
	struct mt_vma_record r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.flags = first ? MT_VMA_FIRST : 0;
	r.start = start;
	r.end = start + 0x1000;
	r.file = libc_key;
	r.path_len = sizeof(path);
	memcpy(r.path, path, sizeof(path));
	mt_kvmas_add(&r, sizeof(r));
}

static void test_forget(void **state)
{
	struct stat st;
	size_t n;
	const struct mt_kvma *v;

	(void)state;
	assert_int_equal(stat("/usr/lib/x86_64-linux-gnu/libc.so.6", &st), 0);
	libc_key = (struct mt_file_key){
		((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev),
		(uint64_t)st.st_ino };
	for (uint32_t pid = 1; pid <= NPROCS; pid++) {
		tell(pid, 0x10000 * pid, true);
		tell(pid, 0x10000 * pid + 0x2000, false);
	}
	assert_int_equal(mt_kvmas_nprocs(), NPROCS);
	/* All but every tenth exit and are harvested. */
	for (uint32_t pid = 1; pid <= NPROCS; pid++)
		if (pid % 10)
			mt_kvmas_forget(pid);
	assert_int_equal(mt_kvmas_nprocs(), NPROCS / 10);
	for (uint32_t pid = 1; pid <= NPROCS; pid++) {
		v = mt_kvmas_of(pid, &n);
		if (pid % 10) {
			assert_null(v);
			continue;
		}
		assert_non_null(v);
		assert_int_equal(n, 2);
		assert_int_equal(v[0].start, 0x10000 * pid);
		assert_int_equal(v[1].start, 0x10000 * pid + 0x2000);
	}
	/* Forgetting one unknown, or twice, changes nothing. */
	mt_kvmas_forget(NPROCS + 1);
	mt_kvmas_forget(1);
	assert_int_equal(mt_kvmas_nprocs(), NPROCS / 10);
	/* A pid used again is told of again, from scratch. */
	tell(7, 0x777000, true);
	v = mt_kvmas_of(7, &n);
	assert_non_null(v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].start, 0x777000);
	assert_int_equal(mt_kvmas_nprocs(), NPROCS / 10 + 1);
	/* The file stays, for the tables asked of it. */
	{
		const char *name = NULL;
		int fd = mt_kvmas_open(&libc_key, &name);

		assert_true(fd >= 0);
		assert_string_equal(name, "/usr/lib/x86_64-linux-gnu/libc.so.6");
		close(fd);
	}
	mt_kvmas_free();
	assert_int_equal(mt_kvmas_nprocs(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
