// SPDX-License-Identifier: MIT
/*
 * test_forwarders.c: src/loader/attach/forwarders.c on Debian's own libraries:
 * libstdc++'s operator new and delete only pass the call on to malloc
 * (aligned_alloc) and free, or to one another; jemalloc's operator new
 * allocates by itself.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "forwarders.h"

static int open_lib(const char *name)
{
	static const char *dirs[] = { "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu" };
	char path[256];
	int fd = -1;

	for (size_t i = 0; i < 2 && fd < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		fail_msg("%s not found (scripts/install-deps.sh installs it)", name);
	return fd;
}

/* glibc's family probed, unprefixed: malloc, free, aligned_alloc, ... */
static bool glibc_probed(const char *name, bool via_plt, void *ctx)
{
	static const char *fam[] = { "malloc", "free", "calloc", "realloc",
				     "aligned_alloc", "posix_memalign", "memalign" };

	(void)ctx;
	if (!via_plt)
		return false;
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		if (strcmp(name, fam[i]) == 0)
			return true;
	return false;
}

/* A prefixed allocator (je_malloc, ...): libstdc++'s malloc is not it. */
static bool prefixed_probed(const char *name, bool via_plt, void *ctx)
{
	(void)via_plt;
	(void)ctx;
	return strncmp(name, "je_", 3) == 0;
}

/* jemalloc probed: its own functions too. */
static bool jemalloc_probed(const char *name, bool via_plt, void *ctx)
{
	(void)via_plt;
	return glibc_probed(name, true, ctx);
}

static void libstdcxx_over_glibc(void **state)
{
	static const char *ops[] = { "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t",
				     "_ZnwmSt11align_val_t", "_ZdlPv", "_ZdlPvm",
				     "_ZdaPv", "_ZdlPvSt11align_val_t" };
	struct mt_cxx_funcs f;
	int fd = open_lib("libstdc++.so.6");

	(void)state;
	assert_int_equal(mt_cxx_funcs_read(fd, glibc_probed, NULL, &f), 0);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct mt_cxx_func *op = mt_cxx_funcs_find(&f, ops[i]);

		if (!op)
			fail_msg("libstdc++ defines no %s", ops[i]);
		if (!op->forwards)
			fail_msg("%s does not forward", ops[i]);
		assert_true(op->end > op->offset && op->end - op->offset < 512);
	}
	mt_cxx_funcs_free(&f);
	/* With the allocator's malloc named je_malloc, nothing forwards:
	 * libstdc++'s malloc is glibc's, not probed. */
	assert_int_equal(mt_cxx_funcs_read(fd, prefixed_probed, NULL, &f), 0);
	assert_true(f.n >= 8);
	for (size_t i = 0; i < f.n; i++)
		if (f.v[i].forwards)
			fail_msg("%s forwards to an unprobed malloc", f.v[i].name);
	mt_cxx_funcs_free(&f);
	close(fd);
}

static void jemalloc_new_allocates(void **state)
{
	struct mt_cxx_funcs f;
	const struct mt_cxx_func *op;
	int fd = open_lib("libjemalloc.so.2");

	(void)state;
	assert_int_equal(mt_cxx_funcs_read(fd, jemalloc_probed, NULL, &f), 0);
	op = mt_cxx_funcs_find(&f, "_Znwm");
	assert_non_null(op);
	assert_false(op->forwards);
	mt_cxx_funcs_free(&f);
	close(fd);
}

static void no_operators(void **state)
{
	struct mt_cxx_funcs f;
	int fd = open_lib("libz.so.1");

	(void)state;
	assert_int_equal(mt_cxx_funcs_read(fd, glibc_probed, NULL, &f), 0);
	assert_int_equal(f.n, 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libstdcxx_over_glibc),
		cmocka_unit_test(jemalloc_new_allocates),
		cmocka_unit_test(no_operators),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
