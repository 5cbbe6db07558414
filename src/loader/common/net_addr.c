// SPDX-License-Identifier: MIT
/* net_addr.c: listen addresses and CIDR blocks (net_addr.h). */
#include "net_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/un.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"

static int fail(char *err, size_t len, const char *what, const char *s)
{
	snprintf(err, len, "%s: '%s'", what, s);
	return -1;
}

/* A port, 0 to 65535, or a prefix length up to MAX. */
static int parse_port(const char *s, unsigned max, unsigned *port)
{
	unsigned long v;

	if (mt_parse_decimal(s, max, &v))
		return -1;
	*port = (unsigned)v;
	return 0;
}

/* HOST (no brackets) and PORT into SS. */
static int resolve(const char *host, unsigned port,
		   struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL;

	if (getaddrinfo(host, NULL, &hints, &res) || !res)
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	else
		return -1;
	return 0;
}

/* "unix:PATH" into SS. */
static int unix_addr(const char *s, struct sockaddr_storage *ss,
		     socklen_t *len, char *err, size_t errlen)
{
	struct sockaddr_un *un = (struct sockaddr_un *)ss;
	const char *path = s + 5;
	size_t n = strlen(path);

	if (!n)
		return fail(err, errlen, "expected unix:PATH, e.g. unix:/run/user/1000/memtrace.sock", s);
	if (n >= sizeof(un->sun_path))
		return fail(err, errlen, "a socket's path has at most 107 bytes", s);
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, path, n + 1);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int mt_listen_addr(const char *s, struct sockaddr_storage *ss,
		   socklen_t *len, char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(s, ':'), *port_s = s;
	unsigned port;
	size_t n = 0;

	memset(ss, 0, sizeof(*ss));
	if (!strncmp(s, "unix:", 5))
		return unix_addr(s, ss, len, err, errlen);
	if (colon) {
		const char *h = s;

		n = (size_t)(colon - s);
		port_s = colon + 1;
		if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
			h++;
			n -= 2;
		} else if (memchr(s, ':', n)) {
			return fail(err, errlen,
				    "an IPv6 address goes in brackets, e.g. [::1]:6060", s);
		}
		if (n >= sizeof(host))
			return fail(err, errlen, "address too long", s);
		memcpy(host, h, n);
	}
	host[n] = '\0';
	if (parse_port(port_s, 65535, &port))
		return fail(err, errlen,
			    "expected [ADDR:]PORT with PORT 0 to 65535, e.g. 127.0.0.1:6060",
			    s);
	if (resolve(n ? host : "127.0.0.1", port, ss, len))
		return fail(err, errlen, "cannot resolve the address", s);
	return 0;
}

/* One block, "ADDR" or "ADDR/BITS", of LEN characters at S. */
static int parse_one(const char *s, size_t len, struct mt_cidr *c)
{
	char buf[64], *slash;
	unsigned max;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, buf, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else {
		return -1;
	}
	c->bits = max;
	if (slash) {
		unsigned bits;

		if (parse_port(slash + 1, max, &bits))
			return -1;
		c->bits = bits;
	}
	return 0;
}

int mt_cidrs_parse(const char *s, struct mt_cidrs *out, char *err,
		   size_t errlen)
{
	const char *p = s;

	memset(out, 0, sizeof(*out));
	while (*p) {
		size_t len = strcspn(p, ",");

		if (out->n == MT_MAX_CIDRS)
			return fail(err, errlen, "too many blocks (16 at most)", s);
		if (parse_one(p, len, &out->c[out->n]))
			return fail(err, errlen,
				    "expected addresses or CIDR blocks separated by commas, e.g. 10.0.0.0/8,::1",
				    s);
		out->n++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!out->n)
		return fail(err, errlen, "expected at least one CIDR block", s);
	return 0;
}

/* Do the first BITS bits of A and B agree? */
static bool prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (!rest)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool mt_cidrs_match(const struct mt_cidrs *l, const struct sockaddr *sa)
{
	const uint8_t *v4 = NULL, *v6 = NULL;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					    0xff, 0xff };

	if (sa->sa_family == AF_INET) {
		v4 = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (sa->sa_family == AF_INET6) {
		v6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		if (memcmp(v6, mapped, sizeof(mapped)) == 0)
			v4 = v6 + 12; /* an IPv4 peer on a dual-stack socket */
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct mt_cidr *c = &l->c[i];

		if (c->family == AF_INET && v4 && prefix_eq(c->addr, v4, c->bits))
			return true;
		if (c->family == AF_INET6 && v6 && prefix_eq(c->addr, v6, c->bits))
			return true;
	}
	return false;
}

bool mt_addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

bool mt_addr_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

void mt_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else if (sa->sa_family == AF_UNIX) {
		snprintf(buf, len, "unix:%s", ((const struct sockaddr_un *)sa)->sun_path);
	} else {
		snprintf(buf, len, "?");
	}
}
