/* SPDX-License-Identifier: MIT */
/*
 * test_options.c: the command line (src/loader/options/options.c).  Values with
 * their units (times, bytes), the outputs each format gets (-o's suffix,
 * formats without a file), the target (-p, -- CMD, system-wide), report
 * mode (one file, several with --growth, -p picking a process), and the
 * refusals: each one line beginning "memtrace: " naming the option, with
 * the return value -1.  Parsed several times in one process, in both
 * modes, as a test does (tracing stops at the command, report permutes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

static char err[4096];

/* mt_options_parse of "memtrace ARGS..." (NULL-terminated), its stderr
 * into err; the words stay in ARGV (the options point into it). */
static int parse_v(struct mt_options *o, char **argv, va_list ap)
{
	FILE *tmp = tmpfile();
	int argc = 0, saved, ret;
	const char *a;
	size_t n;

	assert_non_null(tmp);
	argv[argc++] = "memtrace";
	while ((a = va_arg(ap, const char *)) != NULL)
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fileno(tmp), 2), 2);
	ret = mt_options_parse(argc, argv, o);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, sizeof(err) - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return ret;
}

static char *words[64];

static int parse(struct mt_options *o, ...)
{
	va_list ap;
	int ret;

	va_start(ap, o);
	ret = parse_v(o, words, ap);
	va_end(ap);
	return ret;
}

/* Refused: -1 and one line "memtrace: ..." that holds MENTION. */
static void refused(const char *mention, ...)
{
	struct mt_options o;
	va_list ap;
	int ret;

	va_start(ap, mention);
	ret = parse_v(&o, words, ap);
	va_end(ap);
	if (ret != -1 || strncmp(err, "memtrace: ", 10) != 0 ||
	    !strstr(err, mention) || strchr(err, '\n') != err + strlen(err) - 1)
		fail_msg("expected -1 and one line mentioning '%s'; got %d and '%s'",
			 mention, ret, err);
}

static void test_command(void **state)
{
	struct mt_options o;

	(void)state;
	assert_int_equal(parse(&o, "-n", "5", "--", "prog", "-p", "3", NULL), 0);
	assert_ptr_equal(o.cmd, &words[4]);
	assert_string_equal(o.cmd[0], "prog");
	assert_string_equal(o.cmd[1], "-p"); /* the command's, not ours */
	assert_int_equal(o.pid, 0);
	assert_int_equal(o.top_n, 5);
	assert_true(o.follow);
	assert_false(o.system_wide);
	assert_false(o.report_mode);
	/* The default report: text on standard output. */
	assert_int_equal(o.noutputs, 1);
	assert_int_equal(o.outputs[0].fmt, MT_FMT_TEXT);
	assert_null(o.outputs[0].path);
	/* The first non-option is the command, without "--" too. */
	assert_int_equal(parse(&o, "--no-follow", "prog", "-d", "1", NULL), 0);
	assert_string_equal(o.cmd[0], "prog");
	assert_string_equal(o.cmd[1], "-d");
	assert_true(o.duration == 0);
	assert_false(o.follow);
	/* Neither: system-wide. */
	assert_int_equal(parse(&o, "-d", "1", NULL), 0);
	assert_true(o.system_wide);
	assert_null(o.cmd);
}

static void test_values(void **state)
{
	struct mt_options o;

	(void)state;
	assert_int_equal(parse(&o, "-p", "4242", "-d", "1.5", "-i", "500ms",
			       "--count", "3", "--keep", "0", "--min-age",
			       "250ms", "--top", "7", "-s", "512K", NULL), 0);
	assert_int_equal(o.pid, 4242);
	assert_true(o.duration == 1.5);
	assert_true(o.interval == 0.5);
	assert_int_equal(o.count, 3);
	assert_int_equal(o.keep, 0);
	assert_int_equal(o.min_age_ns, 250000000);
	assert_int_equal(o.top_n, 7);
	assert_int_equal(o.sample_bytes, 524288);
	assert_int_equal(parse(&o, "-d", "2m", "-s", "4G", "--timeline-interval",
			       "0", "-i", "1h", NULL), 0);
	assert_true(o.duration == 120);
	assert_true(o.interval == 3600);
	assert_int_equal(o.sample_bytes, 1ULL << 32);
	assert_true(o.timeline_interval == 0);
	assert_int_equal(parse(&o, "-s", "3", "--unit", "KiB", "--metric",
			       "alloc_objects", "--unwind", "fp", NULL), 0);
	assert_int_equal(o.sample_bytes, 3);
	assert_int_equal(o.unit, MT_UNIT_KIB);
	assert_int_equal(o.metric, MT_ALLOC_OBJECTS);
	assert_int_equal(o.unwind, MT_UNWIND_FP);
}

static void test_outputs(void **state)
{
	struct mt_options o;

	(void)state;
	/* -o's suffix chooses the default report's format. */
	assert_int_equal(parse(&o, "-o", "out.pb.gz", "-p", "1", NULL), 0);
	assert_int_equal(o.noutputs, 1);
	assert_int_equal(o.outputs[0].fmt, MT_FMT_PPROF);
	assert_string_equal(o.outputs[0].path, "out.pb.gz");
	assert_int_equal(parse(&o, "-o", "f.svg", "-p", "1", NULL), 0);
	assert_int_equal(o.outputs[0].fmt, MT_FMT_SVG);
	/* A format without a file goes to -o, and is then the only one. */
	assert_int_equal(parse(&o, "--folded", "-o", "f.txt", "-p", "1", NULL), 0);
	assert_int_equal(o.noutputs, 1);
	assert_int_equal(o.outputs[0].fmt, MT_FMT_FOLDED);
	assert_string_equal(o.outputs[0].path, "f.txt");
	/* Every format with its file, and -o's text report besides. */
	assert_int_equal(parse(&o, "--text=a.txt", "--pprof", "b.pb.gz", "-o",
			       "c.txt", "-p", "1", NULL), 0);
	assert_int_equal(o.noutputs, 3);
	assert_int_equal(o.outputs[0].fmt, MT_FMT_TEXT);
	assert_string_equal(o.outputs[0].path, "a.txt");
	assert_int_equal(o.outputs[1].fmt, MT_FMT_PPROF);
	assert_string_equal(o.outputs[1].path, "b.pb.gz");
	assert_int_equal(o.outputs[2].fmt, MT_FMT_TEXT);
	assert_string_equal(o.outputs[2].path, "c.txt");
	/* Only formats with their files: no default report added. */
	assert_int_equal(parse(&o, "--pprof", "b.pb.gz", "-p", "1", NULL), 0);
	assert_int_equal(o.noutputs, 1);
}

static void test_report_mode(void **state)
{
	struct mt_options o;

	(void)state;
	/* Options after the files too (report permutes). */
	assert_int_equal(parse(&o, "report", "a.pb.gz", "-n", "3", "-p", "77",
			       NULL), 0);
	assert_true(o.report_mode);
	assert_string_equal(o.input, "a.pb.gz");
	assert_int_equal(o.ninputs, 1);
	assert_int_equal(o.top_n, 3);
	assert_int_equal(o.only_pid, 77);
	assert_int_equal(o.pid, 0);
	assert_int_equal(parse(&o, "report", "--growth", "a", "b", "c", NULL), 0);
	assert_true(o.growth);
	assert_int_equal(o.ninputs, 3);
	assert_string_equal(o.inputs[0], "a");
	assert_string_equal(o.inputs[2], "c");
	/* And tracing again, after a report's parse. */
	assert_int_equal(parse(&o, "prog", "-n", "4", NULL), 0);
	assert_string_equal(o.cmd[0], "prog");
	assert_int_equal(o.top_n, 20);
}

static void test_refused(void **state)
{
	(void)state;
	refused("--pid", "-p", "0", NULL);
	refused("--pid", "-p", "12x", NULL);
	refused("--duration", "-d", "-1", NULL);
	refused("--duration", "-d", "0", NULL);
	refused("--duration", "-d", "5x", NULL);
	refused("--interval", "-i", "5ms", NULL);
	refused("--sample-bytes", "-s", "0", NULL);
	refused("--sample-bytes", "-s", "5G", NULL);
	refused("--sample-bytes", "-s", "-1", NULL);
	refused("--sample-bytes", "-s", "1.5M", NULL);
	refused("--sample-bytes", "-s", "18446744073709551617", NULL);
	refused("--top", "-n", "0", NULL);
	refused("--keep", "--keep", "-1", NULL);
	refused("--count", "--count", "99999999999999999999", NULL);
	refused("--metric", "--metric", "bytes", NULL);
	refused("--unwind", "--unwind", "dwarf", NULL);
	refused("--allocator", "--allocator", "lib/x.so", NULL);
	refused("--symbol-prefix", "--symbol-prefix", "je-", NULL);
	refused("--timeline-interval", "--timeline-interval", "2h", NULL);
	refused("--at", "--at", "never", NULL);
	refused("'--frobnicate'", "--frobnicate", NULL);
	refused("'--pprof'", "--pprof", "--", "./prog", NULL);
	refused("-p PID or -- CMD", "-p", "1", "--", "prog", NULL);
	refused("--count needs -i", "--count", "3", "-p", "1", NULL);
	refused("--as-root", "--as-root", "-p", "1", NULL);
	refused("'--pprof'", "-p", "1", "--pprof", NULL);
	refused("--http-allow needs --http", "--http-allow", "127.0.0.1/32", NULL);
	refused("--timeline needs the timeline", "--timeline", "t.csv",
		"--timeline-interval", "0", "-p", "1", NULL);
	refused("profile file", "report", NULL);
	refused("several with --growth", "report", "a", "b", NULL);
	refused("two profile files", "report", "a", "--growth", NULL);
	refused("-d is for tracing", "report", "a", "-d", "1", NULL);
	refused("--base is for report", "--base", "a", "-p", "1", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_report_mode),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
