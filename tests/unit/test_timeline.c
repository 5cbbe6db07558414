/* SPDX-License-Identifier: MIT */
/*
 * test_timeline.c: the timeline's report side: points kept within bounds
 * with exact maxima (timeline_data.c), the summary's cells, the header's
 * peak line and sparkline (timeline_text.c), the CSV file and its
 * rollover (timeline_csv.c), the SVG (timeline_svg.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "timeline_csv.h"
#include "timeline_data.h"
#include "timeline_svg.h"
#include "timeline_text.h"

static struct mt_tl_values vals(uint64_t inuse, uint64_t max)
{
	return (struct mt_tl_values){ .inuse_bytes = inuse, .max_inuse_bytes = max };
}

/* Many points: at most MT_TL_MAX_POINTS kept, every interval counted
 * once, the largest kept exactly, with its time. */
static void test_bounded(void **state)
{
	struct mt_tl_data d = { .interval = 0.1 };
	uint64_t max = 0, ticks = 0;
	size_t idx;

	(void)state;
	assert_int_equal(mt_tl_series_new(&d, 42, "prog", &idx), 0);
	for (int i = 1; i <= 5000; i++) {
		struct mt_tl_values v = vals((uint64_t)i, (uint64_t)i + (i == 1234 ? 1000000 : 0));

		assert_int_equal(mt_tl_point_add(&d, idx, i * 0.1, &v), 0);
		assert_true(d.series[idx].n <= MT_TL_MAX_POINTS);
	}
	const struct mt_tl_series *s = &d.series[idx];

	for (size_t i = 0; i < s->n; i++) {
		ticks += s->pts[i].ticks;
		if (s->pts[i].max > max)
			max = s->pts[i].max;
		if (i)
			assert_true(s->pts[i].t_ms > s->pts[i - 1].t_ms);
	}
	assert_int_equal(ticks, 5000);
	assert_int_equal(max, 1234 + 1000000);
	assert_int_equal(s->peak, 1234 + 1000000);
	assert_true(s->peak_t > 123.39 && s->peak_t < 123.41);
	assert_int_equal(s->pts[s->n - 1].t_ms, 500000);
	assert_int_equal(s->pts[s->n - 1].inuse, 5000);
	assert_true(s->n > MT_TL_MAX_POINTS / 2);
	mt_tl_data_free(&d);
}

/* Cells: each the largest in use of its span (carried between points),
 * blank where the process was not alive; the largest peak first. */
static void test_summary(void **state)
{
	struct mt_tl_data d = { .interval = 0.1 };
	struct mt_tl_summary sum;
	size_t a, b;

	(void)state;
	assert_int_equal(mt_tl_series_new(&d, 1, "a", &a), 0);
	assert_int_equal(mt_tl_series_new(&d, 2, "b", &b), 0);
	for (int i = 1; i <= 10; i++) {
		struct mt_tl_values va = vals(10, i == 5 ? 90 : 10);
		struct mt_tl_values vb = vals(100, 100);

		assert_int_equal(mt_tl_point_add(&d, a, i * 0.1, &va), 0);
		if (i >= 3 && i <= 6)  /* b: seen at 0.3 s, gone after 0.6 s */
			assert_int_equal(mt_tl_point_add(&d, b, i * 0.1, &vb), 0);
	}
	d.series[b].gone = true;
	mt_tl_summarize(&d, 1.0, &sum);
	assert_int_equal(sum.nprocs, 2);
	assert_int_equal(sum.nkept, 2);
	assert_int_equal(sum.ncells, 10);
	assert_true(sum.cell_s > 0.0999 && sum.cell_s < 0.1001);
	/* b first: its peak (100) is the larger. */
	assert_int_equal(sum.procs[0].pid, 2);
	assert_int_equal(sum.procs[0].bytes, 100);
	assert_int_equal(sum.procs[1].pid, 1);
	assert_int_equal(sum.procs[1].bytes, 90);
	assert_true(sum.procs[1].t > 0.499 && sum.procs[1].t < 0.501);
	for (int c = 0; c < 10; c++) {
		assert_int_equal(sum.procs[1].cells[c], c == 4 ? 90 : 10);
		assert_int_equal(sum.procs[0].cells[c],
				 c >= 2 && c <= 5 ? 100 : MT_TL_CELL_NONE);
	}
	/* A longer run: 60 cells, each the largest of its points. */
	mt_tl_summarize(&d, 100.0, &sum);
	assert_int_equal(sum.ncells, MT_TL_CELLS);
	assert_int_equal(sum.procs[1].cells[0], 90);
	assert_int_equal(sum.procs[1].cells[1], 10);  /* carried */
	mt_tl_data_free(&d);
}

static void test_sparkline(void **state)
{
	const uint64_t cells[] = { 0, 1, 4, 7, 8, MT_TL_CELL_NONE };
	char buf[64];

	(void)state;
	assert_string_equal(mt_tl_sparkline(buf, sizeof(buf), cells, 6, 8),
			    "▁▁▄▇█ ");
	/* Too small a buffer: whole characters only, terminated. */
	assert_string_equal(mt_tl_sparkline(buf, 8, cells, 6, 8), "▁▁");
}

/* The header's lines: one process, several, not recorded. */
static void test_header(void **state)
{
	struct mt_summary s;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.timeline.nprocs = s.timeline.nkept = 1;
	s.timeline.ncells = 3;
	s.timeline.cell_s = 0.1;
	s.timeline.procs[0] = (struct mt_tl_peak){ .pid = 7, .comm = "p",
		.bytes = 12582912, .t = 0.92, .cells = { 0, 12582912, 4194304 } };
	f = open_memstream(&text, &len);
	mt_tl_write_header(f, &s, MT_UNIT_AUTO);
	mt_tl_write_procs(f, &s, MT_UNIT_AUTO);  /* one process: nothing */
	fclose(f);
	assert_string_equal(text,
		"peak in use: 12582912 bytes at 0.92 s (12.00MiB)\n"
		"in use over time: |▁█▃| (3 cells of 0.10 s; █ 12.00MiB)\n");
	free(text);

	s.timeline.nprocs = 11;
	s.timeline.nkept = 2;
	s.timeline.procs[1] = (struct mt_tl_peak){ .pid = 8, .comm = "q",
		.bytes = 1024, .t = 1.5, .cells = { MT_TL_CELL_NONE, 512, 1024 } };
	s.counters[MT_CNT_TIMELINE_FULL] = 3;
	f = open_memstream(&text, &len);
	mt_tl_write_header(f, &s, MT_UNIT_AUTO);
	mt_tl_write_procs(f, &s, MT_UNIT_AUTO);
	fclose(f);
	assert_string_equal(text,
		"peak in use: 12582912 bytes at 0.92 s (12.00MiB), pid 7 (p), the largest of 11 processes' (below)\n"
		"timeline: 3 allocator events left out, of processes past the 32768 it keeps at once\n"
		"Peak in use by process (in use over time: 3 cells of 0.10 s):\n"
		"  12.00MiB at     0.92 s  pid 7 (p)  |▁█▃|\n"
		"   1.00KiB at     1.50 s  pid 8 (q)  | ▄█|\n"
		"... and 9 more processes\n"
		"\n");
	free(text);

	s.missing = MT_FACT_TIMELINE;
	f = open_memstream(&text, &len);
	mt_tl_write_header(f, &s, MT_UNIT_AUTO);
	mt_tl_write_procs(f, &s, MT_UNIT_AUTO);
	fclose(f);
	assert_string_equal(text, "peak in use: not recorded\n");
	free(text);
}

static char dir[64];

static const char *in_dir(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static char *slurp(const char *path, long *size)
{
	FILE *f = fopen(path, "r");
	char *buf;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)*size + 1);
	assert_int_equal(fread(buf, 1, (size_t)*size, f), (size_t)*size);
	fclose(f);
	return buf;
}

#define HEADER "t_s,pid,comm,inuse_bytes,inuse_objects,alloc_bytes," \
	       "alloc_objects,free_bytes,free_objects,max_inuse_bytes\n"

/* Rows as they come (a name with a comma and a quote quoted), rolled
 * over past the size: FILE.1 .. FILE.3 kept, each with the header. */
static void test_csv(void **state)
{
	struct mt_tl_values v = { 1, 2, 3, 4, 5, 6, 7 };
	struct mt_tl_csv c;
	char *text;
	long size;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/mt-tl.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mt_tl_csv_open(&c, in_dir("t.csv"), 4096), 0);
	assert_int_equal(mt_tl_csv_add(&c, 0.1, 9, "a,b\"c", &v), 0);
	assert_int_equal(mt_tl_csv_flush(&c), 0);
	/* Written at the flush, before the file is closed (tail -f). */
	text = slurp(in_dir("t.csv"), &size);
	assert_non_null(text);
	assert_string_equal(text, HEADER "0.100000,9,\"a,b\"\"c\",1,2,3,4,5,6,7\n");
	free(text);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(mt_tl_csv_add(&c, i, 9, "p", &v), 0);
		if (i % 10 == 9)
			assert_int_equal(mt_tl_csv_flush(&c), 0);
	}
	assert_int_equal(mt_tl_csv_close(&c), 0);
	for (int k = 0; k <= MT_TL_CSV_KEEP + 1; k++) {
		char name[32];

		snprintf(name, sizeof(name), k ? "t.csv.%d" : "t.csv", k);
		text = slurp(in_dir(name), &size);
		if (k > MT_TL_CSV_KEEP) {
			assert_null(text);
			continue;
		}
		assert_non_null(text);
		assert_true(size <= 4096);
		assert_memory_equal(text, HEADER, strlen(HEADER));
		if (k == 0) /* the last rows are in FILE */
			assert_non_null(strstr(text, "\n999.000000,9,p,"));
		free(text);
		unlink(in_dir(name));
	}
	rmdir(dir);
}

static void test_svg(void **state)
{
	struct mt_tl_data d = { .interval = 0.1 };
	struct mt_tl_values v = vals(100, 300);
	char *text = NULL;
	size_t len = 0, idx;
	FILE *f;

	(void)state;
	assert_int_equal(mt_tl_series_new(&d, 5, "<x&y>", &idx), 0);
	assert_int_equal(mt_tl_point_add(&d, idx, 0.1, &v), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(mt_tl_write_svg(f, &d), 0);
	fclose(f);
	assert_non_null(strstr(text, "pid 5 (&lt;x&amp;y&gt;): peak in use 300 bytes"));
	assert_null(strstr(text, "<x&y>"));
	assert_non_null(strstr(text, "data-peak-bytes=\"300\""));
	assert_non_null(strstr(text, "http://www.w3.org/2000/svg"));
	assert_null(strstr(text, "href"));  /* nothing external */
	assert_true(len > 7 && strcmp(text + len - 7, "</svg>\n") == 0);
	free(text);
	mt_tl_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_sparkline),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_svg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
