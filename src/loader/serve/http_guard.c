// SPDX-License-Identifier: MIT
/* http_guard.c: Host, Origin and token checks of --http (http_guard.h). */
#include "http_guard.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decimal.h"
#include "net_addr.h"

/* NAME (LEN bytes) lower-cased, without a final dot, into G's names. */
static int add_name(struct mt_http_guard *g, const char *name, size_t len)
{
	char *d;

	if (len && name[len - 1] == '.')
		len--;
	if (!len)
		return 0;
	if (g->nnames == MT_GUARD_MAX_NAMES || len >= sizeof(g->names[0]))
		return -1;
	d = g->names[g->nnames++];
	for (size_t i = 0; i < len; i++)
		d[i] = (char)tolower((unsigned char)name[i]);
	d[len] = '\0';
	return 0;
}

int mt_guard_init(struct mt_http_guard *g, const struct sockaddr *sa,
		  const char *hosts, const char *http)
{
	char buf[256];

	memset(g, 0, sizeof(*g));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		memcpy(g->addr, &in->sin_addr, 4);
		g->port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		memcpy(g->addr, &in6->sin6_addr, 16);
		g->port = ntohs(in6->sin6_port);
	} else {
		g->any_host = true;
		return 0;
	}
	g->family = sa->sa_family;
	g->wildcard = mt_addr_is_any(sa);
	g->loopback = mt_addr_is_loopback(sa);
	for (const char *p = hosts; p && *p;) {
		size_t n = strcspn(p, ",");

		if (add_name(g, p, n))
			return -1;
		p += n + (p[n] == ',');
	}
	/* --http NAME:PORT: NAME is one the user gave. */
	if (http && http[0] != '[') {
		const char *colon = strrchr(http, ':');
		size_t n = colon ? (size_t)(colon - http) : 0;
		unsigned char a[16];

		if (n && n < sizeof(buf)) {
			memcpy(buf, http, n);
			buf[n] = '\0';
			if (inet_pton(AF_INET, buf, a) != 1 && add_name(g, buf, n))
				return -1;
		}
	}
	/* Bound to every address: the machine's name too (a page elsewhere
	 * cannot make a browser send it). */
	if (g->wildcard && gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		if (add_name(g, buf, strlen(buf)))
			return -1;
	}
	return 0;
}

/* Does the IP literal S (IPv6 without brackets when V6) name the server? */
static bool literal_ok(const struct mt_http_guard *g, const char *s, bool v6)
{
	unsigned char a[16];
	int family = v6 ? AF_INET6 : AF_INET;

	if (inet_pton(family, s, a) != 1)
		return false;
	if (g->wildcard)
		return true;
	if (family == g->family)
		return memcmp(a, g->addr, v6 ? 16 : 4) == 0;
	return false;
}

bool mt_guard_host_ok(const struct mt_http_guard *g, const char *host)
{
	char name[256];
	const char *port = NULL, *end;
	size_t n;
	bool v6 = false;

	if (g->any_host)
		return true;
	if (!host) /* HTTP/1.0 without Host: no browser sends that */
		return true;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return false;
		v6 = true;
		host++;
		n = (size_t)(end - host);
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return false;
	} else {
		end = strchr(host, ':');
		n = end ? (size_t)(end - host) : strlen(host);
		if (end)
			port = end + 1;
	}
	if (port) {
		unsigned long v;

		if (mt_parse_decimal(port, 65535, &v) || v != g->port)
			return false;
	}
	if (n == 0 || n >= sizeof(name))
		return false;
	for (size_t i = 0; i < n; i++)
		name[i] = (char)tolower((unsigned char)host[i]);
	name[n] = '\0';
	if (v6)
		return literal_ok(g, name, true);
	if (literal_ok(g, name, false))
		return true;
	if (name[n - 1] == '.')
		name[--n] = '\0';
	if ((g->loopback || g->wildcard) && !strcmp(name, "localhost"))
		return true;
	for (size_t i = 0; i < g->nnames; i++)
		if (!strcmp(name, g->names[i]))
			return true;
	return false;
}

bool mt_guard_origin_ok(const char *origin, const char *fetch_site,
			const char *host)
{
	if (fetch_site && strcasecmp(fetch_site, "same-origin") != 0 &&
	    strcasecmp(fetch_site, "none") != 0)
		return false;
	if (!origin)
		return true;
	if (!host || strncasecmp(origin, "http://", 7) != 0)
		return false;
	return strcasecmp(origin + 7, host) == 0;
}

/* Is the token of LEN bytes at T G's?  Time depends on G's length
 * only. */
static bool same_token(const struct mt_http_guard *g, const char *t,
		       size_t len)
{
	unsigned char diff = len != g->token_len;

	for (size_t i = 0; i < g->token_len; i++)
		diff |= (unsigned char)g->token[i] ^
			(unsigned char)(i < len ? t[i] : 0);
	return diff == 0;
}

bool mt_guard_token_eq(const struct mt_http_guard *g, const char *token)
{
	if (!g->token)
		return true;
	return token && same_token(g, token, strlen(token));
}

bool mt_guard_bearer_ok(const struct mt_http_guard *g, const char *auth)
{
	size_t len;

	if (!g->token)
		return true;
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
		return false;
	auth += 7;
	while (*auth == ' ')
		auth++;
	len = strlen(auth);
	while (len && (auth[len - 1] == ' ' || auth[len - 1] == '\t'))
		len--;
	return same_token(g, auth, len);
}

static int token_err(char *err, size_t errlen, const char *fmt,
		     const char *path)
{
	snprintf(err, errlen, fmt, path);
	return -1;
}

int mt_guard_read_token(struct mt_http_guard *g, const char *path, char *err,
			size_t errlen)
{
	char buf[MT_GUARD_MAX_TOKEN + 2];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return token_err(err, errlen, "%s: not a regular file", path);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		close(fd);
		snprintf(err, errlen,
			 "%s: group or others can access it (mode %04o), so they can read the token: chmod 600 %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	len = (size_t)n;
	while (len && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	if (len > MT_GUARD_MAX_TOKEN)
		return token_err(err, errlen, "%s: a token has at most 4096 bytes", path);
	for (size_t i = 0; i < len; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			return token_err(err, errlen,
					 "%s: the token is one line of printable characters, no spaces", path);
	if (len < MT_GUARD_MIN_TOKEN)
		return token_err(err, errlen,
				 "%s: the token has fewer than 16 characters; make one with: head -c 18 /dev/urandom | base64 | tr +/ -_ > FILE",
				 path);
	free(g->token);
	g->token = strdup(buf);
	if (!g->token) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	g->token_len = len;
	return 0;
}

void mt_guard_free(struct mt_http_guard *g)
{
	if (g->token) {
		explicit_bzero(g->token, g->token_len);
		free(g->token);
	}
	g->token = NULL;
}
