/* SPDX-License-Identifier: MIT */
/*
 * test_exec_caches.c: what an exec stop reuses.  The probe plans per file
 * (src/loader/attach/plan_cache.c): found again for the same file and role, not
 * for another role, nor once the file is rewritten in place.  The files
 * of each executable (src/loader/registry/libs_cache.c): the same list the second
 * time, under the name the executable is exec'd by, listed again once it
 * changed; a script is not kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libs_cache.h"
#include "plan_cache.h"

/* A new file in a new directory: its path into PATH (PATH_MAX). */
static void temp_file(char *path, const char *name, const char *text)
{
	char dir[] = "/tmp/mt-unit-caches.XXXXXX";
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, 4096, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void remove_temp(const char *path)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", path);
	unlink(path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

static void key_for(struct mt_plan_key *key, const char *path, bool alloc)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(mt_plan_key_of(key, path, st.st_dev, st.st_ino, alloc,
					 alloc, false), 0);
}

static void test_plan_found_again(void **state)
{
	struct mt_plan_cache c = { 0 };
	struct mt_plan_entry e, *none = NULL;
	const struct mt_plan_entry *hit;
	struct mt_plan_key key, other;
	char path[4096];

	(void)state;
	temp_file(path, "lib.so", "not an ELF file");
	memset(&e, 0, sizeof(e));
	key_for(&e.key, path, true);
	e.plan.n = 2;
	e.plan.offs[0] = 0x1000;
	e.plan.offs[1] = 0x2040;
	e.plan.path = path;
	e.defines_cxx = true;
	assert_int_equal(mt_plan_cache_add(&c, &e), 0);
	key_for(&key, path, true);
	hit = mt_plan_cache_find(&c, &key);
	assert_non_null(hit);
	assert_int_equal(hit->plan.n, 2);
	assert_int_equal(hit->plan.offs[1], 0x2040);
	assert_true(hit->defines_cxx);
	assert_null(hit->plan.path); /* each use brings its own */
	/* Another role of the same file: not planned yet. */
	key_for(&other, path, false);
	assert_ptr_equal(mt_plan_cache_find(&c, &other), none);
	mt_plan_cache_free(&c);
	remove_temp(path);
}

static void test_plan_rewritten_in_place(void **state)
{
	struct mt_plan_cache c = { 0 };
	struct mt_plan_entry e;
	struct mt_plan_key key;
	char path[4096];
	int fd;

	(void)state;
	temp_file(path, "lib.so", "first");
	memset(&e, 0, sizeof(e));
	key_for(&e.key, path, false);
	assert_int_equal(mt_plan_cache_add(&c, &e), 0);
	/* Same inode, new contents (cp over it, a build's output). */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "second version", 14), 14);
	assert_int_equal(close(fd), 0);
	key_for(&key, path, false);
	assert_int_equal(key.id.ino, e.key.id.ino);
	assert_null(mt_plan_cache_find(&c, &key));
	mt_plan_cache_free(&c);
	remove_temp(path);
}

static void test_plan_key_other_file(void **state)
{
	struct mt_plan_key key;
	struct stat st;
	char path[4096];

	(void)state;
	temp_file(path, "lib.so", "x");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(mt_plan_key_of(&key, path, st.st_dev, st.st_ino + 1,
					false, false, false), -ESTALE);
	remove_temp(path);
	assert_int_equal(mt_plan_key_of(&key, path, st.st_dev, st.st_ino,
					false, false, false), -ENOENT);
}

/* A copy of /bin/true in a directory of its own (PATH_MAX). */
static void copy_true(char *path)
{
	char cmd[8192];

	temp_file(path, "prog", "");
	snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static void assert_same_files(const struct mt_objects *a,
			      const struct mt_objects *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->has_exe, b->has_exe);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->v[i].dev, b->v[i].dev);
		assert_int_equal(a->v[i].ino, b->v[i].ino);
		assert_string_equal(a->v[i].path, b->v[i].path);
	}
}

static void test_libs_listed_once(void **state)
{
	struct mt_libs_cache c = { 0 };
	struct mt_objects first, again, direct;
	char path[4096], other[4200];

	(void)state;
	copy_true(path);
	assert_int_equal(mt_libs_of_exe(&c, path, &first), 0);
	assert_int_equal(c.n, 1);
	assert_true(first.has_exe);
	assert_true(first.n >= 2); /* itself and its libc at least */
	assert_int_equal(mt_libs_of_exe(&c, path, &again), 0);
	assert_int_equal(c.n, 1);
	assert_same_files(&first, &again);
	assert_int_equal(mt_objects_of_exe(path, &direct), 0);
	assert_same_files(&direct, &again);
	/* Another name of the same file: that name for the executable. */
	snprintf(other, sizeof(other), "%s.2", path);
	assert_int_equal(link(path, other), 0);
	mt_objects_free(&again);
	assert_int_equal(mt_libs_of_exe(&c, other, &again), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(again.v[0].path, other);
	assert_int_equal(again.n, first.n);
	unlink(other);
	mt_objects_free(&first);
	mt_objects_free(&again);
	mt_objects_free(&direct);
	mt_libs_cache_free(&c);
	remove_temp(path);
}

static void test_libs_changed_exe(void **state)
{
	struct mt_libs_cache c = { 0 };
	struct mt_objects objs;
	struct stat st;
	char path[4096];
	int fd;

	(void)state;
	copy_true(path);
	assert_int_equal(mt_libs_of_exe(&c, path, &objs), 0);
	mt_objects_free(&objs);
	assert_int_equal(c.n, 1);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "", 1), 1);
	assert_int_equal(close(fd), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_not_equal(c.v[0].id.size, st.st_size);
	assert_int_equal(mt_libs_of_exe(&c, path, &objs), 0);
	assert_int_equal(c.n, 1); /* listed again, in place of the old */
	assert_int_equal(c.v[0].id.size, st.st_size);
	mt_objects_free(&objs);
	mt_libs_cache_free(&c);
	remove_temp(path);
}

static void test_libs_script_not_kept(void **state)
{
	struct mt_libs_cache c = { 0 };
	struct mt_objects objs;
	char path[4096];

	(void)state;
	temp_file(path, "script", "#!/bin/sh\nexit 0\n");
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(mt_libs_of_exe(&c, path, &objs), 0);
	assert_false(objs.has_exe);
	assert_int_equal(c.n, 0);
	mt_objects_free(&objs);
	mt_libs_cache_free(&c);
	remove_temp(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_found_again),
		cmocka_unit_test(test_plan_rewritten_in_place),
		cmocka_unit_test(test_plan_key_other_file),
		cmocka_unit_test(test_libs_listed_once),
		cmocka_unit_test(test_libs_changed_exe),
		cmocka_unit_test(test_libs_script_not_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
