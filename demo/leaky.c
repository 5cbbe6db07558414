/* SPDX-License-Identifier: MIT */
/*
 * leaky.c: the program that `make demo` runs under memtrace.
 *
 * A pretend web server.  It handles NREQUESTS requests, one every 10 ms
 * (about 3 seconds in all), then cleans up and exits 0.  Every request gets
 * a struct session and a few struct header objects, and a line is appended
 * to an access log kept in memory.
 *
 * What memtrace should find still in use at exit:
 *
 *   1. parse_header(), reached from parse_request(): when a request repeats
 *      a header, the new copy replaces the old one without freeing it.
 *      Every 5th request repeats "Accept": 60 x 96 bytes = 5760 bytes.
 *   2. parse_header(), reached from read_body() -> parse_trailers(): the
 *      trailer of a chunked body is parsed and then forgotten.
 *      Every 2nd request is chunked: 150 x 96 bytes = 14400 bytes.
 *   3. log_append(): the access log grows with realloc() and is never freed
 *      (reachable, not strictly a leak, but it is memory in use).
 *
 * What it should not find in use: sessions.  They are kept in a small cache,
 * freed when evicted and when the cache is cleared at exit, so session_new()
 * shows up only with --metric alloc_space / alloc_objects.
 *
 * Built by scripts/demo.sh with -O0 -g -fno-omit-frame-pointer so that every
 * function keeps its frame and its name in the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NREQUESTS   300
#define MAX_HEADERS 8
#define CACHE_SIZE  16

struct header {                 /* 96 bytes */
	char name[24];
	char value[72];
};

struct session {                /* 256 bytes */
	unsigned id;
	unsigned nheaders;
	struct header *headers[MAX_HEADERS];
	char user[180];
};

static struct session *cache[CACHE_SIZE];

static char *access_log;        /* grows with realloc(), never freed */
static size_t log_len, log_cap;

static void die(const char *what)
{
	fprintf(stderr, "leaky: %s\n", what);
	exit(1);
}

/* "Name: value" -> a new struct header. */
static struct header *parse_header(const char *line)
{
	struct header *h = malloc(sizeof(*h));
	const char *colon = strchr(line, ':');
	size_t n;

	if (!h || !colon)
		die("bad header");
	memset(h, 0, sizeof(*h));
	n = (size_t)(colon - line);
	if (n >= sizeof(h->name))
		n = sizeof(h->name) - 1;
	memcpy(h->name, line, n);
	snprintf(h->value, sizeof(h->value), "%s", colon + 2);
	return h;
}

static struct header **find_header(struct session *s, const char *name)
{
	for (unsigned i = 0; i < s->nheaders; i++)
		if (strcmp(s->headers[i]->name, name) == 0)
			return &s->headers[i];
	return NULL;
}

static void parse_request(struct session *s, unsigned req)
{
	const char *lines[] = {
		"Host: example.com",
		"User-Agent: leaky-demo/1.0",
		"Accept: text/html",
		"Accept: application/json",     /* a repeat, see below */
	};
	/* Every 5th request repeats the Accept header. */
	unsigned nlines = req % 5 == 0 ? 4 : 3;

	for (unsigned i = 0; i < nlines; i++) {
		struct header *h = parse_header(lines[i]);
		struct header **old = find_header(s, h->name);

		if (old)
			*old = h;       /* BUG: the old header is never freed */
		else if (s->nheaders < MAX_HEADERS)
			s->headers[s->nheaders++] = h;
		else
			free(h);
	}
}

static size_t parse_trailers(const char *body)
{
	const char *trailer = strstr(body, "\r\n0\r\n");
	struct header *h;

	if (!trailer)
		return 0;
	h = parse_header(trailer + 5);
	/* BUG: the trailer is checked and then forgotten, never freed. */
	return strlen(h->value);
}

static void read_body(unsigned req)
{
	/* Every 2nd request has a chunked body with a trailer. */
	if (req % 2 == 0)
		parse_trailers("5\r\nhello\r\n0\r\nExpires: never\r\n");
}

static void log_append(const char *line)
{
	size_t n = strlen(line);

	if (log_len + n + 1 > log_cap) {
		size_t cap = log_cap ? log_cap * 2 : 256;
		char *p = realloc(access_log, cap);

		if (!p)
			die("out of memory");
		access_log = p;
		log_cap = cap;
	}
	memcpy(access_log + log_len, line, n + 1);
	log_len += n;
}

static struct session *session_new(unsigned id)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		die("out of memory");
	s->id = id;
	snprintf(s->user, sizeof(s->user), "user%u", id % 37);
	return s;
}

static void session_free(struct session *s)
{
	for (unsigned i = 0; i < s->nheaders; i++)
		free(s->headers[i]);
	free(s);
}

/* Keep the session in the cache; the one it replaces is freed. */
static void cache_put(struct session *s)
{
	struct session **slot = &cache[s->id % CACHE_SIZE];

	if (*slot)
		session_free(*slot);
	*slot = s;
}

static void cache_clear(void)
{
	for (unsigned i = 0; i < CACHE_SIZE; i++) {
		if (cache[i])
			session_free(cache[i]);
		cache[i] = NULL;
	}
}

static void handle_request(unsigned req)
{
	struct session *s = session_new(req);
	char line[256];

	parse_request(s, req);
	read_body(req);
	snprintf(line, sizeof(line), "GET /item/%u 200 %s\n", req, s->user);
	log_append(line);
	cache_put(s);
}

int main(void)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };   /* 10 ms */

	for (unsigned req = 0; req < NREQUESTS; req++) {
		handle_request(req);
		nanosleep(&tick, NULL);
	}
	cache_clear();
	/* stderr is unbuffered: printing here allocates nothing. */
	fprintf(stderr, "leaky: handled %d requests, log is %zu bytes\n",
		NREQUESTS, log_len);
	return 0;
}
