/* SPDX-License-Identifier: MIT */
/*
 * test_map_walk.c: reading BPF hash maps in batches, one process's entries
 * or all, deleting them after a successful walk (src/loader/bpf/map_walk.c).
 * Needs root (it creates BPF maps); skipped without, unless
 * MEMTRACE_REQUIRE_BPF is set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "map_walk.h"

#define NPIDS 10
#define PER_PID 300  /* 3000 entries: several batches of 1024 */

struct key {
	uint32_t pid;
	uint32_t n;
};

/* A hash map holding PER_PID entries for each pid 1..NPIDS; -1 (after
 * skipping or failing the test) when BPF maps cannot be made here. */
static int make_map(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "mt_test", sizeof(struct key),
				sizeof(uint64_t), NPIDS * PER_PID, NULL);

	if (fd < 0) {
		if (geteuid() != 0 && !getenv("MEMTRACE_REQUIRE_BPF"))
			skip();
		fail_msg("cannot create a BPF hash map: %d", fd);
	}
	for (uint32_t p = 1; p <= NPIDS; p++)
		for (uint32_t n = 0; n < PER_PID; n++) {
			struct key k = { p, n };
			uint64_t v = (uint64_t)p << 32 | n;

			assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
		}
	return fd;
}

static size_t count_pid(int fd, uint32_t pid)
{
	struct key k, next, *prev = NULL;
	size_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		n += pid == 0 || k.pid == pid;
	}
	return n;
}

struct seen {
	size_t n;
	size_t fail_at;    /* fail the walk at this visit (0: never) */
	int bad;           /* a visited entry was not wanted, or wrong */
};

static int visit(const void *key, const void *value, void *ctx)
{
	const struct key *k = key;
	struct seen *s = ctx;
	uint64_t v;

	memcpy(&v, value, sizeof(v));
	if (v != ((uint64_t)k->pid << 32 | k->n) || (k->pid != 3 && k->pid != 7))
		s->bad = 1;
	if (++s->n == s->fail_at)
		return -EIO;
	return 0;
}

/* A walk that removes the entries of pids 3 and 7, and only those. */
static void test_remove_wanted(void **state)
{
	uint32_t pids[] = { 7, 3 };
	struct mt_pid_filter f = { pids, 2, true };
	struct seen s = { 0 };
	int fd = make_map();

	(void)state;
	mt_pids_sort(pids, 2);
	assert_int_equal(mt_map_walk(fd, sizeof(struct key), sizeof(uint64_t),
				     &f, visit, &s), 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.n, 2 * PER_PID);
	assert_int_equal(count_pid(fd, 3), 0);
	assert_int_equal(count_pid(fd, 7), 0);
	assert_int_equal(count_pid(fd, 0), (NPIDS - 2) * PER_PID);
	close(fd);
}

/* A walk that fails part-way deletes nothing: its caller has not got
 * everything, and the next walk must find it all again. */
static void test_failed_walk_deletes_nothing(void **state)
{
	uint32_t pids[] = { 3, 7 };
	struct mt_pid_filter f = { pids, 2, true };
	struct seen s = { .fail_at = PER_PID + 10 };
	int fd = make_map();

	(void)state;
	assert_int_equal(mt_map_walk(fd, sizeof(struct key), sizeof(uint64_t),
				     &f, visit, &s), -EIO);
	assert_int_equal(count_pid(fd, 0), NPIDS * PER_PID);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove_wanted),
		cmocka_unit_test(test_failed_walk_deletes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
