/* SPDX-License-Identifier: MIT */
/*
 * test_symbolize_files.c: an address of a file is resolved once for every
 * process mapping that file (src/report/symbols/file_addrs.c, used by
 * symbolize.c), wherever each loads it, with the frames each process
 * would get alone; and never for another file at the same relative
 * address.  The "processes" are this test binary's executable, mapped at
 * made-up places.  A process's files changing (a dlopen), or its modules
 * moving in memory, opens a session for the new file only.  One cache
 * serves threads at once (a trace's reports and its HTTP server).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "self_profile.h"
#include "frame.h"
#include "symbolize.h"

/* Where the other processes map the files: this far above this one. */
#define SHIFT (UINT64_C(1) << 40)

/* A return address in this file's code: the line after the call. */
static uint64_t here(void)
{
	uint64_t ip = 0;

	record_return(&ip);
	return ip;
}

/* Another return address in this file's code. */
static uint64_t there(void)
{
	uint64_t ip = 0;

	record_return(&ip);
	return ip;
}

/* Module M of the executable as mapped SHIFT higher, named PATH, open FD. */
static struct mt_module moved(const struct mt_module *m, const char *path,
			      int fd, uint64_t shift)
{
	struct mt_module c = *m;

	c.path = strdup(path);
	assert_non_null(c.path);
	c.fd = fd;
	c.start += shift;
	c.end += shift;
	c.bias += shift;
	return c;
}

/* A process PID mapping only M, with a stack of the one address IP. */
static void add_process(struct mt_raw_profile *raw, uint32_t pid,
			struct mt_module m, uint64_t ip)
{
	add_module(add_proc(raw, pid, "other"), m);
	add_stack(raw, pid, pid, &ip, 1);
}

/* Sample SAMPLE of SHARED has the frames that RAW, alone, gets. */
static void assert_as_alone(const struct mt_profile *shared, size_t sample,
			    const struct mt_raw_profile *raw)
{
	struct mt_profile alone = { 0 };

	assert_int_equal(mt_symbolize(raw, &alone), 0);
	assert_int_equal(alone.nsamples, 1);
	assert_int_equal(shared->samples[sample].nframes,
			 alone.samples[0].nframes);
	for (size_t k = 0; k < alone.samples[0].nframes; k++)
		assert_true(mt_frame_same(frame_of(shared, sample, k),
					  frame_of(&alone, 0, k)));
	mt_profile_free(&alone);
}

/*
 * Two processes mapping the executable at different biases: the second's
 * address is resolved by the first's session, to the first's frames,
 * which are what the second gets alone.
 */
static void test_same_file_other_bias(void **state)
{
	struct fixture *fx = *state;
	struct mt_symcache *c = mt_symcache_new();
	struct mt_raw_profile twin = { 0 };
	struct mt_symcache_stats st;
	uint64_t ip = here();
	uint32_t pid;

	assert_non_null(c);
	pid = add_self(&fx->raw)->pid;
	add_stack(&fx->raw, pid, 1, &ip, 1);
	const struct mt_module exe = fx->raw.procs[0].mods[0];

	add_process(&fx->raw, pid + 1, moved(&exe, exe.path, -1, SHIFT),
		    ip + SHIFT);
	add_process(&twin, pid + 1, moved(&exe, exe.path, -1, SHIFT),
		    ip + SHIFT);
	assert_int_equal(mt_symbolize_cached(&fx->raw, &fx->out, c), 0);
	mt_symcache_get_stats(c, &st);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.resolutions, 1);
	assert_string_equal(frame_of(&fx->out, 0, 0)->function, "here");
	assert_int_equal(fx->out.samples[1].nframes,
			 fx->out.samples[0].nframes);
	assert_int_equal(fx->out.samples[1].frames[0],
			 fx->out.samples[0].frames[0]);
	assert_as_alone(&fx->out, 1, &twin);
	mt_raw_profile_free(&twin);
	mt_symcache_free(c);
}

/* A copy of this executable in a new temporary directory: its path. */
static char *copy_exe(char *dir)
{
	char *path = NULL;
	char buf[65536];
	ssize_t n;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&path, "%s/copy", dir) > 0);
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
	return path;
}

/*
 * Other files at the same relative address are resolved apart: a copy of
 * the executable (another file, another path: its frames name the copy)
 * and libc mapped under the executable's own path (the same path: only
 * the file tells them apart).
 */
static void test_other_files_apart(void **state)
{
	struct fixture *fx = *state;
	struct mt_symcache *c = mt_symcache_new();
	struct mt_raw_profile copy = { 0 }, libc = { 0 };
	struct mt_symcache_stats st;
	char dir[] = "/tmp/test_symbolize_files.XXXXXX";
	char *path = copy_exe(dir);
	uint64_t ip = here();
	uint32_t pid;

	assert_non_null(c);
	pid = add_self(&fx->raw)->pid;
	add_stack(&fx->raw, pid, 1, &ip, 1);
	const struct mt_module exe = fx->raw.procs[0].mods[0];
	struct mt_module lc = object_of((uint64_t)(uintptr_t)&getpid);
	int fd = open(lc.path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	/* libc's file, under the executable's path, covering IP + 2 SHIFT. */
	lc.start = exe.start + 2 * SHIFT;
	lc.end = exe.end + 2 * SHIFT;
	lc.bias = exe.bias + 2 * SHIFT;
	add_process(&fx->raw, pid + 1, moved(&exe, path, -1, SHIFT),
		    ip + SHIFT);
	add_process(&copy, pid + 1, moved(&exe, path, -1, SHIFT), ip + SHIFT);
	add_process(&fx->raw, pid + 2, moved(&lc, exe.path, fd, 0),
		    ip + 2 * SHIFT);
	add_process(&libc, pid + 2, moved(&lc, exe.path, dup(fd), 0),
		    ip + 2 * SHIFT);
	free(lc.path);
	assert_int_equal(mt_symbolize_cached(&fx->raw, &fx->out, c), 0);
	mt_symcache_get_stats(c, &st);
	assert_int_equal(st.sessions, 3);
	assert_int_equal(st.resolutions, 3);
	assert_string_equal(frame_of(&fx->out, 1, 0)->function, "here");
	assert_string_equal(frame_of(&fx->out, 1, 0)->module, path);
	assert_as_alone(&fx->out, 1, &copy);
	assert_string_not_equal(frame_of(&fx->out, 2, 0)->function, "here");
	assert_string_equal(frame_of(&fx->out, 2, 0)->module, exe.path);
	assert_as_alone(&fx->out, 2, &libc);
	/* Once each file's address is known, no more resolving. */
	mt_profile_free(&fx->out);
	assert_int_equal(mt_symbolize_cached(&copy, &fx->out, c), 0);
	mt_symcache_get_stats(c, &st);
	assert_int_equal(st.resolutions, 3);
	mt_raw_profile_free(&copy);
	mt_raw_profile_free(&libc);
	mt_symcache_free(c);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	free(path);
}

/* A new raw profile of this process mapping the executable (a new copy). */
static struct mt_process *self_again(struct mt_raw_profile *raw, uint64_t ip)
{
	struct mt_process *p = add_self(raw);

	add_stack(raw, p->pid, raw->nstacks + 1, &ip, 1);
	return p;
}

/*
 * One process across three reports, as a trace sees it: its modules copied
 * to new places (the loader's arrays are rebuilt), then a dlopen (libc
 * added).  Sessions are per file: the executable's is opened once, libc's
 * when it comes; before, each change made the process's session anew.
 */
static void test_dlopen_adds_a_file(void **state)
{
	struct fixture *fx = *state;
	struct mt_symcache *c = mt_symcache_new();
	struct mt_raw_profile moved_raw = { 0 }, opened = { 0 }, libc = { 0 };
	struct mt_symcache_stats st;
	uint64_t ip1 = here(), ip2 = there();
	uint64_t ip3 = (uint64_t)(uintptr_t)&getpid + 1;

	assert_non_null(c);
	self_again(&fx->raw, ip1);
	assert_int_equal(mt_symbolize_cached(&fx->raw, &fx->out, c), 0);
	mt_symcache_get_stats(c, &st);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.resolutions, 1);
	mt_profile_free(&fx->out);

	/* The same files, the modules elsewhere in memory: nothing new. */
	self_again(&moved_raw, ip1);
	add_stack(&moved_raw, moved_raw.procs[0].pid, 9, &ip2, 1);
	assert_int_equal(mt_symbolize_cached(&moved_raw, &fx->out, c), 0);
	mt_symcache_get_stats(c, &st);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.resolutions, 2);
	assert_string_equal(frame_of(&fx->out, 0, 0)->function, "here");
	assert_string_equal(frame_of(&fx->out, 1, 0)->function, "there");
	mt_profile_free(&fx->out);

	/* A dlopen: libc's file is added, the executable's session kept. */
	struct mt_process *p = self_again(&opened, ip2);

	add_module(p, object_of(ip3));
	add_stack(&opened, p->pid, 9, &ip3, 1);
	assert_int_equal(mt_symbolize_cached(&opened, &fx->out, c), 0);
	mt_symcache_get_stats(c, &st);
	assert_int_equal(st.sessions, 2);
	assert_int_equal(st.resolutions, 3);
	assert_string_equal(frame_of(&fx->out, 0, 0)->function, "there");
	add_process(&libc, p->pid, object_of(ip3), ip3);
	assert_as_alone(&fx->out, 1, &libc);
	mt_raw_profile_free(&libc);
	mt_raw_profile_free(&moved_raw);
	mt_raw_profile_free(&opened);
	mt_symcache_free(c);
}

/*
 * A module whose range spans another's (a saved profile's maps merge each
 * file's mappings, as far apart as they are): an address of the inner
 * file is that file's, as libdwfl finds it, not the outer's, listed first.
 */
static void test_overlapping_modules(void **state)
{
	struct fixture *fx = *state;
	uint64_t ip = here();
	struct mt_module exe = object_of(ip);
	struct mt_module lc = object_of((uint64_t)(uintptr_t)&getpid);
	struct mt_process *p = add_proc(&fx->raw, (uint32_t)getpid(), "test");

	if (exe.start < lc.start)
		lc.start = exe.start;
	if (exe.end > lc.end)
		lc.end = exe.end;
	add_module(p, lc);
	add_module(p, exe);
	add_stack(&fx->raw, p->pid, 1, &ip, 1);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);
	assert_string_equal(frame_of(&fx->out, 0, 0)->function, "here");
}

/* One thread's work on a shared cache: symbolise RAW again and again. */
struct worker {
	struct mt_symcache *c;
	const struct mt_raw_profile *raw;
	int err;
	bool same;             /* every time, the frames RAW gets alone */
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct mt_profile alone = { 0 };

	w->same = true;
	w->err = mt_symbolize(w->raw, &alone);
	for (int i = 0; i < 200 && !w->err; i++) {
		struct mt_profile p = { 0 };

		w->err = mt_symbolize_cached(w->raw, &p, w->c);
		for (size_t k = 0; !w->err && k < alone.nsamples; k++) {
			const struct mt_sample *a = &alone.samples[k];
			const struct mt_sample *b = &p.samples[k];

			w->same &= a->nframes == b->nframes;
			for (size_t j = 0; w->same && j < a->nframes; j++)
				w->same &= mt_frame_same(
					&alone.frames[a->frames[j]],
					&p.frames[b->frames[j]]);
		}
		mt_profile_free(&p);
	}
	mt_profile_free(&alone);
	return NULL;
}

/* Two threads, two processes (their own and a shared file), one cache. */
static void test_shared_by_threads(void **state)
{
	struct fixture *fx = *state;
	struct mt_raw_profile other = { 0 };
	struct mt_symcache *c = mt_symcache_new();
	uint64_t ips[3] = { here(), there(),
			    (uint64_t)(uintptr_t)&getpid + 1 };
	pthread_t t[2];
	struct worker w[2] = { { c, &fx->raw, 0, false },
			       { c, &other, 0, false } };

	assert_non_null(c);
	struct mt_process *p = self_again(&fx->raw, ips[0]);

	add_module(p, object_of(ips[2]));
	add_stack(&fx->raw, p->pid, 7, ips, 3);
	p = self_again(&other, ips[1]);
	add_module(p, object_of(ips[2]));
	add_stack(&other, p->pid, 7, &ips[1], 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].err, 0);
		assert_true(w[i].same);
	}
	mt_raw_profile_free(&other);
	mt_symcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_file_other_bias,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_files_apart, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dlopen_adds_a_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shared_by_threads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_overlapping_modules, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
