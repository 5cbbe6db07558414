/* SPDX-License-Identifier: MIT */
/*
 * test_view.c: pprof's views (src/report/model/view.c) on profiles built in
 * memory: which samples stay, which frames, the examples of pprof's own
 * ShowFrom comment, an inlined location trimmed, tag forms and ranges.
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
#include "view.h"

/* Frames by name: "A" .. ; an "i" suffix marks one inlined into the next. */
static uint32_t frame(struct mt_profile *p, const char *name)
{
	size_t len = strlen(name);
	bool inl = len > 1 && name[len - 1] == 'i';
	struct mt_frame *v;

	for (size_t i = 0; i < p->nframes; i++)
		if (strncmp(p->frames[i].function, name, inl ? len - 1 : len) == 0 &&
		    strlen(p->frames[i].function) == (inl ? len - 1 : len) &&
		    p->frames[i].inlined == inl)
			return (uint32_t)i;
	v = reallocarray(p->frames, p->nframes + 1, sizeof(*v));
	assert_non_null(v);
	p->frames = v;
	v[p->nframes] = (struct mt_frame){
		.function = strndup(name, inl ? len - 1 : len),
		.file = strdup("/src/x.c"),
		.line = 1,
		.module = strdup(name[0] == 'L' ? "/lib/libz.so" : "/bin/prog"),
		.inlined = inl,
	};
	return (uint32_t)p->nframes++;
}

/* A sample of PID, its frames given root first ("A B C"), value V. */
static void sample(struct mt_profile *p, uint32_t pid, const char *stack,
		   int64_t v)
{
	struct mt_sample *s = reallocarray(p->samples, p->nsamples + 1,
					   sizeof(*s));
	char *copy = strdup(stack), *save = NULL, *names[32];
	size_t n = 0;

	assert_non_null(s);
	p->samples = s;
	s = &s[p->nsamples++];
	*s = (struct mt_sample){ .pid = pid };
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		names[n++] = t;
	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	s->nframes = n;
	for (size_t i = 0; i < n; i++) /* leaf first */
		s->frames[i] = frame(p, names[n - 1 - i]);
	for (int m = 0; m < MT_NVALUES; m++)
		s->v[m] = v;
	free(copy);
}

static void setup_procs(struct mt_profile *p)
{
	p->procs = calloc(2, sizeof(*p->procs));
	assert_non_null(p->procs);
	p->procs[0].pid = 10;
	strcpy(p->procs[0].comm, "server");
	p->procs[1].pid = 20;
	strcpy(p->procs[1].comm, "worker");
	p->nprocs = 2;
}

/* The samples of P as "A B C=V;..." (root first; inlined as "Ci"). */
static char *render(const struct mt_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[i];

		for (size_t k = s->nframes; k-- > 0;) {
			const struct mt_frame *fr = &p->frames[s->frames[k]];

			fprintf(f, "%s%s%s", k + 1 < s->nframes ? " " : "",
				fr->function, fr->inlined ? "i" : "");
		}
		fprintf(f, "=%lld;", (long long)s->v[0]);
	}
	fclose(f);
	return buf;
}

static void free_profile(struct mt_profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++)
		free(p->samples[i].frames);
	for (size_t i = 0; i < p->nframes; i++) {
		free(p->frames[i].function);
		free(p->frames[i].file);
		free(p->frames[i].module);
	}
	free(p->samples);
	free(p->frames);
	free(p->procs);
	free(p->blocks);
}

/* The samples of STACKS ("A B=1;C D=2" per pid 10, 20 alternately) after
 * the view of KIND EXPR. */
static void expect(enum mt_view_kind kind, const char *expr,
		   const char *const *stacks, size_t n, const char *want)
{
	struct mt_profile p = { 0 };
	struct mt_view_spec s = { 0 };
	char *got;

	setup_procs(&p);
	for (size_t i = 0; i < n; i++)
		sample(&p, i % 2 ? 20 : 10, stacks[i], (int64_t)(i + 1));
	s.expr[kind] = expr;
	assert_int_equal(mt_profile_view(&p, &s), 0);
	got = render(&p);
	assert_string_equal(got, want);
	free(got);
	free_profile(&p);
}

static const char *const base[] = { "main A B", "main C", "main A D", "main Li" };
#define NBASE (sizeof(base) / sizeof(base[0]))

static void test_focus_ignore(void **state)
{
	(void)state;
	expect(MT_VIEW_FOCUS, "A", base, NBASE, "main A B=1;main A D=3;");
	expect(MT_VIEW_IGNORE, "^B$|C", base, NBASE, "main A D=3;main Li=4;");
	/* Files and modules match too. */
	expect(MT_VIEW_FOCUS, "libz", base, NBASE, "main Li=4;");
	expect(MT_VIEW_FOCUS, "x\\.c$", base, NBASE,
	       "main A B=1;main C=2;main A D=3;main Li=4;");
}

static void test_hide_show(void **state)
{
	static const char *const st[] = { "A", "main A B" };

	(void)state;
	expect(MT_VIEW_HIDE, "^A$|main", base, NBASE, "B=1;C=2;D=3;Li=4;");
	/* A stack left with no frame is dropped. */
	expect(MT_VIEW_HIDE, "A", st, 2, "main B=2;");
	expect(MT_VIEW_SHOW, "A|B", base, NBASE, "A B=1;A=3;");
}

static void test_show_from(void **state)
{
	/* pprof's ShowFrom comment: [A, B, C, B] with A the root. */
	static const char *const abcb[] = { "A B C B" };

	(void)state;
	expect(MT_VIEW_SHOW_FROM, "^A$", abcb, 1, "A B C B=1;");
	expect(MT_VIEW_SHOW_FROM, "^B$", abcb, 1, "B C B=1;");
	expect(MT_VIEW_SHOW_FROM, "^C$", abcb, 1, "C B=1;");
	expect(MT_VIEW_SHOW_FROM, "^D$", abcb, 1, "");
}

static void test_show_from_inlined(void **state)
{
	/* One location: E inlined into F (its caller, a real frame). */
	static const char *const st[] = { "main F Ei G", "main F Ei" };

	(void)state;
	/* pprof keeps, of a matching location, its lines up to the match:
	 * F (the caller in the same location) goes. */
	expect(MT_VIEW_SHOW_FROM, "^E$", st, 2, "Ei G=1;Ei=2;");
	/* The outermost line of the location matches: all of it stays. */
	expect(MT_VIEW_SHOW_FROM, "^F$", st, 2, "F Ei G=1;F Ei=2;");
}

static void test_tags(void **state)
{
	(void)state;
	/* base: pids 10 (server), 20 (worker), 10, 20. */
	expect(MT_VIEW_TAGFOCUS, "comm=work", base, NBASE, "main C=2;main Li=4;");
	expect(MT_VIEW_TAGFOCUS, "comm=nope,serv", base, NBASE, "main A B=1;main A D=3;");
	/* Without a key: each expression must match "comm:NAME". */
	expect(MT_VIEW_TAGFOCUS, "comm:s", base, NBASE, "main A B=1;main A D=3;");
	expect(MT_VIEW_TAGFOCUS, "comm:s,nope", base, NBASE, "");
	expect(MT_VIEW_TAGFOCUS, "pid=20", base, NBASE, "main C=2;main Li=4;");
	expect(MT_VIEW_TAGFOCUS, "15:", base, NBASE, "main C=2;main Li=4;");
	expect(MT_VIEW_TAGFOCUS, ":15", base, NBASE, "main A B=1;main A D=3;");
	expect(MT_VIEW_TAGFOCUS, "pid=5:10", base, NBASE, "main A B=1;main A D=3;");
	/* A unit: pprof scales pid (whose unit, "pid", it does not know)
	 * to it unchanged: 10kb is 10. */
	expect(MT_VIEW_TAGFOCUS, "pid=10kb", base, NBASE, "main A B=1;main A D=3;");
	expect(MT_VIEW_TAGIGNORE, "comm=server", base, NBASE, "main C=2;main Li=4;");
}

static void test_blocks_and_totals(void **state)
{
	struct mt_profile p = { 0 };
	struct mt_view_spec s = { 0 };

	(void)state;
	setup_procs(&p);
	sample(&p, 10, "main A", 100);
	sample(&p, 10, "main B", 7);
	p.blocks = calloc(3, sizeof(*p.blocks));
	assert_non_null(p.blocks);
	p.blocks[0] = (struct mt_block){ .pid = 10, .size = 100, .sample = 0 };
	p.blocks[1] = (struct mt_block){ .pid = 10, .size = 7, .sample = 1 };
	p.blocks[2] = (struct mt_block){ .pid = 10, .size = 1, .sample = SIZE_MAX };
	p.nblocks = 3;
	s.expr[MT_VIEW_FOCUS] = "B";
	s.expr[MT_VIEW_HIDE] = "main";
	assert_int_equal(mt_profile_view(&p, &s), 0);
	assert_int_equal(p.nsamples, 1);
	assert_int_equal(p.nblocks, 2);
	assert_int_equal(p.blocks[0].sample, 0);
	assert_int_equal(p.blocks[0].size, 7);
	assert_int_equal(p.sum.counters[MT_CNT_ALLOC_BYTES], 7);
	assert_string_equal(p.sum.view, "focus=B hide=main");
	free_profile(&p);
}

static void test_check(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(mt_view_check(MT_VIEW_FOCUS, "a(", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--focus"));
	assert_int_equal(mt_view_check(MT_VIEW_TAGFOCUS, "comm=[", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--tagfocus"));
	assert_int_equal(mt_view_check(MT_VIEW_SHOW_FROM, "^main$", err, sizeof(err)), 0);
	assert_int_equal(mt_view_check(MT_VIEW_TAGFOCUS, "1:2", err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_focus_ignore),
		cmocka_unit_test(test_hide_show),
		cmocka_unit_test(test_show_from),
		cmocka_unit_test(test_show_from_inlined),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_blocks_and_totals),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
