// SPDX-License-Identifier: MIT
/*
 * test_http_guard.c: who a request of --http must come from
 * (http_guard.c): Host values for a loopback, a wildcard and a unix
 * socket, cross-site Origins, the bearer token and its file; unix:PATH
 * as --http's value (net_addr.c).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "http_guard.h"
#include "net_addr.h"

static void guard_for(struct mt_http_guard *g, const char *listen,
		      const char *hosts)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256];

	assert_int_equal(mt_listen_addr(listen, &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(mt_guard_init(g, (struct sockaddr *)&ss, hosts, listen), 0);
}

static void test_host_loopback(void **state)
{
	struct mt_http_guard g;

	(void)state;
	guard_for(&g, "127.0.0.1:6060", "prof.example,Other.Example.");
	assert_true(mt_guard_host_ok(&g, "127.0.0.1:6060"));
	assert_true(mt_guard_host_ok(&g, "127.0.0.1"));
	assert_true(mt_guard_host_ok(&g, "localhost:6060"));
	assert_true(mt_guard_host_ok(&g, "LocalHost.:6060"));
	assert_true(mt_guard_host_ok(&g, "prof.example:6060"));
	assert_true(mt_guard_host_ok(&g, "other.example"));
	assert_true(mt_guard_host_ok(&g, NULL)); /* HTTP/1.0 */
	/* Another name, port or address; malformed values. */
	assert_false(mt_guard_host_ok(&g, "evil.example:6060"));
	assert_false(mt_guard_host_ok(&g, "localhost.evil.example:6060"));
	assert_false(mt_guard_host_ok(&g, "127.0.0.1:6061"));
	assert_false(mt_guard_host_ok(&g, "127.0.0.2:6060"));
	assert_false(mt_guard_host_ok(&g, "[::1]:6060"));
	assert_false(mt_guard_host_ok(&g, "127.0.0.1:6060x"));
	assert_false(mt_guard_host_ok(&g, "127.0.0.1:"));
	assert_false(mt_guard_host_ok(&g, ":6060"));
	assert_false(mt_guard_host_ok(&g, ""));
	assert_false(mt_guard_host_ok(&g, "[127.0.0.1]:6060"));
	assert_false(mt_guard_host_ok(&g, "2130706433:6060"));
	mt_guard_free(&g);
}

static void test_host_wildcard(void **state)
{
	struct mt_http_guard g;
	char name[300];

	(void)state;
	guard_for(&g, "[::]:80", NULL);
	assert_true(mt_guard_host_ok(&g, "[::1]:80"));
	assert_true(mt_guard_host_ok(&g, "[fe80::1]"));
	assert_true(mt_guard_host_ok(&g, "192.0.2.7:80"));
	assert_true(mt_guard_host_ok(&g, "localhost"));
	assert_false(mt_guard_host_ok(&g, "[::1]:81"));
	assert_false(mt_guard_host_ok(&g, "[::1"));
	assert_false(mt_guard_host_ok(&g, "[::1]x"));
	assert_false(mt_guard_host_ok(&g, "evil.example"));
	if (gethostname(name, sizeof(name)) == 0 && strcmp(name, "localhost")) {
		strcat(name, ":80");
		assert_true(mt_guard_host_ok(&g, name));
	}
	mt_guard_free(&g);
	/* A specific non-loopback address: no localhost. */
	guard_for(&g, "192.0.2.1:80", NULL);
	assert_true(mt_guard_host_ok(&g, "192.0.2.1"));
	assert_false(mt_guard_host_ok(&g, "localhost"));
	assert_false(mt_guard_host_ok(&g, "192.0.2.2"));
	mt_guard_free(&g);
	/* A unix socket: anything. */
	guard_for(&g, "unix:/tmp/x.sock", NULL);
	assert_true(mt_guard_host_ok(&g, "evil.example"));
	mt_guard_free(&g);
}

static void test_origin(void **state)
{
	(void)state;
	assert_true(mt_guard_origin_ok(NULL, NULL, "127.0.0.1:6060"));
	assert_true(mt_guard_origin_ok("http://127.0.0.1:6060", NULL, "127.0.0.1:6060"));
	assert_true(mt_guard_origin_ok("HTTP://LOCALHOST:6060", "same-origin", "localhost:6060"));
	assert_true(mt_guard_origin_ok(NULL, "none", "127.0.0.1:6060"));
	assert_false(mt_guard_origin_ok("http://evil.example", NULL, "127.0.0.1:6060"));
	assert_false(mt_guard_origin_ok("null", NULL, "127.0.0.1:6060"));
	assert_false(mt_guard_origin_ok("http://127.0.0.1:6061", NULL, "127.0.0.1:6060"));
	assert_false(mt_guard_origin_ok("https://127.0.0.1:6060", NULL, "127.0.0.1:6060"));
	assert_false(mt_guard_origin_ok("http://127.0.0.1:6060", NULL, NULL));
	assert_false(mt_guard_origin_ok(NULL, "cross-site", "127.0.0.1:6060"));
	assert_false(mt_guard_origin_ok(NULL, "same-site", "127.0.0.1:6060"));
}

static void test_token(void **state)
{
	struct mt_http_guard g;
	char dir[] = "/tmp/mt-guard.XXXXXX", path[64], err[256];
	FILE *f;

	(void)state;
	guard_for(&g, "127.0.0.1:6060", NULL);
	/* No token: anything goes. */
	assert_true(mt_guard_bearer_ok(&g, NULL));
	assert_true(mt_guard_token_eq(&g, NULL));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/token", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0123456789abcdefXYZ \n\n", f);
	fclose(f);
	chmod(path, 0640);
	assert_int_equal(mt_guard_read_token(&g, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0640"));
	chmod(path, 0600);
	assert_int_equal(mt_guard_read_token(&g, path, err, sizeof(err)), 0);
	assert_int_equal(g.token_len, 19);
	assert_true(mt_guard_bearer_ok(&g, "Bearer 0123456789abcdefXYZ"));
	assert_true(mt_guard_bearer_ok(&g, "bearer   0123456789abcdefXYZ "));
	assert_true(mt_guard_token_eq(&g, "0123456789abcdefXYZ"));
	assert_false(mt_guard_bearer_ok(&g, NULL));
	assert_false(mt_guard_bearer_ok(&g, "Bearer 0123456789abcdefXY"));
	assert_false(mt_guard_bearer_ok(&g, "Bearer 0123456789abcdefXYZZ"));
	assert_false(mt_guard_bearer_ok(&g, "Bearer 0123456789abcdefXYz"));
	assert_false(mt_guard_bearer_ok(&g, "Basic 0123456789abcdefXYZ"));
	assert_false(mt_guard_bearer_ok(&g, "Bearer"));
	assert_false(mt_guard_token_eq(&g, ""));
	assert_false(mt_guard_token_eq(&g, NULL));
	/* Short, with a space inside, not a regular file. */
	f = fopen(path, "w");
	fputs("short\n", f);
	fclose(f);
	assert_int_equal(mt_guard_read_token(&g, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "16"));
	f = fopen(path, "w");
	fputs("0123456789 abcdefXYZ\n", f);
	fclose(f);
	assert_int_equal(mt_guard_read_token(&g, path, err, sizeof(err)), -1);
	assert_int_equal(mt_guard_read_token(&g, dir, err, sizeof(err)), -1);
	unlink(path);
	rmdir(dir);
	mt_guard_free(&g);
}

static void test_unix_addr(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256], buf[160], longp[200];

	(void)state;
	assert_int_equal(mt_listen_addr("unix:/run/mt.sock", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_UNIX);
	assert_string_equal(((struct sockaddr_un *)&ss)->sun_path, "/run/mt.sock");
	mt_addr_str((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, "unix:/run/mt.sock");
	assert_int_equal(mt_listen_addr("unix:", &ss, &len, err, sizeof(err)), -1);
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	memcpy(longp, "unix:", 5);
	assert_int_equal(mt_listen_addr(longp, &ss, &len, err, sizeof(err)), -1);
	assert_int_equal(mt_listen_addr("[::]:1", &ss, &len, err, sizeof(err)), 0);
	assert_true(mt_addr_is_any((struct sockaddr *)&ss));
	assert_false(mt_addr_is_loopback((struct sockaddr *)&ss));
	assert_int_equal(mt_listen_addr("127.9.9.9:1", &ss, &len, err, sizeof(err)), 0);
	assert_true(mt_addr_is_loopback((struct sockaddr *)&ss));
	assert_false(mt_addr_is_any((struct sockaddr *)&ss));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_loopback),
		cmocka_unit_test(test_host_wildcard),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_unix_addr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
