/* SPDX-License-Identifier: MIT */
/*
 * test_outfile.c: report files are written through a temporary file and
 * rename(), never through another user's symbolic link, and nothing is
 * created before there is something to write (src/report/writers/outfile.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

#define OTHER_UID 65534 /* nobody */

static char dir[64];

static const char *in_dir(const char *name)
{
	static char buf[2][PATH_MAX];
	static int which;

	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", dir, name);
	return buf[which];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void write_all(struct mt_outfile *f, const char *text)
{
	assert_int_equal(write(f->fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* A fresh sticky, world-writable directory, like /tmp. */
static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_outfile.XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 01777))
		return -1;
	mt_outfile_owner((uid_t)-1, (gid_t)-1, NULL, 0);
	return 0;
}

static int teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	(void)state;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlink(in_dir(e->d_name));
	if (d)
		closedir(d);
	return rmdir(dir);
}

/* A symbolic link at NAME to TARGET that belongs to someone else. */
static void foreign_link(const char *target, const char *name)
{
	assert_int_equal(symlink(target, in_dir(name)), 0);
	if (geteuid() == 0)
		assert_int_equal(lchown(in_dir(name), OTHER_UID, OTHER_UID), 0);
	else /* the link is ours: make memtrace write for another user */
		mt_outfile_owner(getuid() + 1, getgid(), NULL, 0);
}

static void test_new_file(void **state)
{
	struct mt_outfile f;
	struct stat st;
	mode_t mask = umask(022);

	(void)state;
	assert_int_equal(mt_outfile_open(&f, in_dir("new.txt")), 0);
	/* Not there until complete. */
	assert_int_equal(access(in_dir("new.txt"), F_OK), -1);
	write_all(&f, "report\n");
	assert_int_equal(mt_outfile_commit(&f), 0);
	umask(mask);
	assert_string_equal(get(in_dir("new.txt")), "report\n");
	assert_int_equal(stat(in_dir("new.txt"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(entries(), 1); /* no temporary file left */
}

static void test_abort_leaves_old_file(void **state)
{
	struct mt_outfile f;

	(void)state;
	put(in_dir("old.txt"), "old\n");
	assert_int_equal(mt_outfile_open(&f, in_dir("old.txt")), 0);
	write_all(&f, "half a rep");
	mt_outfile_abort(&f);
	assert_string_equal(get(in_dir("old.txt")), "old\n");
	assert_int_equal(entries(), 1);
	assert_int_equal(mt_outfile_open(&f, in_dir("gone.txt")), 0);
	mt_outfile_abort(&f);
	assert_int_equal(access(in_dir("gone.txt"), F_OK), -1);
	assert_int_equal(entries(), 1);
}

static void test_replace_keeps_mode(void **state)
{
	struct mt_outfile f;
	struct stat st;

	(void)state;
	put(in_dir("old.txt"), "old contents, longer than the new\n");
	assert_int_equal(chmod(in_dir("old.txt"), 0600), 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("old.txt")), 0);
	write_all(&f, "new\n");
	assert_int_equal(mt_outfile_commit(&f), 0);
	assert_string_equal(get(in_dir("old.txt")), "new\n");
	assert_int_equal(stat(in_dir("old.txt"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(entries(), 1);
}

static void test_foreign_link_refused(void **state)
{
	struct mt_outfile f;

	(void)state;
	put(in_dir("victim"), "secret\n");
	foreign_link(in_dir("victim"), "link");
	assert_int_equal(mt_outfile_check(in_dir("link")), -MT_OUTFILE_EFOREIGN_LINK);
	assert_int_equal(mt_outfile_open(&f, in_dir("link")), -MT_OUTFILE_EFOREIGN_LINK);
	assert_string_equal(get(in_dir("victim")), "secret\n");
	assert_int_equal(entries(), 2);
	assert_non_null(strstr(mt_outfile_strerror(-MT_OUTFILE_EFOREIGN_LINK),
			       "symbolic link owned by another user"));
	/* A dangling one (a file it would create) and a chain through one. */
	foreign_link(in_dir("nothing-yet"), "dangling");
	assert_int_equal(mt_outfile_check(in_dir("dangling")), -MT_OUTFILE_EFOREIGN_LINK);
	assert_int_equal(access(in_dir("nothing-yet"), F_OK), -1);
	mt_outfile_owner((uid_t)-1, (gid_t)-1, NULL, 0);
	assert_int_equal(symlink(in_dir("link"), in_dir("mine")), 0);
	if (geteuid() != 0)
		mt_outfile_owner(getuid() + 1, getgid(), NULL, 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("mine")), -MT_OUTFILE_EFOREIGN_LINK);
	assert_string_equal(get(in_dir("victim")), "secret\n");
}

static void test_own_link_followed(void **state)
{
	struct mt_outfile f;
	struct stat st;

	(void)state;
	put(in_dir("target"), "old\n");
	assert_int_equal(symlink("target", in_dir("link")), 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("link")), 0);
	write_all(&f, "new\n");
	assert_int_equal(mt_outfile_commit(&f), 0);
	assert_string_equal(get(in_dir("target")), "new\n");
	assert_int_equal(lstat(in_dir("link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(entries(), 2);
}

static void test_foreign_file_in_sticky_dir(void **state)
{
	struct mt_outfile f;
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip(); /* only root can give a file to another user */
	put(in_dir("theirs"), "theirs\n");
	assert_int_equal(chown(in_dir("theirs"), OTHER_UID, OTHER_UID), 0);
	assert_int_equal(mt_outfile_check(in_dir("theirs")), -MT_OUTFILE_EFOREIGN_FILE);
	assert_int_equal(mt_outfile_open(&f, in_dir("theirs")), -MT_OUTFILE_EFOREIGN_FILE);
	assert_string_equal(get(in_dir("theirs")), "theirs\n");
	/* Outside a sticky directory it is replaced, keeping its owner. */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("theirs")), 0);
	write_all(&f, "ours\n");
	assert_int_equal(mt_outfile_commit(&f), 0);
	assert_string_equal(get(in_dir("theirs")), "ours\n");
	assert_int_equal(stat(in_dir("theirs"), &st), 0);
	assert_int_equal(st.st_uid, OTHER_UID);
}

static void test_owner_of_new_files(void **state)
{
	struct mt_outfile f;
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip(); /* only root can give a file to another user */
	mt_outfile_owner(OTHER_UID, OTHER_UID, NULL, 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("for-them")), 0);
	assert_int_equal(mt_outfile_commit(&f), 0);
	assert_int_equal(stat(in_dir("for-them"), &st), 0);
	assert_int_equal(st.st_uid, OTHER_UID);
	assert_int_equal(st.st_gid, OTHER_UID);
	/* Their link is followed now, root's too. */
	put(in_dir("t2"), "x");
	foreign_link(in_dir("t2"), "their-link");
	assert_int_equal(mt_outfile_check(in_dir("their-link")), 0);
}

static void test_check_creates_nothing(void **state)
{
	(void)state;
	assert_int_equal(mt_outfile_check(in_dir("later.txt")), 0);
	assert_int_equal(entries(), 0);
	assert_int_equal(mt_outfile_check(in_dir("no/such/dir.txt")), -ENOENT);
	assert_int_equal(mt_outfile_check(dir), -EISDIR);
	put(in_dir("file"), "x");
	assert_int_equal(mt_outfile_check(in_dir("file/below")), -ENOTDIR);
}

static void test_devices_in_place(void **state)
{
	struct mt_outfile f;
	int pfd[2], saved, ret;
	char buf[16];

	(void)state;
	assert_int_equal(mt_outfile_check("/dev/null"), 0);
	assert_int_equal(mt_outfile_open(&f, "/dev/null"), 0);
	assert_null(f.tmp);
	write_all(&f, "discarded\n");
	assert_int_equal(mt_outfile_commit(&f), 0);
	/* /dev/stdout, a root link to /proc/self/fd/1 (here a pipe), is
	 * written in place: what is written comes out of the pipe. */
	assert_int_equal(pipe(pfd), 0);
	saved = dup(1);
	assert_int_equal(dup2(pfd[1], 1), 1);
	ret = mt_outfile_open(&f, "/dev/stdout");
	if (!ret) {
		assert_null(f.tmp);
		write_all(&f, "piped\n");
		ret = mt_outfile_commit(&f);
	}
	dup2(saved, 1);
	close(saved);
	close(pfd[1]);
	assert_int_equal(ret, 0);
	assert_int_equal(read(pfd[0], buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "piped\n", 6);
	close(pfd[0]);
}

/* `memtrace -o /dev/stdout >> log`: appended to the file, which is not
 * replaced (nor is /dev/stdout). */
static void test_stdout_to_file(void **state)
{
	struct mt_outfile f;
	struct stat before, after;
	int fd, saved, ret;

	(void)state;
	put(in_dir("log"), "earlier\n");
	fd = open(in_dir("log"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(stat(in_dir("log"), &before), 0);
	saved = dup(1);
	assert_int_equal(dup2(fd, 1), 1);
	ret = mt_outfile_open(&f, "/dev/stdout");
	if (!ret) {
		assert_null(f.tmp);
		write_all(&f, "report\n");
		ret = mt_outfile_commit(&f);
	}
	dup2(saved, 1);
	close(saved);
	close(fd);
	assert_int_equal(ret, 0);
	assert_string_equal(get(in_dir("log")), "earlier\nreport\n");
	assert_int_equal(stat(in_dir("log"), &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(lstat("/dev/stdout", &after), 0);
	assert_true(S_ISLNK(after.st_mode));
	assert_int_equal(entries(), 1);
}

/* Another user's link to a directory, anywhere on the path: refused. */
static void test_foreign_directory_link(void **state)
{
	struct mt_outfile f;

	(void)state;
	assert_int_equal(mkdir(in_dir("real"), 0755), 0);
	foreign_link(in_dir("real"), "dirlink");
	assert_int_equal(mt_outfile_check(in_dir("dirlink/heap.txt")),
			 -MT_OUTFILE_EFOREIGN_LINK);
	assert_int_equal(mt_outfile_open(&f, in_dir("dirlink/heap.txt")),
			 -MT_OUTFILE_EFOREIGN_LINK);
	assert_int_equal(mt_outfile_mkdir(in_dir("dirlink/rec"), 0755),
			 -MT_OUTFILE_EFOREIGN_LINK);
	assert_int_equal(mt_outfile_append(in_dir("dirlink/index.tsv"), 0644),
			 -MT_OUTFILE_EFOREIGN_LINK);
	assert_int_equal(access(in_dir("real/heap.txt"), F_OK), -1);
	assert_int_equal(access(in_dir("real/rec"), F_OK), -1);
	rmdir(in_dir("real"));
}

/* A FIFO: nobody reading is an error, not a wait; another user's is refused. */
static void test_fifo(void **state)
{
	struct mt_outfile f;

	(void)state;
	assert_int_equal(mkfifo(in_dir("fifo"), 0600), 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("fifo")), -MT_OUTFILE_ENOREADER);
	assert_non_null(strstr(mt_outfile_strerror(-MT_OUTFILE_ENOREADER), "no reader"));
	if (geteuid() != 0)
		return;
	assert_int_equal(chown(in_dir("fifo"), OTHER_UID, OTHER_UID), 0);
	assert_int_equal(mt_outfile_check(in_dir("fifo")), -MT_OUTFILE_EFOREIGN_FILE);
	assert_int_equal(mt_outfile_open(&f, in_dir("fifo")), -MT_OUTFILE_EFOREIGN_FILE);
}

/* Writing for another user (root under sudo): with that user's rights. */
static void test_as_user(void **state)
{
	struct mt_outfile f;
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip(); /* only root can take another user's rights */
	assert_int_equal(mkdir(in_dir("roots"), 0755), 0);
	mt_outfile_owner(OTHER_UID, OTHER_UID, NULL, 0);
	assert_int_equal(mt_outfile_check(in_dir("roots/x")), -EACCES);
	assert_int_equal(mt_outfile_open(&f, in_dir("roots/x")), -EACCES);
	assert_int_equal(mt_outfile_mkdir(in_dir("roots/d"), 0755), -EACCES);
	/* The thread's rights are root's again afterwards. */
	assert_int_equal(mt_outfile_user_enter(), 1);
	assert_int_equal(faccessat(AT_FDCWD, in_dir("roots"), W_OK, AT_EACCESS), -1);
	mt_outfile_user_leave(1);
	assert_int_equal(faccessat(AT_FDCWD, in_dir("roots"), W_OK, AT_EACCESS), 0);
	/* In the sticky directory: the user's file. */
	assert_int_equal(mt_outfile_mkdir(in_dir("theirs"), 0755), 0);
	assert_int_equal(mt_outfile_open(&f, in_dir("theirs/x")), 0);
	assert_int_equal(mt_outfile_commit(&f), 0);
	assert_int_equal(stat(in_dir("theirs/x"), &st), 0);
	assert_int_equal(st.st_uid, OTHER_UID);
	unlink(in_dir("theirs/x"));
	rmdir(in_dir("theirs"));
	rmdir(in_dir("roots"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_leaves_old_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_keeps_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_link_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_file_in_sticky_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owner_of_new_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_creates_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_devices_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdout_to_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_directory_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_as_user, setup, teardown),
	};

	return cmocka_run_group_tests_name("outfile", tests, NULL, NULL);
}
