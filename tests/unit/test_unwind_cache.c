// SPDX-License-Identifier: MIT
/*
 * test_unwind_cache.c: unwind tables kept on disk (src/loader/unwind/unwind_cache.c):
 * a stored table comes back row for row; a corrupt, truncated, foreign or
 * another build's file is refused (and replaced by the next store); the
 * directory stays under its bound, least recently used out first; and
 * nothing another user could have put there (a link, their file, a file
 * or directory others can write) is trusted.
 *
 * Every test works in a directory of its own under /tmp: the machine's
 * cache is never read or written.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "unwind_cache.h"

#define NOBODY 65534

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/mt-unwind-cache.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int remove_dir(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* A well-formed table of N rows (pcs SEED apart, kinds varied), its page
 * index as unwind_table.c makes it. */
static void make_table(struct mt_unwind_table *t, uint32_t n, uint32_t seed)
{
	uint64_t last;
	uint32_t i = 0;

	memset(t, 0, sizeof(*t));
	t->nrows = n;
	t->rows = calloc(n, sizeof(*t->rows));
	assert_non_null(t->rows);
	for (uint32_t k = 0; k < n; k++)
		t->rows[k] = (struct mt_unwind_row){
			.pc = 0x1000 + k * (seed + 3),
			.kind = (uint8_t)(k % 4),
			.rbp_off8 = (int8_t)(k % 3 ? -2 : 0),
			.cfa_off8 = (uint16_t)(1 + k % 7),
		};
	t->nstop = seed;
	t->uncovered = 100 + seed;
	t->first_page = t->rows[0].pc >> MT_UW_PAGE_SHIFT;
	last = t->rows[n - 1].pc >> MT_UW_PAGE_SHIFT;
	t->npages = (uint32_t)(last - t->first_page + 1);
	t->pages = calloc(t->npages + 1, sizeof(*t->pages));
	assert_non_null(t->pages);
	for (uint32_t k = 0; k <= t->npages; k++) {
		uint64_t at = (t->first_page + k) << MT_UW_PAGE_SHIFT;

		while (i + 1 < n && t->rows[i + 1].pc <= at)
			i++;
		t->pages[k] = i;
	}
}

static void assert_same_table(const struct mt_unwind_table *a,
			      const struct mt_unwind_table *b)
{
	assert_int_equal(a->nrows, b->nrows);
	assert_int_equal(a->npages, b->npages);
	assert_int_equal(a->first_page, b->first_page);
	assert_int_equal(a->nstop, b->nstop);
	assert_int_equal(a->uncovered, b->uncovered);
	assert_memory_equal(a->rows, b->rows, a->nrows * sizeof(*a->rows));
	if (a->nrows)
		assert_memory_equal(a->pages, b->pages,
				    (a->npages + 1) * sizeof(*a->pages));
}

static void key_named(struct mt_unwind_cache_key *k, const char *name)
{
	snprintf(k->name, sizeof(k->name), "%s", name);
}

/* The path of KEY's file in DIR. */
static void file_of(const struct mt_unwind_cache_key *k, char *path,
		    size_t len)
{
	char name[MT_UNWIND_CACHE_KEY + 8];

	mt_unwind_cache_file_name(k, name, sizeof(name));
	snprintf(path, len, "%s/%s", dir, name);
}

static void round_trip(void **state)
{
	struct mt_unwind_cache c;
	struct mt_unwind_cache_key k, other;
	struct mt_unwind_table t, got;

	(void)state;
	assert_int_equal(mt_unwind_cache_open(&c, dir, 0), 0);
	key_named(&k, "b-00112233-1000");
	key_named(&other, "b-44556677-1000");
	make_table(&t, 5000, 7);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -ENOENT);
	assert_int_equal(mt_unwind_cache_store(&c, &k, &t), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), 0);
	assert_same_table(&t, &got);
	mt_unwind_table_free(&got);
	assert_int_equal(mt_unwind_cache_lookup(&c, &other, &got), -ENOENT);
	assert_null(got.rows);
	mt_unwind_table_free(&t);

	/* A file without CFI: a table without rows. */
	memset(&t, 0, sizeof(t));
	assert_int_equal(mt_unwind_cache_store(&c, &other, &t), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &other, &got), 0);
	assert_int_equal(got.nrows, 0);
	mt_unwind_table_free(&got);
	mt_unwind_cache_close(&c);
}

/* A real table: libc's, made by unwind_table.c, keyed by its build id. */
static void round_trip_libc(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct mt_unwind_cache c;
	struct mt_unwind_cache_key k;
	struct mt_unwind_table t, got;
	int fd = open(libc, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(mt_unwind_cache_key_of(fd, &k), 0);
	assert_true(strncmp(k.name, "b-", 2) == 0); /* Debian's has one */
	assert_int_equal(mt_unwind_table_build(fd, NULL, 0, &t), 0);
	close(fd);
	assert_true(t.nrows > 1000);
	assert_int_equal(mt_unwind_cache_open(&c, dir, 0), 0);
	assert_int_equal(mt_unwind_cache_store(&c, &k, &t), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), 0);
	assert_same_table(&t, &got);
	mt_unwind_table_free(&got);
	mt_unwind_table_free(&t);
	mt_unwind_cache_close(&c);
}

/* A file without a build id is known by its identity: rewritten, it is
 * another file. */
static void key_without_build_id(void **state)
{
	char path[PATH_MAX];
	struct mt_unwind_cache_key a, b;
	struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/plain", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not ELF", 7), 7);
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(mt_unwind_cache_key_of(fd, &a), 0);
	assert_true(strncmp(a.name, "f-", 2) == 0);
	ts[1].tv_sec = 2000;
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(mt_unwind_cache_key_of(fd, &b), 0);
	assert_string_not_equal(a.name, b.name);
	close(fd);
}

/* Change the file of K: flip the byte at OFF (from the end if < 0). */
static void flip_byte(const struct mt_unwind_cache_key *k, long off)
{
	char path[PATH_MAX];
	unsigned char ch;
	struct stat st;
	int fd;

	file_of(k, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if (off < 0)
		off += st.st_size;
	assert_int_equal(pread(fd, &ch, 1, off), 1);
	ch ^= 0x10;
	assert_int_equal(pwrite(fd, &ch, 1, off), 1);
	close(fd);
}

static void cut_to(const struct mt_unwind_cache_key *k, long len)
{
	char path[PATH_MAX];
	struct stat st;

	file_of(k, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, len < 0 ? st.st_size + len : len), 0);
}

/* A corrupt file is refused, and the next store replaces it. */
static void expect_rebuilt(struct mt_unwind_cache *c,
			   const struct mt_unwind_cache_key *k,
			   const struct mt_unwind_table *t)
{
	struct mt_unwind_table got;

	assert_int_equal(mt_unwind_cache_lookup(c, k, &got), -EBADMSG);
	assert_null(got.rows);
	assert_int_equal(mt_unwind_cache_store(c, k, t), 0);
	assert_int_equal(mt_unwind_cache_lookup(c, k, &got), 0);
	assert_same_table(t, &got);
	mt_unwind_table_free(&got);
}

static void corrupt_files(void **state)
{
	struct mt_unwind_cache c;
	struct mt_unwind_cache_key k, other;
	struct mt_unwind_table t, got;
	char from[PATH_MAX], to[PATH_MAX];

	(void)state;
	assert_int_equal(mt_unwind_cache_open(&c, dir, 0), 0);
	key_named(&k, "b-aabbccdd-2000");
	key_named(&other, "b-eeff0011-2000");
	make_table(&t, 3000, 5);
	assert_int_equal(mt_unwind_cache_store(&c, &k, &t), 0);

	flip_byte(&k, -3); /* a row's byte */
	expect_rebuilt(&c, &k, &t);
	flip_byte(&k, 40); /* in the header */
	expect_rebuilt(&c, &k, &t);
	flip_byte(&k, 0); /* the magic */
	expect_rebuilt(&c, &k, &t);
	cut_to(&k, -1); /* truncated by one byte */
	expect_rebuilt(&c, &k, &t);
	cut_to(&k, 10); /* shorter than the header */
	expect_rebuilt(&c, &k, &t);
	cut_to(&k, 0);
	expect_rebuilt(&c, &k, &t);

	/* Another file's table under this key's name. */
	assert_int_equal(mt_unwind_cache_store(&c, &other, &t), 0);
	file_of(&other, from, sizeof(from));
	file_of(&k, to, sizeof(to));
	assert_int_equal(rename(from, to), 0);
	expect_rebuilt(&c, &k, &t);

	/* A table another build of memtrace made. */
	snprintf(c.tool.name, sizeof(c.tool.name), "b-another-build");
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EBADMSG);
	mt_unwind_cache_close(&c);
	mt_unwind_table_free(&t);
}

/* A file whose rows are out of order but whose CRC fits: refused. */
static void malformed_rows(void **state)
{
	struct mt_unwind_cache c;
	struct mt_unwind_cache_key k;
	struct mt_unwind_table t, got;
	struct mt_unwind_row r;

	(void)state;
	assert_int_equal(mt_unwind_cache_open(&c, dir, 0), 0);
	key_named(&k, "b-12345678-3000");
	make_table(&t, 100, 9);
	r = t.rows[10];
	t.rows[10] = t.rows[11];
	t.rows[11] = r;
	assert_int_equal(mt_unwind_cache_store(&c, &k, &t), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EBADMSG);
	mt_unwind_table_free(&t);
	mt_unwind_cache_close(&c);
}

static bool exists(const struct mt_unwind_cache_key *k)
{
	char path[PATH_MAX];

	file_of(k, path, sizeof(path));
	return access(path, F_OK) == 0;
}

static void set_used(const struct mt_unwind_cache_key *k, time_t when)
{
	char path[PATH_MAX];
	struct timespec ts[2] = { { when, 0 }, { when, 0 } };

	file_of(k, path, sizeof(path));
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static uint64_t dir_bytes(void)
{
	char cmd[PATH_MAX + 64];
	unsigned long long n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "find '%s' -type f -printf '%%s\\n'", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	for (unsigned long long v; fscanf(f, "%llu", &v) == 1;)
		n += v;
	pclose(f);
	return n;
}

/* The bound holds, the least recently used go first, a table that is
 * used (looked up) is kept. */
static void size_bound(void **state)
{
	struct mt_unwind_cache c;
	struct mt_unwind_cache_key k[5];
	struct mt_unwind_table t, got;
	uint64_t one;

	(void)state;
	make_table(&t, 2000, 4);
	for (int i = 0; i < 5; i++) {
		char name[32];

		snprintf(name, sizeof(name), "b-%08x-100", i);
		key_named(&k[i], name);
	}
	/* How big one table's file is, then a bound of three. */
	assert_int_equal(mt_unwind_cache_open(&c, dir, 0), 0);
	assert_int_equal(mt_unwind_cache_store(&c, &k[4], &t), 0);
	one = dir_bytes();
	assert_true(one > 2000 * sizeof(struct mt_unwind_row));
	mt_unwind_cache_close(&c);
	assert_int_equal(mt_unwind_cache_open(&c, dir, 3 * one + one / 2), 0);
	set_used(&k[4], 500);
	for (int i = 0; i < 3; i++)
		assert_int_equal(mt_unwind_cache_store(&c, &k[i], &t), 0);
	/* Four would not fit: the oldest (k[4]) went. */
	assert_false(exists(&k[4]));
	assert_true(dir_bytes() <= 3 * one + one / 2);
	/* k0 made first, but used last: k1 is now the least recently used. */
	set_used(&k[0], 1000);
	set_used(&k[1], 2000);
	set_used(&k[2], 3000);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k[0], &got), 0);
	mt_unwind_table_free(&got);
	assert_int_equal(mt_unwind_cache_store(&c, &k[3], &t), 0);
	assert_false(exists(&k[1]));
	assert_true(exists(&k[0]) && exists(&k[2]) && exists(&k[3]));
	assert_true(dir_bytes() <= 3 * one + one / 2);
	assert_int_equal(c.evicted, 2);
	mt_unwind_cache_close(&c);

	/* A table bigger than the bound is not kept at all. */
	assert_int_equal(mt_unwind_cache_open(&c, dir, one / 2), 0);
	assert_int_equal(mt_unwind_cache_store(&c, &k[1], &t), -EFBIG);
	assert_false(exists(&k[1]));
	mt_unwind_cache_close(&c);
	mt_unwind_table_free(&t);
}

static void need_root(void)
{
	if (geteuid() != 0)
		skip(); /* chown needs root (the tests run as root) */
}

/* The directory: made 0700, refused when others can write it or another
 * user owns it. */
static void directory_rights(void **state)
{
	struct mt_unwind_cache c;
	char path[PATH_MAX];
	struct stat st;
	int ret;

	(void)state;
	snprintf(path, sizeof(path), "%s/a/b/memtrace", dir);
	assert_int_equal(mt_unwind_cache_open(&c, path, 0), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(st.st_uid, geteuid());
	mt_unwind_cache_close(&c);

	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(mt_unwind_cache_open(&c, path, 0), -EPERM);
	assert_true(c.dirfd < 0);
	mt_unwind_cache_close(&c);
	assert_int_equal(chmod(path, 0770), 0);
	assert_int_equal(mt_unwind_cache_open(&c, path, 0), -EPERM);
	mt_unwind_cache_close(&c);

	need_root();
	assert_int_equal(chmod(path, 0700), 0);
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	assert_int_equal(mt_unwind_cache_open(&c, path, 0), -EPERM);
	mt_unwind_cache_close(&c);

	/* A link to a directory: not followed. */
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink(dir, path), 0);
	ret = mt_unwind_cache_open(&c, path, 0);
	assert_true(ret == -ELOOP || ret == -ENOTDIR);
	mt_unwind_cache_close(&c);
}

/* Which directory: root's own, whatever the environment says (sudo keeps
 * the invoking user's XDG_CACHE_HOME or HOME at times). */
static void default_directory(void **state)
{
	char buf[PATH_MAX];

	(void)state;
	setenv("MEMTRACE_UNWIND_CACHE", "/some/where", 1);
	assert_int_equal(mt_unwind_cache_default_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/some/where");
	unsetenv("MEMTRACE_UNWIND_CACHE");
	setenv("XDG_CACHE_HOME", "/home/someone/.cache", 1);
	setenv("HOME", "/home/someone", 1);
	assert_int_equal(mt_unwind_cache_default_dir(buf, sizeof(buf)), 0);
	if (geteuid() == 0)
		assert_string_equal(buf, "/var/cache/memtrace");
	else
		assert_string_equal(buf, "/home/someone/.cache/memtrace");
	unsetenv("XDG_CACHE_HOME");
	assert_int_equal(mt_unwind_cache_default_dir(buf, sizeof(buf)), 0);
	if (geteuid() == 0)
		assert_string_equal(buf, "/var/cache/memtrace");
	else
		assert_string_equal(buf, "/home/someone/.cache/memtrace");
}

/* Files another user could have put there. */
static void foreign_files(void **state)
{
	struct mt_unwind_cache c;
	struct mt_unwind_cache_key k;
	struct mt_unwind_table t, got;
	char path[PATH_MAX], elsewhere[PATH_MAX], cmd[2 * PATH_MAX + 16];
	struct stat st;

	(void)state;
	assert_int_equal(mt_unwind_cache_open(&c, dir, 0), 0);
	key_named(&k, "b-deadbeef-4000");
	make_table(&t, 500, 2);
	assert_int_equal(mt_unwind_cache_store(&c, &k, &t), 0);
	file_of(&k, path, sizeof(path));

	/* Writable by others. */
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EPERM);
	assert_int_equal(chmod(path, 0620), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EPERM);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), 0);
	mt_unwind_table_free(&got);

	need_root();
	/* Another user's file. */
	assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EPERM);
	assert_null(got.rows);

	/* A link (another user's) to a good table: never followed. */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere.uwt", dir);
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(rename(path, elsewhere), 0);
	assert_int_equal(symlink(elsewhere, path), 0);
	assert_int_equal(lchown(path, NOBODY, NOBODY), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EPERM);
	assert_null(got.rows);
	/* Nor when it is this user's own link. */
	assert_int_equal(lchown(path, 0, 0), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), -EPERM);
	/* The table made again replaces the link, not what it points to. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.orig'", elsewhere, elsewhere);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mt_unwind_cache_store(&c, &k, &t), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s.orig'", elsewhere,
		 elsewhere);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mt_unwind_cache_lookup(&c, &k, &got), 0);
	assert_same_table(&t, &got);
	mt_unwind_table_free(&got);
	mt_unwind_table_free(&t);
	mt_unwind_cache_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(round_trip, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(round_trip_libc, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(key_without_build_id, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(corrupt_files, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(malformed_rows, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(size_bound, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(directory_rights, make_dir, remove_dir),
		cmocka_unit_test(default_directory),
		cmocka_unit_test_setup_teardown(foreign_files, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
