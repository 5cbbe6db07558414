/* SPDX-License-Identifier: MIT */
/*
 * test_go_text.c: cmocka tests of Go's legacy text heap profile as
 * memtrace writes it (src/report/writers/go_text_write.c, what --http serves at
 * /debug/pprof/heap?debug=1) read back by go_text_read.c: values, frames
 * with and without names (Go's "#\t0xPC" alone), names with spaces (C++),
 * inlined frames sharing their caller's address.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_text_read.h"
#include "go_text_write.h"

static char *write_text(const struct mt_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(mt_go_text_write(f, p), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_round_trip(void **state)
{
	struct mt_frame frames[] = {
		/* 0: inlined into 1, at 1's address */
		{ .function = "leaf_inl", .file = "a.c", .line = 3, .addr = 0x1011,
		  .inlined = true },
		{ .function = "ns::Mid::run(int, char const*)", .file = "b.cc", .line = 7,
		  .addr = 0x1011 },
		{ .function = "prog+0x2a0", .module = "/bin/prog", .addr = 0x22a1,
		  .unresolved = true },
		{ .function = "main", .addr = 0x3001 },
	};
	uint32_t s0[] = { 0, 1, 2, 3 }, s1[] = { 3 }, s2[] = { 2 };
	struct mt_sample samples[] = {
		{ .nframes = 4, .frames = s0, .v = { 5, 500, 2, 200 } },
		{ .nframes = 1, .frames = s1, .v = { 0, 0, 0, 0 } },  /* left out */
		{ .nframes = 1, .frames = s2, .v = { 1, 64, 1, 64 } },
	};
	struct mt_profile p = { .frames = frames, .nframes = 4,
				.samples = samples, .nsamples = 3 };
	struct mt_profile q;
	const struct mt_frame *f;
	char err[128];
	char *text = write_text(&p);

	(void)state;

	assert_non_null(strstr(text, "heap profile: 3: 264 [6: 564] @ heap/2\n"));
	assert_non_null(strstr(text, "2: 200 [5: 500] @ 0x1011 0x22a1 0x3001\n"
				     "#\t0x1010\tleaf_inl\ta.c:3\n"
				     "#\t0x1010\tns::Mid::run(int, char const*)\tb.cc:7\n"
				     "#\t0x22a0\n"
				     "#\t0x3000\tmain\n\n"));
	assert_true(mt_go_text_is(text, strlen(text)));
	assert_int_equal(mt_go_text_parse(text, strlen(text), &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.sample_bytes, 0);  /* heap/2: not scaled */
	assert_int_equal(q.nsamples, 2);
	assert_memory_equal(q.samples[0].v, samples[0].v, sizeof(samples[0].v));
	assert_memory_equal(q.samples[1].v, samples[2].v, sizeof(samples[2].v));
	assert_int_equal(q.samples[0].nframes, 4);
	f = &q.frames[q.samples[0].frames[1]];
	assert_string_equal(f->function, "ns::Mid::run(int, char const*)");
	assert_string_equal(f->file, "b.cc");
	assert_int_equal(f->line, 7);
	assert_int_equal(f->addr, 0x1011);
	f = &q.frames[q.samples[0].frames[2]];
	assert_true(f->unresolved);
	assert_string_equal(f->function, "[unknown]+0x22a0");
	assert_int_equal(f->addr, 0x22a1);
	f = &q.frames[q.samples[0].frames[3]];
	assert_string_equal(f->function, "main");
	assert_null(f->file);
	mt_profile_free(&q);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
