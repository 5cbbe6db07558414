/* SPDX-License-Identifier: MIT */
/*
 * test_private_text.c: memtrace's own allocator code moved to an
 * anonymous copy (src/loader/registry/private_text.c).  The mapping that
 * holds malloc becomes anonymous, at the same address, with the file's
 * bytes; malloc and free still work; a second call finds nothing to do;
 * an address in no executable file mapping is left alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private_text.h"

/* The inode of the mapping holding ADDR, and whether one does. */
static int inode_of(const void *addr, unsigned long *ino)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		uintptr_t s, e;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %lu", &s, &e, ino) == 3 &&
		    (uintptr_t)addr >= s && (uintptr_t)addr < e)
			found = 1;
	}
	fclose(f);
	return found;
}

static void malloc_code_copied(void **state)
{
	void *fn = dlsym(RTLD_DEFAULT, "malloc");
	unsigned char before[32];
	unsigned long ino = 0;
	void *p;

	(void)state;
	assert_non_null(fn);
	assert_true(inode_of(fn, &ino));
	assert_int_not_equal(ino, 0); /* the file's mapping */
	memcpy(before, fn, sizeof(before));
	assert_int_equal(mt_private_text(fn), 1);
	assert_true(inode_of(fn, &ino));
	assert_int_equal(ino, 0); /* anonymous now */
	assert_memory_equal(before, fn, sizeof(before));
	p = malloc(1000);
	assert_non_null(p);
	memset(p, 1, 1000);
	free(p);
	assert_int_equal(mt_private_text(fn), 0); /* a copy already */
}

static int not_code;

static void data_left_alone(void **state)
{
	(void)state;
	assert_int_equal(mt_private_text(&not_code), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(malloc_code_copied),
		cmocka_unit_test(data_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
