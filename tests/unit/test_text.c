/* SPDX-License-Identifier: MIT */
/*
 * test_text.c: the text report (src/report/writers/text*.c) on profiles built in
 * memory with known frames and values.  Output is captured with
 * open_memstream and compared line by line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text.h"

/* --- building profiles -------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	assert_true(!s || d);
	return d;
}

static uint32_t add_frame(struct mt_profile *p, const char *function,
			  const char *file, int line, const char *decl_file,
			  int decl_line, const char *module, bool inlined)
{
	struct mt_frame *v = reallocarray(p->frames, p->nframes + 1, sizeof(*v));

	assert_non_null(v);
	p->frames = v;
	v[p->nframes] = (struct mt_frame){
		.function = dup_or_null(function),
		.file = dup_or_null(file),
		.line = line,
		.decl_file = dup_or_null(decl_file),
		.decl_line = decl_line,
		.module = dup_or_null(module),
		.addr = 0x1000 + p->nframes,
		.inlined = inlined,
	};
	return (uint32_t)p->nframes++;
}

/* Values in pprof order: alloc_objects, alloc_space, inuse_objects, inuse_space. */
static void add_sample(struct mt_profile *p, uint32_t pid, const uint32_t *frames,
		       size_t n, int64_t ao, int64_t as, int64_t io, int64_t is)
{
	struct mt_sample *v = reallocarray(p->samples, p->nsamples + 1, sizeof(*v));

	assert_non_null(v);
	p->samples = v;
	v[p->nsamples] = (struct mt_sample){
		.pid = pid,
		.nframes = n,
		.frames = calloc(n ? n : 1, sizeof(uint32_t)),
		.v = { ao, as, io, is },
	};
	assert_non_null(v[p->nsamples].frames);
	memcpy(v[p->nsamples].frames, frames, n * sizeof(*frames));
	p->nsamples++;
}

static void add_proc(struct mt_profile *p, uint32_t pid, const char *comm)
{
	struct mt_process *v = reallocarray(p->procs, p->nprocs + 1, sizeof(*v));

	assert_non_null(v);
	p->procs = v;
	v[p->nprocs] = (struct mt_process){ .pid = pid };
	snprintf(v[p->nprocs].comm, sizeof(v[p->nprocs].comm), "%s", comm);
	p->nprocs++;
}

#define FRAMES(...) (const uint32_t[]){ __VA_ARGS__ }, \
	sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t)

/*
 * The main fixture (pid 100).  inuse_space: leak_a 1000, leak_b 600 (+300
 * through the inlined helper), recurse 100 (recursive), zero_fn 0; total
 * 2000.  main is on every stack, at two different call sites.
 */
static void build_leaks(struct mt_profile *p)
{
	uint32_t leak_a = add_frame(p, "leak_a", "/src/leaks.c", 14,
				    "/src/leaks.c", 12, "/bin/leaks", false);
	uint32_t main40 = add_frame(p, "main", "/src/leaks.c", 40,
				    "/src/leaks.c", 30, "/bin/leaks", false);
	uint32_t main41 = add_frame(p, "main", "/src/leaks.c", 41,
				    "/src/leaks.c", 30, "/bin/leaks", false);
	uint32_t leak_b = add_frame(p, "leak_b", "/src/leaks.c", 22,
				    "/src/leaks.c", 18, "/bin/leaks", false);
	uint32_t helper = add_frame(p, "helper", "/src/util.h", 8,
				    "/src/util.h", 5, "/bin/leaks", true);
	uint32_t recurse = add_frame(p, "recurse", "/src/leaks.c", 52,
				     "/src/leaks.c", 48, "/bin/leaks", false);
	uint32_t zero = add_frame(p, "zero_fn", "/src/leaks.c", 60,
				  "/src/leaks.c", 58, "/bin/leaks", false);
	uint32_t libc = add_frame(p, "libc.so.6+0x1234", NULL, 0, NULL, 0,
				  "/lib/libc.so.6", false);
	uint32_t unknown = add_frame(p, "[unknown stack]", NULL, 0, NULL, 0,
				     NULL, false);

	add_proc(p, 100, "leaks");
	add_sample(p, 100, FRAMES(leak_a, main40), 1, 1000, 1, 1000);
	add_sample(p, 100, FRAMES(leak_b, main41), 30, 6000, 3, 600);
	add_sample(p, 100, FRAMES(helper, leak_b, main41), 3, 300, 3, 300);
	add_sample(p, 100, FRAMES(recurse, recurse, main40), 1, 100, 1, 100);
	add_sample(p, 100, FRAMES(zero, main40), 2, 20, 0, 0);
	add_sample(p, 100, FRAMES(libc, main40), 5, 50, 0, 0);
	add_sample(p, 100, FRAMES(unknown), 1, 10, 0, 0);
}

/* --- capturing output --------------------------------------------------- */

struct report {
	char *text;
	char **lines;
	size_t nlines;
};

static void report_free(struct report *r)
{
	free(r->lines);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

/* Show the whole report on stderr, to see why a comparison failed. */
static void dump(const struct report *r)
{
	print_error("---- report ----\n");
	for (size_t i = 0; i < r->nlines; i++)
		print_error("%3zu|%s\n", i, r->lines[i]);
	print_error("----------------\n");
}

/* Render P with options O into R (replacing what R held). */
static void render(struct report *r, const struct mt_profile *p,
		   const struct mt_text_opts *o)
{
	size_t size;
	FILE *f;

	report_free(r);
	f = open_memstream(&r->text, &size);

	assert_non_null(f);
	assert_int_equal(mt_write_text(f, p, o), 0);
	assert_int_equal(fclose(f), 0);
	/* The report ends with a newline; split it into lines. */
	assert_true(size > 0 && r->text[size - 1] == '\n');
	r->nlines = 0;
	for (size_t i = 0; i < size; i++)
		r->nlines += r->text[i] == '\n';
	r->lines = calloc(r->nlines ? r->nlines : 1, sizeof(*r->lines));
	assert_non_null(r->lines);
	char *line = r->text;

	for (size_t i = 0; i < r->nlines; i++) {
		char *nl = strchr(line, '\n');

		*nl = '\0';
		r->lines[i] = line;
		line = nl + 1;
	}
}

/* Index of the first line starting with PREFIX; fails the test if none. */
static size_t find_line(const struct report *r, const char *prefix)
{
	for (size_t i = 0; i < r->nlines; i++) {
		if (strncmp(r->lines[i], prefix, strlen(prefix)) == 0)
			return i;
	}
	dump(r);
	fail_msg("no line starts with \"%s\"", prefix);
	return 0;
}

static bool has_line_containing(const struct report *r, const char *s)
{
	for (size_t i = 0; i < r->nlines; i++) {
		if (strstr(r->lines[i], s))
			return true;
	}
	return false;
}

/* The lines of R from FIRST on must be EXPECTED (NULL-terminated). */
static void assert_lines(const struct report *r, size_t first,
			 const char *const *expected)
{
	for (size_t i = 0; expected[i]; i++) {
		if (first + i >= r->nlines ||
		    strcmp(r->lines[first + i], expected[i]) != 0) {
			dump(r);
			fail_msg("line %zu: expected \"%s\"", first + i,
				 expected[i]);
		}
	}
}

#define OPTS(...) (&(const struct mt_text_opts){ __VA_ARGS__ })
#define TABLE_HEAD "      flat  flat%   sum%        cum   cum%  function"

/* A profile and its rendering, freed by teardown even when a test fails. */
struct fixture {
	struct mt_profile p;
	struct report r;
};

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	report_free(&fx->r);
	mt_profile_free(&fx->p);
	free(fx);
	return 0;
}

/* --- tests -------------------------------------------------------------- */

static void test_header(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;
	uint64_t *c = p->sum.counters;

	snprintf(p->sum.target, sizeof(p->sum.target), "pid 1234 (leaks)");
	snprintf(p->sum.allocator, sizeof(p->sum.allocator),
		 "glibc /usr/lib/x86_64-linux-gnu/libc.so.6");
	p->sum.duration_s = 1.234;
	c[MT_CNT_EVENTS] = 24;
	c[MT_CNT_ALLOC_OBJECTS] = 12;
	c[MT_CNT_ALLOC_BYTES] = 5120;
	c[MT_CNT_FREE_OBJECTS] = 9;
	c[MT_CNT_FREE_BYTES] = 3584;
	c[MT_CNT_UNTRACKED_FREES] = 2;
	c[MT_CNT_FAILED_ALLOCS] = 7;
	for (int i = MT_CNT_DROP_ALLOCS_FULL; i <= MT_CNT_DROP_READ_ERRORS; i++)
		c[i] = (uint64_t)i - MT_CNT_DROP_ALLOCS_FULL + 1;
	c[MT_CNT_STACKS_TRUNCATED] = 8; /* not a drop: not in the 21 */

	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	const char *drops = "drops: 21 (allocs map full 1, stack map full 2, "
			    "stack errors 3, stats map full 4, "
			    "thread state unavailable 5, read errors 6)";
	const char *title = "memtrace " MEMTRACE_VERSION " heap profile";

	assert_lines(r, 0, (const char *const[]){
		title,
		"target: pid 1234 (leaks)",
		"allocator: glibc /usr/lib/x86_64-linux-gnu/libc.so.6",
		"duration: 1.23 s",
		"in use: 1536 bytes in 3 objects (1.50KiB)",
		"allocated: 5120 bytes in 12 objects (5.00KiB)",
		"freed: 3584 bytes in 9 objects (3.50KiB)",
		/* a profile made here has a timeline that saw nothing */
		"peak in use: 0 bytes at 0.00 s (0B)",
		"events: 24 allocator calls, 7 failed",
		"untracked frees: 2",
		drops,
		"truncated stacks: 8",
		"",
		"Showing top 0 of 0 functions by flat inuse_space, total 0B",
		TABLE_HEAD,
		"",
		"Top 0 stacks by inuse_space:",
		"",
		"Allocated by size class: none",
		NULL });
	assert_int_equal(r->nlines, 19);

	/* The parenthesised amounts follow the unit; exact counts do not. */
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .unit = MT_UNIT_B));
	assert_string_equal(r->lines[4], "in use: 1536 bytes in 3 objects (1536B)");
	assert_string_equal(r->lines[5],
			    "allocated: 5120 bytes in 12 objects (5120B)");

	/* The truncated stacks by reason, those met only, in enum order. */
	c[MT_CNT_TRUNC + MT_TRUNC_NO_TABLE] = 5;
	c[MT_CNT_TRUNC + MT_TRUNC_DEPTH] = 2;
	c[MT_CNT_TRUNC + MT_TRUNC_COPY_LOST] = 1;
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	assert_string_equal(r->lines[11],
			    "truncated stacks: 8 (no table 5, depth 2, copy lost 1)");
	for (int i = MT_CNT_TRUNC; i <= MT_CNT_TRUNC_LAST; i++)
		c[i] = 0;

	/* Sampled (-s): the rate and the samples, and no untracked frees
	 * (most frees are of unsampled blocks); a saved profile may not
	 * know how many samples it had. */
	p->sum.sample_bytes = 524288;
	c[MT_CNT_SAMPLES] = 42;
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	assert_string_equal(r->lines[4],
			    "sampling: one allocation per 524288 bytes on average "
			    "(Poisson); 42 allocations sampled; figures are estimates");
	assert_string_equal(r->lines[9], "events: 24 allocator calls, 7 failed");
	assert_string_equal(r->lines[10], drops);
	c[MT_CNT_SAMPLES] = 0;
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	assert_string_equal(r->lines[4],
			    "sampling: one allocation per 524288 bytes on average "
			    "(Poisson); figures are estimates");
}

static void test_flat_table(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	size_t i = find_line(r, "Showing ");

	assert_int_equal(i, 13);  /* after the header and one blank line */
	assert_lines(r, i, (const char *const[]){
		"Showing top 5 of 5 functions by flat inuse_space, total 1.95KiB",
		TABLE_HEAD,
		"     1000B 50.00% 50.00%      1000B 50.00%  leak_a /src/leaks.c:12",
		"      600B 30.00% 80.00%       900B 45.00%  leak_b /src/leaks.c:18",
		"      300B 15.00% 95.00%       300B 15.00%  helper /src/util.h:5",
		/* recursion counts once in cum */
		"      100B  5.00% 100.00%       100B  5.00%  recurse /src/leaks.c:48",
		/* both call sites of main are one function */
		"        0B  0.00% 100.00%    1.95KiB 100.00%  main /src/leaks.c:30",
		"",
		NULL });
	/* Functions with neither flat nor cum inuse_space are left out. */
	assert_false(has_line_containing(r, "zero_fn"));
	assert_false(has_line_containing(r, "libc.so.6"));
	assert_false(has_line_containing(r, "[unknown stack]"));
	/* No process section for a single process. */
	assert_false(has_line_containing(r, "Processes by"));
}

static void test_cum_order(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20, .cum = true));
	assert_lines(r, find_line(r, "Showing "), (const char *const[]){
		"Showing top 5 of 5 functions by cum inuse_space, total 1.95KiB",
		TABLE_HEAD,
		"        0B  0.00%  0.00%    1.95KiB 100.00%  main /src/leaks.c:30",
		"     1000B 50.00% 50.00%      1000B 50.00%  leak_a /src/leaks.c:12",
		"      600B 30.00% 80.00%       900B 45.00%  leak_b /src/leaks.c:18",
		"      300B 15.00% 95.00%       300B 15.00%  helper /src/util.h:5",
		"      100B  5.00% 100.00%       100B  5.00%  recurse /src/leaks.c:48",
		"",
		NULL });
}

static void test_top_n(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 2));
	size_t i = find_line(r, "Showing ");

	assert_lines(r, i, (const char *const[]){
		"Showing top 2 of 5 functions by flat inuse_space, total 1.95KiB",
		TABLE_HEAD,
		"     1000B 50.00% 50.00%      1000B 50.00%  leak_a /src/leaks.c:12",
		"      600B 30.00% 80.00%       900B 45.00%  leak_b /src/leaks.c:18",
		"",
		"Top 2 stacks by inuse_space:",
		"#1 1000B in 1 objects",
		"    leak_a  /src/leaks.c:14",
		"    main    /src/leaks.c:40",
		"#2 600B in 3 objects",
		"    leak_b  /src/leaks.c:22",
		"    main    /src/leaks.c:41",
		"",
		"Allocated by size class: none",
		NULL });
	assert_int_equal(r->nlines, i + 14);

	/* top_n <= 0 shows everything. */
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 0));
	assert_string_equal(r->lines[find_line(r, "Showing ")],
			    "Showing all 5 functions by flat inuse_space, total 1.95KiB");
	assert_true(has_line_containing(r, "Top 4 stacks by inuse_space:"));
}

static void test_stacks(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	size_t i = find_line(r, "Top ");

	assert_lines(r, i, (const char *const[]){
		"Top 4 stacks by inuse_space:",
		"#1 1000B in 1 objects",
		"    leak_a  /src/leaks.c:14",
		"    main    /src/leaks.c:40",
		"#2 600B in 3 objects",
		"    leak_b  /src/leaks.c:22",
		"    main    /src/leaks.c:41",
		"#3 300B in 3 objects",
		"    helper  /src/util.h:8 (inlined)",
		"    leak_b  /src/leaks.c:22",
		"    main    /src/leaks.c:41",
		"#4 100B in 1 objects",
		"    recurse  /src/leaks.c:52",
		"    recurse  /src/leaks.c:52",
		"    main     /src/leaks.c:40",
		"",
		"Allocated by size class: none",
		NULL });
	assert_int_equal(r->nlines, i + 17);
}

static void test_alloc_space_shows_unresolved(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_ALLOC_SPACE, .top_n = 20,
			    .unit = MT_UNIT_B));
	/* 1000 + 6000 + 300 + 100 + 20 + 50 + 10 */
	assert_string_equal(r->lines[find_line(r, "Showing ")],
			    "Showing top 8 of 8 functions by flat alloc_space, total 7480B");
	/* Frames without a source location have none in the table... */
	assert_lines(r, find_line(r, "     6000B"), (const char *const[]){
		"     6000B 80.21% 80.21%      6300B 84.22%  leak_b /src/leaks.c:18",
		"     1000B 13.37% 93.58%      1000B 13.37%  leak_a /src/leaks.c:12",
		"      300B  4.01% 97.59%       300B  4.01%  helper /src/util.h:5",
		"      100B  1.34% 98.93%       100B  1.34%  recurse /src/leaks.c:48",
		"       50B  0.67% 99.60%        50B  0.67%  libc.so.6+0x1234",
		"       20B  0.27% 99.87%        20B  0.27%  zero_fn /src/leaks.c:58",
		"       10B  0.13% 100.00%        10B  0.13%  [unknown stack]",
		"        0B  0.00% 100.00%      7470B 99.87%  main /src/leaks.c:30",
		"",
		"Top 7 stacks by alloc_space:",
		NULL });
	/* ...and their module (or nothing) in the stacks. */
	assert_lines(r, find_line(r, "#5 "), (const char *const[]){
		"#5 50B in 5 objects",
		"    libc.so.6+0x1234  [libc.so.6]",
		"    main              /src/leaks.c:40",
		"#6 20B in 2 objects",
		"    zero_fn  /src/leaks.c:60",
		"    main     /src/leaks.c:40",
		"#7 10B in 1 objects",
		"    [unknown stack]",
		NULL });
}

static void test_objects_metric(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_INUSE_OBJECTS, .top_n = 20));
	assert_lines(r, find_line(r, "Showing "), (const char *const[]){
		"Showing top 5 of 5 functions by flat inuse_objects, total 8",
		TABLE_HEAD,
		/* equal flat values are ordered by name */
		"         3 37.50% 37.50%          3 37.50%  helper /src/util.h:5",
		"         3 37.50% 75.00%          6 75.00%  leak_b /src/leaks.c:18",
		"         1 12.50% 87.50%          1 12.50%  leak_a /src/leaks.c:12",
		"         1 12.50% 100.00%          1 12.50%  recurse /src/leaks.c:48",
		"         0  0.00% 100.00%          8 100.00%  main /src/leaks.c:30",
		"",
		"Top 4 stacks by inuse_objects:",
		"#1 3 objects (600B)",
		"    leak_b  /src/leaks.c:22",
		"    main    /src/leaks.c:41",
		"#2 3 objects (300B)",
		NULL });
}

static void test_merged_stacks_and_processes(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	uint32_t leak = add_frame(p, "leak", "/src/a.c", 3, "/src/a.c", 1,
				  "/bin/a", false);
	uint32_t main = add_frame(p, "main", "/src/a.c", 9, "/src/a.c", 7,
				  "/bin/a", false);

	add_proc(p, 100, "leaks");
	add_proc(p, 200, "other");
	add_sample(p, 200, FRAMES(leak, main), 1, 500, 1, 500);
	add_sample(p, 100, FRAMES(leak, main), 1, 1000, 1, 1000);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	assert_lines(r, 13, (const char *const[]){
		"Processes by inuse_space:",
		"   1000B  pid 100 (leaks)",
		"    500B  pid 200 (other)",
		"",
		"Showing top 2 of 2 functions by flat inuse_space, total 1.46KiB",
		TABLE_HEAD,
		"   1.46KiB 100.00% 100.00%    1.46KiB 100.00%  leak /src/a.c:1",
		"        0B  0.00% 100.00%    1.46KiB 100.00%  main /src/a.c:7",
		"",
		/* identical frame lists are one stack, whatever the process */
		"Top 1 stacks by inuse_space:",
		"#1 1.46KiB in 2 objects",
		"    leak  /src/a.c:3",
		"    main  /src/a.c:9",
		"",
		"Allocated by size class: none",
		NULL });
	assert_int_equal(r->nlines, 28);
}

static void test_zero_total(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;

	uint32_t a = add_frame(p, "a", NULL, 0, NULL, 0, "/bin/x", false);
	uint32_t b = add_frame(p, "b", "/src/b.c", 4, NULL, 0, "/bin/x", false);

	add_sample(p, 1, FRAMES(a), 1, 100, 1, 100);
	add_sample(p, 1, FRAMES(b), 1, 100, -1, -100);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	assert_lines(r, find_line(r, "Showing "), (const char *const[]){
		"Showing top 2 of 2 functions by flat inuse_space, total 0B",
		TABLE_HEAD,
		"      100B  0.00%  0.00%       100B  0.00%  a",
		/* without decl_file, the frame's own file:line */
		"     -100B  0.00%  0.00%      -100B  0.00%  b /src/b.c:4",
		"",
		"Top 2 stacks by inuse_space:",
		"#1 100B in 1 objects",
		"    a  [x]",
		"#2 -100B in -1 objects",
		"    b  /src/b.c:4",
		NULL });
}

static void test_defaults_and_errors(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;
	char *buf = NULL;
	size_t size;
	FILE *f;

	build_leaks(p);
	/* NULL options: inuse_space, top 20, flat, automatic units. */
	render(r, p, NULL);
	assert_string_equal(r->lines[find_line(r, "Showing ")],
			    "Showing top 5 of 5 functions by flat inuse_space, total 1.95KiB");

	f = open_memstream(&buf, &size);
	assert_non_null(f);
	assert_int_equal(mt_write_text(f, p, OPTS(.metric = MT_NVALUES)),
			 -EINVAL);
	assert_int_equal(mt_write_text(f, NULL, NULL), -EINVAL);
	fclose(f);
	free(buf);
	mt_profile_free(p);
	/* Freeing twice (the first free zeroes) and NULL are harmless. */
	mt_profile_free(p);
	mt_profile_free(NULL);
}

/* The size histogram: a line per class that is not empty, the share of
 * the bytes with a bar of one '#' per 5%; --mmap's apart; not recorded. */
static void test_sizes(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;
	struct mt_size_count *heap = p->sum.sizes[MT_CAT_HEAP];
	struct mt_size_count *mmap = p->sum.sizes[MT_CAT_MMAP];

	heap[0] = (struct mt_size_count){ 2, 0 };            /* malloc(0) x 2 */
	heap[7] = (struct mt_size_count){ 10, 1000 };        /* [64,128) */
	heap[11] = (struct mt_size_count){ 2, 3000 };        /* [1K,2K) */
	heap[MT_SIZE_CLASSES - 1] = (struct mt_size_count){ 1, 6000 };
	mmap[13] = (struct mt_size_count){ 1, 4096 };        /* [4K,8K) */
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	size_t i = find_line(r, "Allocated by size class");

	assert_lines(r, i, (const char *const[]){
		"Allocated by size class:",
		"        size    objects        bytes   share",
		"       [0,1)          2           0B   0.00%",
		"    [64,128)         10        1000B  10.00%  ##",
		"     [1K,2K)          2      2.93KiB  30.00%  ######",
		"    [1G,inf)          1      5.86KiB  60.00%  ############",
		NULL });
	assert_int_equal(r->nlines, i + 6);

	/* --mmap: the mappings in a histogram of their own. */
	p->sum.mmap_traced = true;
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .unit = MT_UNIT_B));
	i = find_line(r, "Mapped by size class");
	assert_lines(r, i, (const char *const[]){
		"Mapped by size class (--mmap):",
		"        size    objects        bytes   share",
		"     [4K,8K)          1        4096B 100.00%  ####################",
		NULL });
	assert_int_equal(r->nlines, i + 3);
	assert_string_equal(r->lines[find_line(r, "    [1G,inf)")],
			    "    [1G,inf)          1        6000B  60.00%  ############");

	/* A profile without one says so, and shows no numbers. */
	p->sum.missing = MT_FACT_SIZES;
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 20));
	i = find_line(r, "Allocated by size class");
	assert_string_equal(r->lines[i], "Allocated by size class: not recorded");
	assert_int_equal(r->nlines, i + 1);
}

/* report --growth's series: 1000 x (point + 1) for the leak_a stack,
 * none for the others. */
static const int64_t *series_of(const void *ctx, const struct mt_sample *s)
{
	static int64_t v[12];
	const struct mt_profile *p = ctx;

	for (int i = 0; i < 12; i++)
		v[i] = 1000 * (i + 1);
	return strcmp(p->frames[s->frames[0]].function, "leak_a") == 0 ? v : NULL;
}

static void test_series(void **state)
{
	struct fixture *fx = *state;
	struct mt_profile *p = &fx->p;
	struct report *r = &fx->r;
	struct mt_text_series se = { 3, series_of, p };

	build_leaks(p);
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 2, .unit = MT_UNIT_B,
			  .series = &se));
	size_t i = find_line(r, "Top ");

	assert_string_equal(r->lines[i + 1], "#1 1000B in 1 objects; in each "
			    "profile: 1000B -> 2000B -> 3000B");
	assert_string_equal(r->lines[i + 4], "#2 600B in 3 objects");
	/* Objects: the metric's values, as counts. */
	render(r, p, OPTS(.metric = MT_INUSE_OBJECTS, .top_n = 3,
			  .unit = MT_UNIT_KIB, .series = &se));
	assert_true(has_line_containing(
		r, "#3 1 objects (0.98KiB); in each profile: 1000 -> 2000 -> 3000"));
	/* More than 8: the first, the last and 6 evenly between. */
	se.npoints = 12;
	render(r, p, OPTS(.metric = MT_INUSE_SPACE, .top_n = 1,
			  .unit = MT_UNIT_B, .series = &se));
	assert_string_equal(r->lines[find_line(r, "#1 ")],
			    "#1 1000B in 1 objects; in each profile: 1000B -> "
			    "3000B -> 4000B -> 6000B -> 7000B -> 9000B -> "
			    "10000B -> 12000B (8 of 12 profiles)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flat_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cum_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_top_n, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_space_shows_unresolved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_objects_metric, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merged_stacks_and_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_total, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults_and_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series, setup, teardown),
	};

	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
