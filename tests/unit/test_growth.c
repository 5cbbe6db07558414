// SPDX-License-Identifier: MIT
/*
 * test_growth.c: report --growth (src/report/compare/growth_series.c) on pprof profiles
 * written here: round k of a made-up program holds grow (k x 100 bytes),
 * flat (50 bytes), shrink ((4 - k) x 10 bytes) and, in round 3 only, jump
 * (500 bytes).  From round 1 to round 3 grew: jump (500), grow (200).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "growth_series.h"
#include "pprof_write.h"

enum { F_GROW, F_FLAT, F_SHRINK, F_JUMP, F_MAIN, NFRAMES };

static const char *const names[NFRAMES] = { "grow", "flat", "shrink", "jump",
					    "main" };
static char paths[3][64];

static void add_sample(struct mt_profile *p, uint32_t leaf, int64_t objects,
		       int64_t bytes)
{
	struct mt_sample *s = &p->samples[p->nsamples++];

	s->pid = 100;
	s->nframes = 2;
	s->frames = calloc(2, sizeof(*s->frames));
	assert_non_null(s->frames);
	s->frames[0] = leaf;
	s->frames[1] = F_MAIN;
	s->v[MT_ALLOC_OBJECTS] = s->v[MT_INUSE_OBJECTS] = objects;
	s->v[MT_ALLOC_SPACE] = s->v[MT_INUSE_SPACE] = bytes;
}

/* Round K's profile, written to paths[K - 1]. */
static void write_round(int k)
{
	static const struct mt_pprof_write_options opts = {
		.time_nanos = 1700000000000000000LL, .no_build_ids = true,
	};
	struct mt_profile p = { 0 };

	p.frames = calloc(NFRAMES, sizeof(*p.frames));
	p.samples = calloc(4, sizeof(*p.samples));
	p.procs = calloc(1, sizeof(*p.procs));
	assert_true(p.frames && p.samples && p.procs);
	for (int i = 0; i < NFRAMES; i++) {
		p.frames[i].function = strdup(names[i]);
		p.frames[i].file = strdup("/src/prog.c");
		assert_true(p.frames[i].function && p.frames[i].file);
		p.frames[i].line = 10 * (i + 1);
		p.frames[i].addr = 0x1000 + 16 * (uint64_t)i;
	}
	p.nframes = NFRAMES;
	p.procs[0].pid = 100;
	strcpy(p.procs[0].comm, "prog");
	p.nprocs = 1;
	snprintf(p.sum.target, sizeof(p.sum.target), "pid 100 (prog)");
	add_sample(&p, F_GROW, k, 100 * k);
	add_sample(&p, F_FLAT, 1, 50);
	if (k < 4)
		add_sample(&p, F_SHRINK, 4 - k, 10 * (4 - k));
	if (k == 3)
		add_sample(&p, F_JUMP, 1, 500);
	p.sum.counters[MT_CNT_ALLOC_BYTES] = 1000 * (uint64_t)k;
	assert_int_equal(mt_pprof_write_opts(paths[k - 1], &p, &opts), 0);
	mt_profile_free(&p);
}

static int setup(void **state)
{
	(void)state;
	for (int k = 1; k <= 3; k++) {
		snprintf(paths[k - 1], sizeof(paths[0]),
			 "/tmp/mt-test-growth-%d-%d.pb.gz", (int)getpid(), k);
		write_round(k);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++)
		unlink(paths[k]);
	return 0;
}

/* The sample of G whose leaf is FN, or NULL. */
static const struct mt_sample *sample_of(const struct mt_growth *g,
					 const char *fn)
{
	for (size_t i = 0; i < g->prof.nsamples; i++) {
		const struct mt_sample *s = &g->prof.samples[i];

		if (s->nframes &&
		    strcmp(g->prof.frames[s->frames[0]].function, fn) == 0)
			return s;
	}
	return NULL;
}

static void read_growth(const char *const *files, size_t n,
			const struct mt_growth_opts *o, struct mt_growth *g)
{
	char err[256] = "";
	int ret = mt_growth_read(files, n, o, g, err, sizeof(err));

	if (ret)
		fail_msg("mt_growth_read: %d %s", ret, err);
}

static void test_grown(void **state)
{
	const char *files[] = { paths[0], paths[1], paths[2] };
	struct mt_growth_opts o = { .metric = MT_INUSE_SPACE };
	const struct mt_sample *s;
	const int64_t *v;
	struct mt_growth g;

	(void)state;
	read_growth(files, 3, &o, &g);
	/* Only what grew, by what it grew. */
	assert_int_equal(g.prof.nsamples, 2);
	assert_null(sample_of(&g, "flat"));
	assert_null(sample_of(&g, "shrink"));
	s = sample_of(&g, "grow");
	assert_non_null(s);
	assert_int_equal(s->v[MT_INUSE_SPACE], 200);
	assert_int_equal(s->v[MT_INUSE_OBJECTS], 2);
	v = mt_growth_series(&g, s);
	assert_non_null(v);
	assert_int_equal(g.npoints, 3);
	assert_int_equal(v[0], 100);
	assert_int_equal(v[1], 200);
	assert_int_equal(v[2], 300);
	s = sample_of(&g, "jump");
	assert_non_null(s);
	assert_int_equal(s->v[MT_INUSE_SPACE], 500);
	v = mt_growth_series(&g, s);
	assert_non_null(v);
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 0);
	assert_int_equal(v[2], 500);
	/* The header: the last less the first. */
	assert_int_equal(g.prof.sum.counters[MT_CNT_ALLOC_BYTES], 2000);
	assert_int_equal(g.prof.nprocs, 1);
	mt_growth_free(&g);
	/* Only the top stack has a series. */
	o.top_n = 1;
	read_growth(files, 3, &o, &g);
	assert_int_equal(g.nstacks, 1);
	assert_non_null(mt_growth_series(&g, sample_of(&g, "jump")));
	assert_null(mt_growth_series(&g, sample_of(&g, "grow")));
	mt_growth_free(&g);
}

/* The order given: from round 3 to round 1, shrink grew. */
static void test_reversed(void **state)
{
	const char *files[] = { paths[2], paths[1], paths[0] };
	struct mt_growth_opts o = { .metric = MT_INUSE_OBJECTS };
	const int64_t *v;
	struct mt_growth g;

	(void)state;
	read_growth(files, 3, &o, &g);
	assert_int_equal(g.prof.nsamples, 1);
	assert_non_null(sample_of(&g, "shrink"));
	assert_int_equal(sample_of(&g, "shrink")->v[MT_INUSE_OBJECTS], 2);
	v = mt_growth_series(&g, sample_of(&g, "shrink"));
	assert_non_null(v);
	assert_int_equal(v[0], 1);
	assert_int_equal(v[1], 2);
	assert_int_equal(v[2], 3);
	mt_growth_free(&g);
}

/* Another process only: nothing; errors leave G empty. */
static void test_filter_and_errors(void **state)
{
	const char *files[] = { paths[0], "/nonexistent/heap.pb.gz", paths[2] };
	struct mt_growth_opts o = { .metric = MT_INUSE_SPACE, .only_pid = 999 };
	struct mt_growth g;
	char err[256] = "";

	(void)state;
	read_growth((const char *const[]){ paths[0], paths[2] }, 2, &o, &g);
	assert_int_equal(g.prof.nsamples, 0);
	assert_int_equal(g.nstacks, 0);
	mt_growth_free(&g);
	o.only_pid = 0;
	assert_true(mt_growth_read(files, 3, &o, &g, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/heap.pb.gz"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(g.prof.nsamples, 0);
	assert_null(g.stacks);
	assert_int_equal(mt_growth_read(files, 1, &o, &g, err, sizeof(err)),
			 -EINVAL);
	mt_growth_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grown),
		cmocka_unit_test(test_reversed),
		cmocka_unit_test(test_filter_and_errors),
	};

	return cmocka_run_group_tests_name("growth", tests, setup, teardown);
}
