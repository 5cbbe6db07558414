/* SPDX-License-Identifier: MIT */
/*
 * http_guard.h: who a request of --http must come from, checked before it
 * is routed (no MHD here: the headers' values in, a verdict out).
 *
 *   Host     must name the server (against DNS rebinding: a page of
 *            evil.example whose name now resolves to 127.0.0.1 sends
 *            Host: evil.example): its address as listened on, with the
 *            port or none; on loopback "localhost"; on 0.0.0.0 or [::]
 *            any IP literal and the machine's host name; the names of
 *            --http-host and a name given to --http.  A unix socket takes
 *            any Host (no browser reaches it).  Else 421.
 *   Origin   a request that changes something (POST /snapshots) whose
 *            Origin is not http://HOST of this request, or whose
 *            Sec-Fetch-Site says another site: 403.  No Origin (curl,
 *            go tool pprof): allowed.
 *   token    with --http-token-file, every request carries it:
 *            "Authorization: Bearer TOKEN", or Basic with TOKEN as the
 *            password (a browser asks for it); compared in a time that
 *            does not depend on how much of it matches.  Else 401.
 */
#ifndef MEMTRACE_HTTP_GUARD_H
#define MEMTRACE_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define MT_GUARD_MAX_NAMES 16
#define MT_GUARD_MIN_TOKEN 16   /* bytes */
#define MT_GUARD_MAX_TOKEN 4096

struct mt_http_guard {
	bool any_host;           /* a unix socket: every Host */
	bool wildcard;           /* 0.0.0.0 or [::]: any IP literal */
	bool loopback;           /* 127/8 or ::1: also "localhost" */
	int family;              /* of addr */
	unsigned char addr[16];  /* the address listened on */
	unsigned port;
	char names[MT_GUARD_MAX_NAMES][256];  /* lower case, no final dot */
	size_t nnames;
	char *token;             /* --http-token-file's, or NULL */
	size_t token_len;
};

/*
 * G for the socket bound at SA, with the comma-separated names of HOSTS
 * (--http-host, or NULL) and HTTP (--http's value: its host part counts
 * when it is a name).  0 or -1 (too many names).
 */
int mt_guard_init(struct mt_http_guard *g, const struct sockaddr *sa,
		  const char *hosts, const char *http);

/* Does HOST (a Host header, or NULL when there is none) name the server? */
bool mt_guard_host_ok(const struct mt_http_guard *g, const char *host);

/*
 * May a request that changes something, with these headers (each NULL
 * when absent), go on?  HOST has passed mt_guard_host_ok.
 */
bool mt_guard_origin_ok(const char *origin, const char *fetch_site,
			const char *host);

/* Is AUTH (an Authorization header: "Bearer T") G's token?  Is PASSWORD
 * (of Basic) G's token?  True when G has no token. */
bool mt_guard_bearer_ok(const struct mt_http_guard *g, const char *auth);
bool mt_guard_token_eq(const struct mt_http_guard *g, const char *token);

/*
 * Read the token of PATH into G: one line (a final newline and spaces
 * dropped), at least MT_GUARD_MIN_TOKEN bytes of printable ASCII; PATH a
 * regular file neither group nor others can access.  0, or -1 with why
 * in ERR.
 */
int mt_guard_read_token(struct mt_http_guard *g, const char *path, char *err,
			size_t errlen);

void mt_guard_free(struct mt_http_guard *g);

#endif
