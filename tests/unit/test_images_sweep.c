// SPDX-License-Identifier: MIT
/*
 * The registry's upkeep system-wide (images.c): a scan of /proc drops
 * the images of the processes it no longer finds (mt_images_keep_only),
 * and the files only they mapped are closed; a read says which files the
 * image it replaced did not map (what the scan counts as its finds).
 * On real processes: this test and children of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "images.h"

#define KIDS 20

static size_t ngone;

static void on_gone(void *ctx, const struct mt_image_file *f)
{
	(void)ctx;
	(void)f;
	ngone++;
}

/* A child that execs `sleep 30` (a file of its own: the sleep binary). */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* PID's image, once it has exec'd sleep (at most 5 s). */
static const struct mt_image *read_sleeper(struct mt_images *r, pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		const struct mt_image *img = mt_images_read(r, pid, NULL, 0);

		for (size_t k = 0; img && k < img->n; k++)
			if (strstr(img->v[k].file->path, "/sleep"))
				return img;
		usleep(10000);
	}
	return NULL;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* KIDS processes read, then gone: a scan that does not find them drops
 * their images and closes the sleep binary; the live ones stay. */
static void test_exited_dropped(void **state)
{
	struct mt_images r = { .on_file_gone = on_gone };
	pid_t kids[KIDS];
	uint32_t live[KIDS / 2 + 1];
	size_t nlive = 0, files_before;
	int status;

	(void)state;
	ngone = 0;
	assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
	files_before = r.nfiles;
	for (int i = 0; i < KIDS; i++) {
		kids[i] = start_sleeper();
		assert_non_null(read_sleeper(&r, kids[i]));
	}
	assert_int_equal(r.nprocs, KIDS + 1);
	assert_int_equal(r.nfiles, files_before + 1); /* sleep, shared */
	/* Half of them exit. */
	for (int i = 0; i < KIDS; i += 2) {
		kill(kids[i], SIGKILL);
		assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
	}
	live[nlive++] = (uint32_t)getpid();
	for (int i = 1; i < KIDS; i += 2)
		live[nlive++] = (uint32_t)kids[i];
	qsort(live, nlive, sizeof(*live), cmp_pid);
	mt_images_keep_only(&r, live, nlive);
	assert_int_equal(r.nprocs, nlive);
	assert_int_equal(r.dropped, KIDS / 2);
	assert_int_equal(r.nfiles, files_before + 1); /* the rest run sleep */
	for (int i = 0; i < KIDS; i++)
		assert_true((mt_images_of(&r, kids[i]) != NULL) == (i % 2 == 1));
	/* The others too: sleep's file goes with its last image. */
	for (int i = 1; i < KIDS; i += 2) {
		kill(kids[i], SIGKILL);
		assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
	}
	live[0] = (uint32_t)getpid();
	mt_images_keep_only(&r, live, 1);
	assert_int_equal(r.nprocs, 1);
	assert_int_equal(r.dropped, KIDS);
	assert_int_equal(r.nfiles, files_before);
	assert_int_equal(ngone, 1);
	assert_int_equal(r.closed, 1);
	assert_non_null(mt_images_of(&r, getpid()));
	/* None live: all go, and every file with them. */
	mt_images_keep_only(&r, NULL, 0);
	assert_int_equal(r.nprocs, 0);
	assert_int_equal(r.nfiles, 0);
	assert_int_equal(r.closed, r.opened);
	mt_images_free(&r);
}

/* What a read found that the image it replaced did not map. */
static void test_grew(void **state)
{
	struct mt_images r = { .on_file_gone = on_gone };
	char dir[] = "/tmp/mt-sweep-XXXXXX", path[PATH_MAX];
	const struct mt_image *img;
	int fd;
	void *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/code.so", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	/* A first read replaces nothing: nothing grew. */
	assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
	assert_int_equal(r.grew, 0);
	assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
	assert_int_equal(r.grew, 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(img);
	assert_int_equal(r.grew, 1);
	assert_string_equal(r.grew_files[0]->path, path);
	assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
	assert_int_equal(r.grew, 0);
	munmap(p, 4096);
	assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
	assert_int_equal(r.grew, 0); /* one file less is not a find */
	close(fd);
	unlink(path);
	rmdir(dir);
	mt_images_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exited_dropped),
		cmocka_unit_test(test_grew),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
