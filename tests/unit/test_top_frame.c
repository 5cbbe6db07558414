/* SPDX-License-Identifier: MIT */
/*
 * test_top_frame.c: memtrace top's frames (src/loader/outputs/top_frame.c).  A
 * frame's growth is in use now less in use at the previous frame, per
 * process and per (pid, category, stack); a stack or process new since
 * then grew by all it holds, one whose blocks were freed shrinks; the
 * first frame counts from nothing; allocations are those since the
 * previous frame; peaks never go down; a pid listed twice (after an exec)
 * is one row; the sort keys order the rows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "top.h"

/* One stack of a snapshot: pid, category, id, allocated and freed bytes. */
struct st {
	uint32_t pid, cat;
	uint64_t id, alloc, freed;
};

/* A raw profile (heap-allocated, as a snapshot's) of processes PIDS and
 * stacks ST at time T. */
static struct mt_raw_profile snap(struct mt_process *procs, size_t nprocs,
				  const struct st *st, size_t n, double t)
{
	struct mt_raw_profile r = { 0 };

	r.procs = procs;
	r.nprocs = nprocs;
	r.stacks = calloc(n + 1, sizeof(*r.stacks));
	assert_non_null(r.stacks);
	for (size_t i = 0; i < n; i++)
		r.stacks[i] = (struct mt_raw_stack){
			.pid = st[i].pid, .category = st[i].cat,
			.stack_id = st[i].id, .alloc_bytes = st[i].alloc,
			.free_bytes = st[i].freed,
		};
	r.nstacks = n;
	r.sum.duration_s = t;
	r.sum.counters[MT_CNT_EVENTS] = 7 * n;
	return r;
}

static const struct mt_top_proc *proc(const struct mt_top_frame *f, uint32_t pid)
{
	for (size_t i = 0; i < f->nprocs; i++)
		if (f->procs[i].pid == pid)
			return &f->procs[i];
	fail_msg("no row for pid %u", pid);
	return NULL;
}

static const struct mt_top_stack *stack(const struct mt_top_frame *f,
					uint32_t pid, uint32_t cat, uint64_t id)
{
	for (size_t i = 0; i < f->nstacks; i++)
		if (f->stacks[i].pid == pid && f->stacks[i].category == cat &&
		    f->stacks[i].stack_id == id)
			return &f->stacks[i];
	fail_msg("no stack %u/%u/%llu", pid, cat, (unsigned long long)id);
	return NULL;
}

static struct mt_process procs[3] = {
	{ .pid = 10, .comm = "a" }, { .pid = 20, .comm = "b" },
	{ .pid = 10, .comm = "a2" }, /* pid 10 after an exec */
};

static void growth_between_frames(void **state)
{
	struct mt_top_frame f0 = { 0 }, f1, f2;
	const struct st s1[] = {
		{ 10, 0, 1, 1000, 0 },    /* a: 1000 in use */
		{ 10, 1, 1, 500, 100 },   /* same id, other category: 400 */
		{ 20, 0, 5, 300, 300 },   /* b: all freed */
	};
	const struct st s2[] = {
		{ 10, 0, 1, 3000, 500 },  /* +1500 in use, +2000 allocated */
		{ 10, 1, 1, 500, 500 },   /* -400: freed */
		{ 20, 0, 5, 300, 300 },
		{ 20, 0, 9, 64, 0 },      /* new: +64 */
	};
	struct mt_raw_profile r1 = snap(procs, 3, s1, 3, 1.0);
	struct mt_raw_profile r2 = snap(procs, 3, s2, 4, 2.5);

	(void)state;
	assert_int_equal(mt_top_frame_make(&r1, &f0, &f1), 0);
	assert_null(r1.stacks); /* taken */
	assert_int_equal(f1.seq, 1);
	assert_int_equal(f1.nprocs, 2); /* pid 10 once */
	assert_true(f1.dt == 1.0);
	assert_int_equal(f1.events, 21);
	/* The first frame: from nothing. */
	assert_int_equal(proc(&f1, 10)->inuse, 1400);
	assert_int_equal(proc(&f1, 10)->growth, 1400);
	assert_int_equal(proc(&f1, 10)->alloc, 1500);
	assert_int_equal(proc(&f1, 20)->inuse, 0);
	assert_int_equal(proc(&f1, 20)->alloc, 300);
	assert_int_equal(stack(&f1, 10, 1, 1)->growth, 400);

	assert_int_equal(mt_top_frame_make(&r2, &f1, &f2), 0);
	assert_int_equal(f2.seq, 2);
	assert_true(f2.dt == 1.5);
	assert_int_equal(proc(&f2, 10)->inuse, 2500);
	assert_int_equal(proc(&f2, 10)->growth, 2500 - 1400);
	assert_int_equal(proc(&f2, 10)->alloc, 2000);
	assert_int_equal(proc(&f2, 10)->peak, 2500);
	assert_int_equal(stack(&f2, 10, 0, 1)->growth, 1500);
	assert_int_equal(stack(&f2, 10, 1, 1)->growth, -400);
	assert_int_equal(stack(&f2, 10, 1, 1)->inuse, 0);
	assert_int_equal(stack(&f2, 20, 0, 9)->growth, 64);
	assert_int_equal(stack(&f2, 20, 0, 5)->growth, 0);
	assert_int_equal(proc(&f2, 20)->growth, 64);
	assert_int_equal(proc(&f2, 20)->alloc, 64);
	/* A stack's raw index points at its own raw stack. */
	for (size_t i = 0; i < f2.nstacks; i++)
		assert_int_equal(f2.raw.stacks[f2.stacks[i].raw].stack_id,
				 f2.stacks[i].stack_id);
	mt_top_frame_free(&f1);
	mt_top_frame_free(&f2);
}

static void peak_stays(void **state)
{
	struct mt_top_frame f0 = { 0 }, f1, f2;
	const struct st s1[] = { { 20, 0, 1, 5000, 0 } };
	const struct st s2[] = { { 20, 0, 1, 5000, 4000 } };
	struct mt_raw_profile r1 = snap(procs + 1, 1, s1, 1, 1);
	struct mt_raw_profile r2 = snap(procs + 1, 1, s2, 1, 2);

	(void)state;
	assert_int_equal(mt_top_frame_make(&r1, &f0, &f1), 0);
	assert_int_equal(mt_top_frame_make(&r2, &f1, &f2), 0);
	assert_int_equal(proc(&f2, 20)->inuse, 1000);
	assert_int_equal(proc(&f2, 20)->growth, -4000);
	assert_int_equal(proc(&f2, 20)->peak, 5000);
	assert_int_equal(proc(&f2, 20)->alloc, 0);
	mt_top_frame_free(&f1);
	mt_top_frame_free(&f2);
}

/* A process whose stacks were read before the tracer knew it (system-wide,
 * just started) still has its row, named "?". */
static void unnamed_process(void **state)
{
	struct mt_top_frame f0 = { 0 }, f1;
	const struct st s1[] = { { 20, 0, 1, 10, 0 }, { 77, 0, 2, 5000, 0 } };
	struct mt_raw_profile r1 = snap(procs + 1, 1, s1, 2, 1);

	(void)state;
	assert_int_equal(mt_top_frame_make(&r1, &f0, &f1), 0);
	assert_int_equal(f1.nprocs, 2);
	assert_int_equal(proc(&f1, 77)->inuse, 5000);
	assert_int_equal(proc(&f1, 77)->growth, 5000);
	assert_string_equal(proc(&f1, 77)->comm, "?");
	assert_string_equal(proc(&f1, 20)->comm, "b");
	mt_top_frame_free(&f1);
}

static void sort_keys(void **state)
{
	struct mt_top_proc rows[3] = {
		{ .pid = 1, .inuse = 100, .growth = 5, .peak = 900, .alloc = 1 },
		{ .pid = 2, .inuse = 300, .growth = -7, .peak = 300, .alloc = 50 },
		{ .pid = 3, .inuse = 200, .growth = 80, .peak = 200, .alloc = 20 },
	};
	static const struct { const char *word; uint32_t order[3]; } want[] = {
		{ "inuse", { 2, 3, 1 } }, { "growth", { 3, 1, 2 } },
		{ "peak", { 1, 2, 3 } }, { "alloc", { 2, 3, 1 } },
	};
	enum mt_top_sort k;

	(void)state;
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		assert_int_equal(mt_top_sort_parse(want[w].word, &k), 0);
		mt_top_sort_procs(rows, 3, k);
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(rows[i].pid, want[w].order[i]);
	}
	assert_int_equal(mt_top_sort_parse("size", &k), -1);
}

static void stacks_by_growth(void **state)
{
	struct mt_top_stack rows[3] = {
		{ .pid = 1, .stack_id = 1, .inuse = 50, .growth = 0 },
		{ .pid = 1, .stack_id = 2, .inuse = 10, .growth = 10 },
		{ .pid = 1, .stack_id = 3, .inuse = 90, .growth = -5 },
	};

	(void)state;
	mt_top_sort_stacks(rows, 3);
	assert_int_equal(rows[0].stack_id, 2);
	assert_int_equal(rows[1].stack_id, 1);
	assert_int_equal(rows[2].stack_id, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(growth_between_frames),
		cmocka_unit_test(peak_stays),
		cmocka_unit_test(unnamed_process),
		cmocka_unit_test(sort_keys),
		cmocka_unit_test(stacks_by_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
