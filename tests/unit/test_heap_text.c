/* SPDX-License-Identifier: MIT */
/*
 * test_heap_text.c: cmocka tests of the text heap profile readers
 * (src/report/readers/heap_text.c, tcmalloc_read.c, jemalloc_read.c, go_text_read.c,
 * maps_text.c)
 * on profiles written here in their documented formats (synthetic: the
 * integration tests read real ones, made by the allocators): pprof's
 * unbiasing rule for sampled profiles, the MAPPED_LIBRARIES section, the
 * allocator's frames dropped, and damaged input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "go_text_read.h"
#include "heap_text.h"
#include "jemalloc_read.h"
#include "tcmalloc_read.h"

/* pprof's scaleHeapSample, written out: 1 / (1 - e^-(avg/period)). */
static void test_unbias(void **state)
{
	int64_t c = 2, s = 2048;

	(void)state;
	/* avg 1024 = period: scale 1/(1-e^-1) = 1.5819767... */
	mt_heap_unbias(&c, &s, 1024);
	assert_int_equal(c, 3);     /* 3.16 */
	assert_int_equal(s, 3239);  /* 3239.888 */
	/* Blocks far larger than the period are all sampled. */
	c = 1, s = 1 << 30;
	mt_heap_unbias(&c, &s, 1024);
	assert_int_equal(c, 1);
	assert_int_equal(s, 1 << 30);
	/* Period 1 (every allocation) and 0 counts: unchanged. */
	c = 7, s = 7;
	mt_heap_unbias(&c, &s, 1);
	assert_int_equal(c, 7);
	c = 0, s = 0;
	mt_heap_unbias(&c, &s, 512);
	assert_int_equal(s, 0);
}

#define MAPS \
	"MAPPED_LIBRARIES:\n" \
	"10000-11000 r--p 00000000 00:00 1 /nonexistent/prog\n" \
	"11000-12000 r-xp 00001000 00:00 1 /nonexistent/prog\n" \
	"7f0000000000-7f0000010000 r-xp 00000000 00:00 2 /nonexistent/libjemalloc.so.2\n" \
	"7f0000100000-7f0000110000 r-xp 00002000 00:00 3 /nonexistent/libtcmalloc.so.4\n" \
	"7f0000200000-7f0000210000 rw-p 00000000 00:00 0 \n" \
	"7ffff0000000-7ffff0001000 rw-p 00000000 00:00 0 [stack]\n"

static void test_tcmalloc_sampled(void **state)
{
	static const char text[] =
		"heap profile:    3:   3072 [    5:   5120] @ heap_v2/1024\n"
		"     2:     2048 [     4:     4096] @ 0x7f0000100010 0x11010 0x11020\n"
		"     1:     1024 [     1:     1024] @ 0x11030\n"
		"\n" MAPS;
	struct mt_raw_profile raw;
	char err[128];

	(void)state;
	assert_true(mt_tcmalloc_is(text, sizeof(text) - 1));
	assert_false(mt_jemalloc_is(text, sizeof(text) - 1));
	assert_int_equal(mt_tcmalloc_parse(text, strlen(text), &raw, err, sizeof(err)), 0);
	assert_int_equal(raw.sum.sample_bytes, 1024);
	assert_int_equal(raw.nstacks, 2);
	/* Each pair scaled by its own average, 1024: x 1.58198. */
	assert_int_equal(raw.stacks[0].alloc_objects, 6);      /* 4 -> 6.33 */
	assert_int_equal(raw.stacks[0].alloc_bytes, 6479);     /* 6479.77 */
	assert_int_equal(raw.stacks[0].alloc_objects - raw.stacks[0].free_objects, 3);
	assert_int_equal(raw.stacks[0].alloc_bytes - raw.stacks[0].free_bytes, 3239);
	/* tcmalloc's own frame is gone; the program's stay. */
	assert_int_equal(raw.stacks[0].nips, 2);
	assert_int_equal(raw.stacks[0].ips[0], 0x11010);
	/* The modules: the executable files only, with their text range. */
	assert_int_equal(raw.nprocs, 1);
	assert_int_equal(raw.procs[0].nmods, 3);
	assert_string_equal(raw.procs[0].mods[0].path, "/nonexistent/prog");
	assert_int_equal(raw.procs[0].mods[0].start, 0x10000);
	assert_int_equal(raw.procs[0].mods[0].text_start, 0x11000);
	assert_int_equal(raw.procs[0].mods[0].text_offset, 0x1000);
	mt_raw_profile_free(&raw);
}

static void test_jemalloc(void **state)
{
	static const char text[] =
		"heap_v2/1\n"
		"  t*: 3: 96 [0: 0]\n"
		"  t0: 3: 96 [0: 0]\n"
		"@ 0x7f0000000010 0x7f0000000020 0x11010 0x11020\n"
		"  t*: 2: 64 [0: 0]\n"
		"  t0: 2: 64 [0: 0]\n"
		"@ 0x11030\n"
		"  t*: 1: 32 [5: 160]\n"
		"  t1: 1: 32 [5: 160]\n"
		"\n" MAPS;
	struct mt_raw_profile raw;
	char err[128];

	(void)state;
	assert_true(mt_jemalloc_is(text, sizeof(text) - 1));
	assert_int_equal(mt_jemalloc_parse(text, strlen(text), &raw, err, sizeof(err)), 0);
	assert_int_equal(raw.sum.sample_bytes, 0);  /* heap_v2/1: exact */
	assert_int_equal(raw.nstacks, 2);
	/* No accumulated figures (prof_accum off): in use counts as allocated. */
	assert_int_equal(raw.stacks[0].alloc_objects, 2);
	assert_int_equal(raw.stacks[0].alloc_bytes, 64);
	assert_int_equal(raw.stacks[0].free_objects, 0);
	/* Both of jemalloc's frames dropped. */
	assert_int_equal(raw.stacks[0].nips, 2);
	assert_int_equal(raw.stacks[0].ips[0], 0x11010);
	assert_int_equal(raw.stacks[1].alloc_objects, 5);
	assert_int_equal(raw.stacks[1].free_bytes, 128);
	mt_raw_profile_free(&raw);
}

/*
 * A program whose file name contains the allocator's keeps its frames:
 * the allocator is the library named libtcmalloc... (its soname, or its
 * file name when the file is not here), not any name containing it.
 */
static void test_program_named_like_allocator(void **state)
{
	static const char tc[] =
		"heap profile:    1:   1024 [    1:   1024] @ heap_v2/1\n"
		"     1:     1024 [     1:     1024] @ 0x7f0000100010 0x11010 0x11020\n"
		"\nMAPPED_LIBRARIES:\n"
		"11000-12000 r-xp 00001000 00:00 1 /nonexistent/my_tcmalloc_app\n"
		"7f0000100000-7f0000110000 r-xp 00002000 00:00 3 /nonexistent/libtcmalloc_minimal.so.4\n";
	static const char je[] =
		"heap_v2/1\n"
		"  t*: 1: 32 [0: 0]\n"
		"@ 0x7f0000000010 0x11010 0x11020\n"
		"  t*: 1: 32 [0: 0]\n"
		"\nMAPPED_LIBRARIES:\n"
		"11000-12000 r-xp 00001000 00:00 1 /nonexistent/jemalloc-server\n"
		"7f0000000000-7f0000010000 r-xp 00000000 00:00 2 /nonexistent/libjemalloc.so.2\n";
	struct mt_raw_profile raw;
	char err[128];

	(void)state;
	assert_int_equal(mt_tcmalloc_parse(tc, sizeof(tc) - 1, &raw, err, sizeof(err)), 0);
	assert_int_equal(raw.nstacks, 1);
	assert_int_equal(raw.stacks[0].nips, 2);
	assert_int_equal(raw.stacks[0].ips[0], 0x11010);
	mt_raw_profile_free(&raw);
	assert_int_equal(mt_jemalloc_parse(je, sizeof(je) - 1, &raw, err, sizeof(err)), 0);
	assert_int_equal(raw.nstacks, 1);
	assert_int_equal(raw.stacks[0].nips, 2);
	assert_int_equal(raw.stacks[0].ips[0], 0x11010);
	mt_raw_profile_free(&raw);
}

/* LEN bytes of TEXT (NULs included) fail with CODE and an error naming WHAT. */
static void expect_code(const char *text, size_t len, bool tc, int code,
			const char *what)
{
	struct mt_raw_profile raw;
	char err[128] = "";
	int ret = tc ? mt_tcmalloc_parse(text, len, &raw, err, sizeof(err))
		     : mt_jemalloc_parse(text, len, &raw, err, sizeof(err));

	if (ret != code)
		fail_msg("%d, not %d, for \"%s\" (%s)", ret, code, text, err);
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	mt_raw_profile_free(&raw);
}

static void expect_error(const char *text, bool tc, const char *what)
{
	expect_code(text, strlen(text), tc, -EINVAL, what);
}

static void test_damaged(void **state)
{
	(void)state;
	expect_error("heap profile: 1: 1 [1: 1] @ heap_v2/x\n", true, "line 1");
	expect_error("heap profile: 1: 1 [1: 1] @ heapprofile\n 1: 1 [1: 1] @ 0x1 junk\n",
		     true, "line 2");
	expect_error("heap profile: 1: 1 [1: 1] @ heapprofile\n 0: 5 [1: 5] @ 0x1\n",
		     true, "line 2");
	expect_error("heap profile: 1: 1 [1: 1] @ heapprofile\n 1: 5 [1: 5] @ "
		     "0x1ffffffffffffffffffff\n", true, "line 2");
	expect_error("heap_v2/\n", false, "line 1");
	expect_error("heap_v2/4\nnonsense\n", false, "line 2");
	expect_error("heap_v2/4\n@ 0x1\n  t*: 1: 1 [x: 1]\n", false, "line 3");
}

/* Figures no profile can hold: refused, with the line, never wrapped. */
static void test_impossible(void **state)
{
	static const char nul[] = "heap_v2/1\n@ 0x10\0 junk\n  t*: 1: 8 [1: 8]\n";
	static const char tc_nul[] = "heap profile: 1: 1 [1: 1] @ heapprofile\n"
				     " 1: 8 [1: 8]\0 @ 0x10\n";
	static const char huge[] =
		"heap profile: 1: 1 [1: 1] @ heap_v2/9223372036854775807\n"
		" 1: 1 [1: 1] @ 0x10\n";

	(void)state;
	/* Periods: negative (strtoull's wrap), 2^64, past int64_t. */
	expect_error("heap_v2/-1\n@ 0x10\n  t*: 1: 1 [1: 1]\n", false, "line 1");
	expect_error("heap_v2/18446744073709551616\n", false, "line 1");
	expect_error("heap_v2/9223372036854775808\n", false, "line 1");
	expect_error("heap_v2/8 junk\n", false, "line 1");
	expect_error("heap profile: 1: 1 [1: 1] @ heap_v2/-5\n", true, "line 1");
	expect_error("heap profile: 1: 1 [1: 1] @ heap_v2/0\n", true, "line 1");
	/* Figures past 64 bits; an address that is not one. */
	expect_error("heap profile: 1: 1 [1: 1] @ heapprofile\n"
		     " 1: 18446744073709551616 [1: 18446744073709551616] @ 0x10\n",
		     true, "line 2");
	expect_error("heap_v2/1\n@ 0x10\n  t*: 1: 99999999999999999999 [1: 1]\n",
		     false, "line 3");
	expect_error("heap profile: 1: 1 [1: 1] @ heapprofile\n 1: 8 [1: 8] @ 0x-1\n",
		     true, "line 2");
	expect_error("heap profile: 1: 1 [1: 1] @ heapprofile\n 1: 8 [1: 8] @ "
		     "0x10000000000000000\n", true, "line 2");
	/* Unbiased by a period of 2^63-1, one byte is 2^63 of them. */
	expect_code(huge, strlen(huge), true, -ERANGE, "too large");
	/* A NUL inside a line makes it malformed, at the end of none. */
	expect_code(nul, sizeof(nul) - 1, false, -EINVAL, "line 2");
	expect_code(tc_nul, sizeof(tc_nul) - 1, true, -EINVAL, "line 2");
}

/* mt_go_text_parse of a string. */
static int go_parse(const char *text, struct mt_profile *p, char *err,
		    size_t errlen)
{
	return mt_go_text_parse(text, strlen(text), p, err, errlen);
}

static void test_go(void **state)
{
	static const char text[] =
		"heap profile: 2: 1024 [3: 1536] @ heap/1024\n"
		"2: 1024 [3: 1536] @ 0x4b4111 0x4b4112 0x461181\n"
		"#\t0x4b4110\tmain.newBlock+0x50\t./main.go:35\n"
		"#\t0x4b4111\tmain.allocSmall+0x51\t./main.go:41\n"
		"\n"
		"0: 0 [0: 0] @ 0x1\n"
		"\n"
		"# runtime.MemStats\n"
		"# Alloc = 1\n";
	struct mt_profile p;
	const struct mt_frame *f;
	char err[128];

	(void)state;
	assert_true(mt_go_text_is(text, sizeof(text) - 1));
	/* tcmalloc's header is not Go's (the dispatcher asks Go first). */
	assert_false(mt_go_text_is("heap profile: 1: 1 [1: 1] @ heapprofile\n", 40));
	assert_false(mt_go_text_is("heap profile: 1: 1 [1: 1] @ heap_v2/8\n", 38));
	assert_int_equal(mt_go_text_parse(text, strlen(text), &p, err, sizeof(err)), 0);
	/* heap/1024: one sample per 512 bytes; avg 512: x 1.58198. */
	assert_int_equal(p.sum.sample_bytes, 512);
	assert_int_equal(p.nsamples, 1);  /* the all-zero record is left out */
	assert_int_equal(p.samples[0].v[MT_INUSE_OBJECTS], 3);   /* 3.16 */
	assert_int_equal(p.samples[0].v[MT_INUSE_SPACE], 1619);  /* 1619.94 */
	assert_int_equal(p.samples[0].v[MT_ALLOC_OBJECTS], 4);   /* 4.75 */
	assert_int_equal(p.samples[0].nframes, 2);
	f = &p.frames[p.samples[0].frames[0]];
	assert_string_equal(f->function, "main.newBlock");
	assert_string_equal(f->file, "./main.go");
	assert_int_equal(f->line, 35);
	assert_int_equal(f->addr, 0x4b4111);
	assert_string_equal(p.frames[p.samples[0].frames[1]].function,
			    "main.allocSmall");
	mt_profile_free(&p);

	assert_int_equal(go_parse("heap profile: 1: 1 [1: 1] @ heap/x\n",
					  &p, err, sizeof(err)), -EINVAL);
	mt_profile_free(&p);
	assert_int_equal(go_parse("heap profile: 1: 1 [1: 1] @ heap/2\n"
					  "#\tjunk\n", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2"));
	mt_profile_free(&p);
	assert_int_equal(go_parse("heap profile: 1: 1 [1: 1] @ heap/2\n"
					  "1: 8 [0: 0] @ 0x1\n", &p, err, sizeof(err)),
			 -EINVAL);
	mt_profile_free(&p);
}

/* Go's text: the rate and the figures checked as the others'. */
static void test_go_impossible(void **state)
{
	static const char *const bad[] = {
		"heap profile: 1: 1 [1: 1] @ heap/-2\n",
		"heap profile: 1: 1 [1: 1] @ heap/18446744073709551616\n",
		"heap profile: 1: 1 [1: 1] @ heap/0\n",
		"heap profile: 1: 1 [1: 1] @ heap/2\n"
		"1: 18446744073709551616 [1: 18446744073709551616] @ 0x10\n",
		"heap profile: 1: 1 [1: 1] @ heap/2\n"
		"1: 8 [1: 8] @ 0x10\n#\t0x-1\tmain.f\t/m.go:1\n",
		"heap profile: 1: 1 [1: 1] @ heap/9223372036854775806\n"
		"3: 3 [3: 3] @ 0x10\n",
	};
	static const char *const why[] = {
		"line 1", "line 1", "line 1", "line 2", "line 3", "too large",
	};
	struct mt_profile p;
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = go_parse(bad[i], &p, err, sizeof(err));

		if (ret >= 0 || !strstr(err, why[i]))
			fail_msg("%d \"%s\" for \"%s\"", ret, err, bad[i]);
		mt_profile_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unbias),
		cmocka_unit_test(test_tcmalloc_sampled),
		cmocka_unit_test(test_jemalloc),
		cmocka_unit_test(test_program_named_like_allocator),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_impossible),
		cmocka_unit_test(test_go),
		cmocka_unit_test(test_go_impossible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
