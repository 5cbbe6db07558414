/* SPDX-License-Identifier: MIT */
/*
 * test_perf_map.c: JIT code named by the perf map its process writes
 * (src/report/symbols/perf_map.c, used by symbolize.c): the file's lines (bad
 * ones skipped), the entry containing an address (the last written when
 * entries overlap; a return address is looked up on its call, one byte
 * before), the file found in the process's root and refused when it is a
 * symbolic link, a FIFO or another user's; and frames of this process: an
 * address in an anonymous executable mapping named by the map, one in a
 * file named by the file's symbols even where the map covers it too, one
 * the map does not cover left unresolved; the map kept at a process's
 * exit used once it is gone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "perf_map.h"
#include "self_profile.h"
#include "symbolize.h"

static void parse(struct mt_perf_map *m, const char *text)
{
	assert_int_equal(mt_perf_map_parse(m, text, strlen(text)), 0);
}

static const char *name_at(const struct mt_perf_map *m, uint64_t pc)
{
	const struct mt_perf_sym *s = mt_perf_map_find(m, pc);

	return s ? s->name : NULL;
}

static void test_parse(void **state)
{
	struct mt_perf_map m;
	char *long_line = NULL;

	(void)state;
	parse(&m, "1000 40 first one\n"
		  "1040 40 second\r\n"
		  "junk line\n"
		  "-2000 10 negative\n"
		  " 2000 10 leading space\n"
		  "2000 0 empty\n"
		  "2000 10\n"
		  "fffffffffffffff0 20 wraps\n"
		  "0x3000 0x10 prefixed\n"
		  "1100 100 outer\n"
		  "1180 10 inner, later\n"
		  "1080 10 no newline at the end");
	assert_int_equal(m.n, 6);
	assert_string_equal(name_at(&m, 0x1000), "first one");
	assert_string_equal(name_at(&m, 0x103f), "first one");
	assert_string_equal(name_at(&m, 0x1040), "second");
	assert_null(name_at(&m, 0xfff));
	assert_null(name_at(&m, 0x2005));
	assert_string_equal(name_at(&m, 0x3008), "prefixed");
	assert_null(name_at(&m, 0x3010));
	/* Overlapping: the one written last. */
	assert_string_equal(name_at(&m, 0x1185), "inner, later");
	assert_string_equal(name_at(&m, 0x1190), "outer");
	assert_string_equal(name_at(&m, 0x1088), "no newline at the end");
	mt_perf_map_free(&m);

	/* A line longer than the bound is skipped, the next one read. */
	assert_true(asprintf(&long_line, "5000 10 %0*d\n6000 10 after\n",
			     MT_PERF_MAP_LINE, 7) > 0);
	parse(&m, long_line);
	assert_null(name_at(&m, 0x5000));
	assert_string_equal(name_at(&m, 0x6000), "after");
	mt_perf_map_free(&m);
	free(long_line);
}

/* This process's perf map path. */
static void map_path(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/perf-%d.map", (int)getpid());
}

static void write_map(const char *text)
{
	char path[64];
	FILE *f;

	map_path(path, sizeof(path));
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void remove_map(void)
{
	char path[64];

	map_path(path, sizeof(path));
	unlink(path);
}

static void test_load(void **state)
{
	struct mt_perf_map m = { 0 };
	char path[64], target[64];

	(void)state;
	map_path(path, sizeof(path));
	write_map("1000 10 first\n");
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), 0);
	assert_string_equal(name_at(&m, 0x1004), "first");
	/* Unchanged: kept.  Changed (as a JIT appends): read again. */
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), 0);
	assert_int_equal(m.n, 1);
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs("2000 10 appended\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), 0);
	assert_string_equal(name_at(&m, 0x2004), "appended");
	mt_perf_map_free(&m);

	/* Another user's file: refused. */
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), -ENOENT);
	assert_int_equal(m.n, 0);

	/* A symbolic link to a readable map: refused. */
	snprintf(target, sizeof(target), "/tmp/perf-target-%d", (int)getpid());
	unlink(target);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(chown(target, getuid(), getgid()), 0);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), -ENOENT);
	unlink(path);
	unlink(target);

	/* A FIFO: refused without waiting for a writer. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), -ENOENT);
	unlink(path);

	/* None: -ENOENT; no such process: -ESRCH. */
	assert_int_equal(mt_perf_map_load(&m, (uint32_t)getpid()), -ENOENT);
	assert_int_equal(mt_perf_map_load(&m, 0x7ffffff0), -ESRCH);
}

/* A page of "JIT code": anonymous, executable, in no file. */
static uint64_t jit_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return (uint64_t)(uintptr_t)p;
}

/* The function of frame 0 of sample I of OUT. */
static const char *fn(struct fixture *fx, size_t i)
{
	return frame_of(&fx->out, i, 0)->function;
}

static void test_symbolize(void **state)
{
	struct fixture *fx = *state;
	struct mt_process *self = add_self(&fx->raw);
	uint64_t page = jit_page();
	uint64_t in_file = (uint64_t)(uintptr_t)&test_symbolize;
	char map[512];

	/*
	 * Two adjacent pieces, and one over this test's own code: the file's
	 * symbols name that address, not the map.
	 */
	snprintf(map, sizeof(map),
		 "%" PRIx64 " 40 JS:first piece\n"
		 "%" PRIx64 " 40 JS:second piece\n"
		 "%" PRIx64 " 100 JS:not this one\n",
		 page + 0x100, page + 0x140, in_file - 0x10);
	write_map(map);
	/* Return addresses: on the call one byte before each. */
	const uint64_t ips[] = {
		page + 0x101,  /* first piece */
		page + 0x140,  /* the call is the first piece's last byte */
		page + 0x141,  /* second piece */
		page + 0x181,  /* past both: unresolved */
		in_file + 1,   /* this function */
	};

	for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++)
		add_stack(&fx->raw, self->pid, i + 1, &ips[i], 1);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);
	remove_map();
	assert_string_equal(fn(fx, 0), "JS:first piece");
	assert_string_equal(fn(fx, 1), "JS:first piece");
	assert_string_equal(fn(fx, 2), "JS:second piece");
	assert_true(frame_of(&fx->out, 2, 0)->no_inlines);
	assert_false(frame_of(&fx->out, 2, 0)->unresolved);
	assert_true(frame_of(&fx->out, 3, 0)->unresolved);
	assert_non_null(strstr(fn(fx, 3), "[unknown]+0x"));
	assert_string_equal(fn(fx, 4), "test_symbolize");
	munmap((void *)(uintptr_t)page, 4096);
}

/* A child that writes its map and waits; kept at its exit, then gone. */
static void test_kept(void **state)
{
	struct fixture *fx = *state;
	int go[2];
	pid_t pid;
	char c = 0;

	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char path[64], text[128];
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
		snprintf(text, sizeof(text), "7f0000001000 100 JS:gone but named\n");
		fputs(text, f);
		fclose(f);
		close(go[0]);
		if (write(go[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(go[1]);
	assert_int_equal(read(go[0], &c, 1), 1);
	close(go[0]);
	/* As memtrace does at the child's exit stop. */
	mt_perf_map_keep((uint32_t)pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);

	struct mt_process *p = add_proc(&fx->raw, (uint32_t)pid, "jit");
	const uint64_t ip = 0x7f0000001081;

	(void)p;
	add_stack(&fx->raw, (uint32_t)pid, 1, &ip, 1);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);
	assert_string_equal(fn(fx, 0), "JS:gone but named");
	mt_perf_map_forget_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_load),
		cmocka_unit_test_setup_teardown(test_symbolize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
