// SPDX-License-Identifier: MIT
/*
 * test_http.c: the parts of --http that need no server: --http and
 * --http-allow values (net_addr.c), the Prometheus text of /metrics
 * (http_metrics.c, every line checked against the exposition format's
 * grammar and the values given), the snapshot ring (snapshot_ring.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_metrics.h"
#include "net_addr.h"
#include "snapshot_ring.h"

static void test_listen(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256], buf[64];

	(void)state;
	assert_int_equal(mt_listen_addr("6060", &ss, &len, err, sizeof(err)), 0);
	mt_addr_str((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1:6060");
	assert_int_equal(mt_listen_addr(":0", &ss, &len, err, sizeof(err)), 0);
	mt_addr_str((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1:0");
	assert_int_equal(mt_listen_addr("0.0.0.0:80", &ss, &len, err, sizeof(err)), 0);
	mt_addr_str((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, "0.0.0.0:80");
	assert_int_equal(mt_listen_addr("[::1]:9", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	mt_addr_str((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, "[::1]:9");
	/* Bad: no port, a port too large, an IPv6 address without brackets,
	 * a sign, trailing junk. */
	assert_int_equal(mt_listen_addr("127.0.0.1:", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(mt_listen_addr("65536", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(mt_listen_addr("::1:80", &ss, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "brackets"));
	assert_int_equal(mt_listen_addr("-1", &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(mt_listen_addr("80x", &ss, &len, err, sizeof(err)), -1);
}

static struct sockaddr_in v4(const char *s)
{
	struct sockaddr_in in = { .sin_family = AF_INET };

	assert_int_equal(inet_pton(AF_INET, s, &in.sin_addr), 1);
	return in;
}

static struct sockaddr_in6 v6(const char *s)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };

	assert_int_equal(inet_pton(AF_INET6, s, &in6.sin6_addr), 1);
	return in6;
}

static void test_cidrs(void **state)
{
	struct mt_cidrs l;
	char err[256];
	struct sockaddr_in a;
	struct sockaddr_in6 b;

	(void)state;
	assert_int_equal(mt_cidrs_parse("10.0.0.0/8,192.168.1.7,fd00::/8", &l, err,
					sizeof(err)), 0);
	assert_int_equal(l.n, 3);
	a = v4("10.200.3.4");
	assert_true(mt_cidrs_match(&l, (struct sockaddr *)&a));
	a = v4("11.0.0.1");
	assert_false(mt_cidrs_match(&l, (struct sockaddr *)&a));
	a = v4("192.168.1.7");
	assert_true(mt_cidrs_match(&l, (struct sockaddr *)&a));
	a = v4("192.168.1.8");
	assert_false(mt_cidrs_match(&l, (struct sockaddr *)&a));
	b = v6("fd12::1");
	assert_true(mt_cidrs_match(&l, (struct sockaddr *)&b));
	b = v6("fe80::1");
	assert_false(mt_cidrs_match(&l, (struct sockaddr *)&b));
	/* An IPv4 peer on a dual-stack socket. */
	b = v6("::ffff:10.1.2.3");
	assert_true(mt_cidrs_match(&l, (struct sockaddr *)&b));
	/* Prefixes not on a byte boundary. */
	assert_int_equal(mt_cidrs_parse("172.16.0.0/12", &l, err, sizeof(err)), 0);
	a = v4("172.31.255.255");
	assert_true(mt_cidrs_match(&l, (struct sockaddr *)&a));
	a = v4("172.32.0.0");
	assert_false(mt_cidrs_match(&l, (struct sockaddr *)&a));
	assert_int_equal(mt_cidrs_parse("0.0.0.0/0", &l, err, sizeof(err)), 0);
	a = v4("8.8.8.8");
	assert_true(mt_cidrs_match(&l, (struct sockaddr *)&a));
	/* Bad. */
	assert_int_equal(mt_cidrs_parse("10.0.0.0/33", &l, err, sizeof(err)), -1);
	assert_int_equal(mt_cidrs_parse("::/129", &l, err, sizeof(err)), -1);
	assert_int_equal(mt_cidrs_parse("", &l, err, sizeof(err)), -1);
	assert_int_equal(mt_cidrs_parse("10.0.0.0/8,,", &l, err, sizeof(err)), -1);
	assert_int_equal(mt_cidrs_parse("host", &l, err, sizeof(err)), -1);
	assert_int_equal(mt_cidrs_parse("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", &l, err,
					sizeof(err)), -1);
}

/* The value of the sample line NAME{LABELS} in TEXT, or -1. */
static long long sample(const char *text, const char *line_start)
{
	const char *p = text;
	size_t n = strlen(line_start);

	while (p && *p) {
		if (!strncmp(p, line_start, n) && p[n] == ' ')
			return atoll(p + n + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* Every line a comment (# HELP / # TYPE) or NAME[{LABELS}] VALUE. */
static void check_grammar(const char *text)
{
	const char *p = text;

	while (*p) {
		const char *end = strchr(p, '\n');
		char line[512];
		size_t n;

		assert_non_null(end); /* the text ends with a newline */
		n = (size_t)(end - p);
		assert_true(n < sizeof(line));
		memcpy(line, p, n);
		line[n] = '\0';
		if (line[0] == '#') {
			assert_true(!strncmp(line, "# HELP memtrace_", 16) ||
				    !strncmp(line, "# TYPE memtrace_", 16));
		} else {
			char *sp = strrchr(line, ' ');
			char *brace = strchr(line, '{');
			double v;

			assert_non_null(sp);
			assert_true(!strncmp(line, "memtrace_", 9));
			assert_int_equal(sscanf(sp + 1, "%lf", &v), 1);
			if (brace)
				assert_true(sp[-1] == '}');
		}
		p = end + 1;
	}
}

static void test_metrics(void **state)
{
	struct mt_tl_series series[2] = {
		{ .pid = 42, .comm = "a\"b\\c", .peak = 9000,
		  .last = { .inuse_bytes = 1234, .inuse_objects = 5,
			    .alloc_bytes = 7000, .alloc_objects = 70,
			    .free_bytes = 5766, .free_objects = 65 } },
		{ .pid = 43, .comm = "gone", .gone = true,
		  .last = { .inuse_bytes = 1 } },
	};
	struct mt_tl_data d = { .series = series, .n = 2 };
	struct mt_http_metrics m = { .data = &d, .elapsed_s = 12.5 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	m.counters[MT_CNT_EVENTS] = 135;
	m.counters[MT_CNT_DROP_STACKS_FULL] = 3;
	m.counters[MT_CNT_STACKS_TRUNCATED] = 3;
	m.counters[MT_CNT_TRUNC + MT_TRUNC_NO_TABLE] = 2;
	m.counters[MT_CNT_TRUNC + MT_TRUNC_BAD_STACK] = 1;
	assert_non_null(f);
	assert_int_equal(mt_http_write_metrics(f, &m), 0);
	fclose(f);
	check_grammar(text);
	/* The label value escaped as the format says. */
	assert_int_equal(sample(text, "memtrace_heap_inuse_bytes{pid=\"42\",comm=\"a\\\"b\\\\c\"}"), 1234);
	assert_int_equal(sample(text, "memtrace_heap_inuse_objects{pid=\"42\",comm=\"a\\\"b\\\\c\"}"), 5);
	assert_int_equal(sample(text, "memtrace_heap_peak_inuse_bytes{pid=\"42\",comm=\"a\\\"b\\\\c\"}"), 9000);
	assert_int_equal(sample(text, "memtrace_heap_allocated_bytes_total{pid=\"42\",comm=\"a\\\"b\\\\c\"}"), 7000);
	assert_int_equal(sample(text, "memtrace_heap_freed_objects_total{pid=\"42\",comm=\"a\\\"b\\\\c\"}"), 65);
	/* An exited process is not a series any more. */
	assert_null(strstr(text, "pid=\"43\""));
	assert_int_equal(sample(text, "memtrace_allocator_calls_total"), 135);
	assert_int_equal(sample(text, "memtrace_drops_total{reason=\"stacks_map_full\"}"), 3);
	assert_int_equal(sample(text, "memtrace_drops_total{reason=\"allocs_map_full\"}"), 0);
	/* One metric, a series by reason (0 for those not met). */
	assert_int_equal(sample(text, "memtrace_truncated_stacks_total{reason=\"no_table\"}"), 2);
	assert_int_equal(sample(text, "memtrace_truncated_stacks_total{reason=\"bad_stack\"}"), 1);
	assert_int_equal(sample(text, "memtrace_truncated_stacks_total{reason=\"depth\"}"), 0);
	assert_int_equal(sample(text, "memtrace_truncated_stacks_total{reason=\"copy_lost\"}"), 0);
	assert_int_equal(sample(text, "memtrace_truncated_stacks_total"), -1);
	assert_int_equal(sample(text, "memtrace_processes"), 1);
	assert_non_null(strstr(text, "# TYPE memtrace_heap_allocated_bytes_total counter\n"));
	assert_non_null(strstr(text, "# TYPE memtrace_heap_inuse_bytes gauge\n"));
	free(text);
	/* No timeline: the totals alone, still well-formed. */
	m.data = NULL;
	text = NULL;
	f = open_memstream(&text, &len);
	assert_int_equal(mt_http_write_metrics(f, &m), 0);
	fclose(f);
	check_grammar(text);
	assert_int_equal(sample(text, "memtrace_processes"), 0);
	free(text);
}

static void add(struct mt_ring *r, const char *why, unsigned char byte)
{
	struct mt_ring_entry e = { .len = 3 };

	e.pb = malloc(3);
	assert_non_null(e.pb);
	memset(e.pb, byte, 3);
	snprintf(e.why, sizeof(e.why), "%s", why);
	mt_ring_add(r, &e);
	assert_null(e.pb); /* the ring's now */
}

static void test_ring(void **state)
{
	struct mt_ring_entry list[MT_RING_SNAPSHOTS], e;
	struct mt_ring r;

	(void)state;
	mt_ring_init(&r);
	assert_int_equal(mt_ring_list(&r, list), 0);
	assert_int_equal(mt_ring_get(&r, 1, &e), -ENOENT);
	for (unsigned i = 1; i <= MT_RING_SNAPSHOTS + 5; i++)
		add(&r, i % 2 ? "interval" : "button", (unsigned char)i);
	/* The last 32: 6 to 37, oldest first. */
	assert_int_equal(mt_ring_list(&r, list), MT_RING_SNAPSHOTS);
	assert_int_equal(list[0].seq, 6);
	assert_int_equal(list[MT_RING_SNAPSHOTS - 1].seq, MT_RING_SNAPSHOTS + 5);
	assert_null(list[0].pb);
	assert_int_equal(mt_ring_get(&r, 5, &e), -ENOENT);
	assert_int_equal(mt_ring_get(&r, 0, &e), -ENOENT);
	assert_int_equal(mt_ring_get(&r, 99, &e), -ENOENT);
	assert_int_equal(mt_ring_get(&r, 7, &e), 0);
	assert_int_equal(e.seq, 7);
	assert_string_equal(e.why, "interval");
	assert_int_equal(e.len, 3);
	assert_int_equal(e.pb[0], 7);
	assert_int_equal(e.pb[2], 7);
	free(e.pb);
	mt_ring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_cidrs),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
