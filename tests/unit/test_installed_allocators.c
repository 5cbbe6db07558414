/* SPDX-License-Identifier: MIT */
/*
 * test_installed_allocators.c: the allocator libraries installed where the
 * dynamic loader looks (src/loader/attach/installed_allocators.c).  A
 * configuration naming a directory directly and one through an "include"
 * glob; in them, an allocator under two names (one file), a libstdc++, a
 * file named like an allocator that is not an ELF shared object, a 32-bit
 * one, and a library that is no allocator: the two real ones, once each,
 * by their real paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "installed_allocators.h"

static char root[64];

static void put(const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* An ELF header alone: enough for the check of class, machine and type. */
static void put_elf(const char *rel, int cls, int machine)
{
	Elf64_Ehdr eh = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = (unsigned char)cls;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_machine = (Elf64_Half)machine;
	put(rel, &eh, sizeof(eh));
}

static void sub(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void link_to(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	char conf[PATH_MAX * 2];
	int n;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/mt-installed-XXXXXX");
	assert_non_null(mkdtemp(root));
	sub("a");
	sub("b");
	sub("conf.d");
	put_elf("a/libjemalloc.so.2", ELFCLASS64, EM_X86_64);
	link_to("libjemalloc.so.2", "a/libjemalloc.so");
	put_elf("b/libstdc++.so.6.0.30", ELFCLASS64, EM_X86_64);
	link_to("libstdc++.so.6.0.30", "b/libstdc++.so.6");
	put("b/libtcmalloc.so.4", "not an ELF file", 15);
	put_elf("b/libtcmalloc_minimal.so.4", ELFCLASS32, EM_386);
	put_elf("b/libz.so.1", ELFCLASS64, EM_X86_64);
	put_elf("b/libjemalloc.a", ELFCLASS64, EM_X86_64);
	n = snprintf(conf, sizeof(conf), "# comment\n  %s/a  \ninclude %s/conf.d/*.conf\n", root, root);
	put("ld.so.conf", conf, (size_t)n);
	n = snprintf(conf, sizeof(conf), "%s/b\n%s/missing\n", root, root);
	put("conf.d/x.conf", conf, (size_t)n);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void finds_the_real_ones_once(void **state)
{
	struct mt_objects objs;
	char conf[PATH_MAX], want_je[PATH_MAX], want_cxx[PATH_MAX];
	struct stat st;

	(void)state;
	snprintf(conf, sizeof(conf), "%s/ld.so.conf", root);
	assert_int_equal(mt_installed_allocators(conf, &objs), 0);
	assert_int_equal(objs.n, 2);
	snprintf(want_je, sizeof(want_je), "%s/a/libjemalloc.so.2", root);
	snprintf(want_cxx, sizeof(want_cxx), "%s/b/libstdc++.so.6.0.30", root);
	assert_string_equal(objs.v[0].path, want_je);
	assert_string_equal(objs.v[0].shown, want_je);
	assert_string_equal(objs.v[1].path, want_cxx);
	assert_int_equal(stat(want_je, &st), 0);
	assert_true(objs.v[0].dev == st.st_dev && objs.v[0].ino == st.st_ino);
	mt_objects_free(&objs);
}

static void missing_conf_is_empty(void **state)
{
	struct mt_objects objs;
	char conf[PATH_MAX];

	(void)state;
	snprintf(conf, sizeof(conf), "%s/none.conf", root);
	assert_int_equal(mt_installed_allocators(conf, &objs), 0);
	assert_int_equal(objs.n, 0);
	mt_objects_free(&objs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_the_real_ones_once),
		cmocka_unit_test(missing_conf_is_empty),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
