/* SPDX-License-Identifier: MIT */
/*
 * test_delta.c: --delta (src/loader/outputs/delta.c).  Each report's alloc values
 * become what was allocated since the previous report, for the same
 * process, category and stack, wherever that stack now sits among the
 * samples; in-use values are left alone; a stack new since then keeps all
 * it has; the first report (and a NULL profile) only remembers; a counter
 * that went down (a pid reused by a new process with the same stack)
 * starts again rather than going negative.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "delta.h"

#define MAXS 8

/* One stack: pid, category, id, allocated bytes and objects. */
struct st {
	uint32_t pid, cat;
	uint64_t id, bytes, objects;
};

/* A raw profile of the stacks ST (N of them) at TIME, and the profile
 * symbolised from it (sample i from stack i; in use: 1000 + i bytes). */
struct pair {
	struct mt_raw_stack rs[MAXS];
	struct mt_sample smp[MAXS];
	struct mt_raw_profile raw;
	struct mt_profile prof;
};

static void make(struct pair *p, const struct st *st, size_t n, double time_s)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		p->rs[i] = (struct mt_raw_stack){
			.pid = st[i].pid, .category = st[i].cat,
			.stack_id = st[i].id, .alloc_bytes = st[i].bytes,
			.alloc_objects = st[i].objects,
		};
		p->smp[i].pid = st[i].pid;
		p->smp[i].v[MT_ALLOC_SPACE] = (int64_t)st[i].bytes;
		p->smp[i].v[MT_ALLOC_OBJECTS] = (int64_t)st[i].objects;
		p->smp[i].v[MT_INUSE_SPACE] = 1000 + (int64_t)i;
		p->smp[i].v[MT_INUSE_OBJECTS] = 1;
	}
	p->raw.stacks = p->rs;
	p->raw.nstacks = n;
	p->raw.sum.duration_s = time_s;
	p->prof.samples = p->smp;
	p->prof.nsamples = n;
}

static void check(const struct pair *p, size_t i, int64_t bytes,
		  int64_t objects)
{
	assert_int_equal(p->smp[i].v[MT_ALLOC_SPACE], bytes);
	assert_int_equal(p->smp[i].v[MT_ALLOC_OBJECTS], objects);
	assert_int_equal(p->smp[i].v[MT_INUSE_SPACE], 1000 + (int64_t)i);
}

static void test_first_report_unchanged(void **state)
{
	static const struct st a[] = { { 1, MT_CAT_HEAP, 10, 500, 5 } };
	struct mt_delta d = { 0 };
	struct pair p;

	(void)state;
	make(&p, a, 1, 2.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	check(&p, 0, 500, 5);
	assert_true(p.prof.sum.delta);
	assert_true(p.prof.sum.delta_since_s == 0.0);
	mt_delta_free(&d);
}

static void test_since_previous(void **state)
{
	static const struct st a[] = {
		{ 1, MT_CAT_HEAP, 10, 500, 5 },
		{ 1, MT_CAT_HEAP, 11, 64, 1 },
		{ 2, MT_CAT_HEAP, 10, 300, 3 },  /* same stack, another pid */
		{ 1, MT_CAT_MMAP, 10, 4096, 1 }, /* same stack, mmap */
	};
	/* Reordered, one stack gone, one new. */
	static const struct st b[] = {
		{ 1, MT_CAT_MMAP, 10, 8192, 2 },
		{ 2, MT_CAT_HEAP, 10, 300, 3 },
		{ 1, MT_CAT_HEAP, 12, 77, 7 },
		{ 1, MT_CAT_HEAP, 10, 800, 9 },
	};
	static const struct st c[] = {
		{ 1, MT_CAT_HEAP, 10, 1000, 10 },
		{ 1, MT_CAT_HEAP, 12, 77, 7 },
	};
	struct mt_delta d = { 0 };
	struct pair p;

	(void)state;
	make(&p, a, 4, 1.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	make(&p, b, 4, 3.5);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	check(&p, 0, 4096, 1);
	check(&p, 1, 0, 0);
	check(&p, 2, 77, 7);
	check(&p, 3, 300, 4);
	assert_true(p.prof.sum.delta_since_s == 1.0);
	/* Against the second report only. */
	make(&p, c, 2, 5.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	check(&p, 0, 200, 1);
	check(&p, 1, 0, 0);
	assert_true(p.prof.sum.delta_since_s == 3.5);
	mt_delta_free(&d);
}

/* PROF NULL: the start of a delta, nothing changed but remembered. */
static void test_remember_only(void **state)
{
	static const struct st a[] = { { 3, MT_CAT_HEAP, 5, 100, 1 } };
	static const struct st b[] = { { 3, MT_CAT_HEAP, 5, 350, 4 } };
	struct mt_delta d = { 0 };
	struct pair p;

	(void)state;
	make(&p, a, 1, 1.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, NULL), 0);
	check(&p, 0, 100, 1);
	make(&p, b, 1, 2.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	check(&p, 0, 250, 3);
	mt_delta_free(&d);
}

/* A counter lower than before is a new one (the pid reused by a process
 * with the same stack): all of it is new, never a negative allocation. */
static void test_counter_restarted(void **state)
{
	static const struct st a[] = { { 9, MT_CAT_HEAP, 1, 1000, 10 } };
	static const struct st b[] = { { 9, MT_CAT_HEAP, 1, 300, 3 } };
	struct mt_delta d = { 0 };
	struct pair p;

	(void)state;
	make(&p, a, 1, 1.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	make(&p, b, 1, 2.0);
	assert_int_equal(mt_delta_apply(&d, &p.raw, &p.prof), 0);
	check(&p, 0, 300, 3);
	mt_delta_free(&d);
}

/* Many stacks: each matched to its own previous value. */
static void test_many_stacks(void **state)
{
	enum { N = 5000 };
	struct mt_raw_stack *rs = calloc(N, sizeof(*rs));
	struct mt_sample *smp = calloc(N, sizeof(*smp));
	struct mt_raw_profile raw = { .stacks = rs, .nstacks = N };
	struct mt_profile prof = { .samples = smp, .nsamples = N };
	struct mt_delta d = { 0 };

	(void)state;
	assert_non_null(rs);
	assert_non_null(smp);
	for (int round = 1; round <= 2; round++) {
		for (size_t i = 0; i < N; i++) {
			/* Round 2 lists them backwards. */
			size_t k = round == 1 ? i : N - 1 - i;

			rs[i] = (struct mt_raw_stack){
				.pid = 100 + (uint32_t)(k % 7), .stack_id = k,
				.alloc_bytes = k * round, .alloc_objects = round,
			};
			smp[i].v[MT_ALLOC_SPACE] = (int64_t)(k * (size_t)round);
			smp[i].v[MT_ALLOC_OBJECTS] = round;
		}
		assert_int_equal(mt_delta_apply(&d, &raw, &prof), 0);
	}
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(smp[i].v[MT_ALLOC_SPACE], (int64_t)(N - 1 - i));
		assert_int_equal(smp[i].v[MT_ALLOC_OBJECTS], 1);
	}
	mt_delta_free(&d);
	free(rs);
	free(smp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_report_unchanged),
		cmocka_unit_test(test_since_previous),
		cmocka_unit_test(test_remember_only),
		cmocka_unit_test(test_counter_restarted),
		cmocka_unit_test(test_many_stacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
