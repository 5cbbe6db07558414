// SPDX-License-Identifier: MIT
/* http_server.c: the daemon, its limits, its routes, responses (--http). */
#include "http_server.h"
#include "http_request.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "errmsg.h"
#include "http_metrics.h"
#include "http_profile.h"
#include "symbolize.h"
#include "text.h"
#include "tracer.h"
#include "units.h"

/* Connections at once, in all and from one peer; idle seconds before one
 * is closed; memory for a request's headers (a longer URL is a 414). */
#define MAX_CONNECTIONS 128
#define MAX_PER_PEER 96
#define IDLE_TIMEOUT_S 15
#define REQUEST_MEMORY ((size_t)64 * 1024)
#define THREAD_STACK (8u << 20)  /* libdw recurses */

/* ---- responses ---- */

/* DATA as the response, with TYPE and, when FILENAME is given, as an
 * attachment of that name. */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned status,
			       const char *type, char *data, size_t len,
			       const char *filename)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;
	char disp[128];

	if (!r) {
		free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (filename) {
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"",
			 filename);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					disp);
	}
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result mt_http_send(struct MHD_Connection *c, unsigned status,
			     const char *type, char *data, size_t len)
{
	return respond(c, status, type, data, len, NULL);
}

enum MHD_Result mt_http_send_file(struct MHD_Connection *c, char *data,
				  size_t len, const char *filename)
{
	return respond(c, MHD_HTTP_OK, "application/octet-stream", data, len,
		       filename);
}

enum MHD_Result mt_http_text(struct MHD_Connection *c, unsigned status,
			     const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return mt_http_send(c, status, "text/plain; charset=utf-8", s, (size_t)n);
}

enum MHD_Result mt_http_fail(struct MHD_Connection *c, int err)
{
	switch (err) {
	case -ESHUTDOWN:
		return mt_http_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				    "tracing has stopped\n");
	case -EBUSY:
		return mt_http_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				    "too many requests waiting; try again\n");
	case -ETIMEDOUT:
		return mt_http_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				    "the profile took too long to read; try again\n");
	case -ENODATA:
		return mt_http_text(c, MHD_HTTP_NOT_FOUND,
				    "no timeline in this trace (--timeline-interval 0)\n");
	default:
		return mt_http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "cannot make the profile: %s\n", strerror(-err));
	}
}

struct text_arg {
	const struct mt_profile *p;
	const struct mt_text_opts *o;
};

static int write_text(FILE *out, const void *arg)
{
	const struct text_arg *a = arg;

	return mt_write_text(out, a->p, a->o);
}

int mt_http_text_report(const struct mt_profile *p,
			const struct mt_text_opts *o, char **data, size_t *len)
{
	struct text_arg a = { p, o };

	return mt_http_memtext(write_text, &a, data, len);
}

/* ---- the query ---- */

int mt_http_query_parse(struct MHD_Connection *c, enum mt_value metric,
			struct mt_http_query *q, char *err, size_t errlen)
{
	const char *seconds = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	const char *debug = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "debug");
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	const char *comm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "comm");
	const char *m = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "metric");
	unsigned long v;

	memset(q, 0, sizeof(*q));
	q->metric = metric;
	if (seconds && *seconds) {
		if (mt_parse_decimal(seconds, MT_HTTP_MAX_SECONDS, &v) || v == 0) {
			snprintf(err, errlen, "seconds: expected a whole number from 1 to %d",
				 MT_HTTP_MAX_SECONDS);
			return -1;
		}
		q->seconds = (unsigned)v;
	}
	if (debug && *debug) {
		if (mt_parse_decimal(debug, 2, &v)) {
			snprintf(err, errlen, "debug: expected 0, 1 or 2");
			return -1;
		}
		q->debug = (int)v;
	}
	if (pid && *pid) {
		if (mt_parse_decimal(pid, 0x7fffffff, &v) || v == 0) {
			snprintf(err, errlen, "pid: expected a process id");
			return -1;
		}
		q->pid = (uint32_t)v;
	}
	if (comm && *comm) {
		if (strlen(comm) >= sizeof(q->comm)) {
			snprintf(err, errlen, "comm: a process name has at most 15 characters");
			return -1;
		}
		snprintf(q->comm, sizeof(q->comm), "%s", comm);
	}
	if (m && *m && mt_value_parse(m, &q->metric)) {
		snprintf(err, errlen, "metric: expected inuse_space, inuse_objects, alloc_space or alloc_objects");
		return -1;
	}
	return 0;
}

/* ---- routes ---- */

/* A connection's state between the calls of one request. */
struct conn {
	size_t body;   /* bytes of body sent (none is wanted) */
};

static enum MHD_Result metrics(struct mt_http *h, struct MHD_Connection *c)
{
	struct mt_http_result res;
	int err = mt_http_bridge_call(&h->bridge, MT_HTTP_JOB_METRICS,
				      MT_HTTP_WAIT_S, &res);
	char *text;

	if (err)
		return mt_http_fail(c, err);
	text = res.text;
	res.text = NULL;
	return mt_http_send(c, MHD_HTTP_OK, MT_METRICS_TYPE, text, res.len);
}

static enum MHD_Result route(struct mt_http *h, struct MHD_Connection *c,
			     const char *url, const char *method)
{
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) ||
		   !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool post = !strcmp(method, MHD_HTTP_METHOD_POST);

	if (post && !strcmp(url, "/snapshots"))
		return mt_http_page(h, c, url, true);
	if (!get) {
		struct MHD_Response *r;
		enum MHD_Result ret;
		static char msg[] = "only GET and HEAD (and POST /snapshots)\n";

		r = MHD_create_response_from_buffer(sizeof(msg) - 1, msg,
						    MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; charset=utf-8");
		ret = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (!strncmp(url, "/debug/pprof", 12))
		return mt_http_pprof(h, c, url);
	if (!strcmp(url, "/metrics"))
		return metrics(h, c);
	return mt_http_page(h, c, url, false);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct mt_http *h = cls;
	struct conn *s = *state;

	(void)version;
	(void)upload;
	if (!s) { /* the headers: the request's state; its body next */
		s = calloc(1, sizeof(*s));
		if (!s)
			return MHD_NO;
		*state = s;
		return MHD_YES;
	}
	if (*upload_size) { /* no request has a body: count it, drop it */
		s->body += *upload_size;
		*upload_size = 0;
		return s->body > REQUEST_MEMORY ? MHD_NO : MHD_YES;
	}
	if (s->body)
		return mt_http_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
				    "no request takes a body\n");
	return route(h, c, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode why)
{
	(void)cls;
	(void)c;
	(void)why;
	free(*state);
	*state = NULL;
}

static enum MHD_Result on_connect(void *cls, const struct sockaddr *addr,
				  socklen_t len)
{
	struct mt_http *h = cls;

	(void)len;
	return !h->allow_on || mt_cidrs_match(&h->allow, addr) ? MHD_YES : MHD_NO;
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	const struct mt_http *h = cls;

	if (!h->o->verbose)
		return;
	fputs("memtrace: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* ---- start, stop ---- */

static void on_sigusr1(void *ctx)
{
	struct mt_http *h = ctx;

	if (h->prev_report)
		h->prev_report(h->prev_ctx);
	mt_http_snapshot_signal(h);
}

static int listen_on(struct mt_http *h, const struct sockaddr_storage *ss)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG |
			 MHD_USE_ITC;
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage bound = *ss;

	if (ss->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->daemon = MHD_start_daemon(
		flags, 0, on_connect, h, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, on_log, h, /* first: for every message */
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)MAX_PER_PEER,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_END);
	if (!h->daemon)
		return -1;
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (info) {
		if (bound.ss_family == AF_INET)
			((struct sockaddr_in *)&bound)->sin_port = htons(info->port);
		else
			((struct sockaddr_in6 *)&bound)->sin6_port = htons(info->port);
	}
	mt_addr_str((const struct sockaddr *)&bound, h->url + 7,
		    sizeof(h->url) - 7);
	memcpy(h->url, "http://", 7);
	return 0;
}

int mt_http_start(struct mt_http **out, const struct mt_options *o,
		  struct mt_tracer *tr)
{
	struct mt_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256];
	int ret;

	*out = NULL;
	if (!h)
		return mt_fail("--http: %s", strerror(ENOMEM));
	h->o = o;
	h->bridge.efd = -1;
	pthread_mutex_init(&h->sym_lock, NULL);
	mt_ring_init(&h->ring);
	h->symbols = mt_symcache_new();
	if (mt_listen_addr(o->http, &ss, &len, err, sizeof(err)) ||
	    (o->http_allow &&
	     mt_cidrs_parse(o->http_allow, &h->allow, err, sizeof(err)))) {
		ret = mt_fail("--http: %s", err);
		goto fail;
	}
	h->allow_on = o->http_allow != NULL;
	ret = mt_http_bridge_init(&h->bridge, tr);
	if (ret) {
		ret = mt_fail("--http: %s", strerror(-ret));
		goto fail;
	}
	ret = mt_http_snapper_start(h);
	if (ret) {
		ret = mt_fail("--http: cannot start the snapshot thread: %s",
			      strerror(-ret));
		goto fail;
	}
	if (listen_on(h, &ss)) {
		ret = mt_fail("--http: cannot listen on %s: %s", o->http,
			      strerror(errno ? errno : EADDRINUSE));
		goto fail;
	}
	h->prev_report = tr->s.on_report;
	h->prev_ctx = tr->s.report_ctx;
	tr->s.on_report = on_sigusr1;
	tr->s.report_ctx = h;
	h->hooked = tr;
	fprintf(stderr, "memtrace: serving %s/ (go tool pprof %s/debug/pprof/heap)\n",
		h->url, h->url);
	*out = h;
	return 0;
fail:
	mt_http_stop(h);
	return ret;
}

void mt_http_stop(struct mt_http *h)
{
	if (!h)
		return;
	if (h->hooked) { /* SIGUSR1 is the reports' alone again */
		h->hooked->s.on_report = h->prev_report;
		h->hooked->s.report_ctx = h->prev_ctx;
	}
	/* Requests waiting for the loop fail at once; those at work end. */
	mt_http_bridge_close(&h->bridge);
	mt_http_snapper_stop(h);
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	mt_http_bridge_free(&h->bridge);
	mt_symcache_free(h->symbols);
	mt_ring_free(&h->ring);
	pthread_mutex_destroy(&h->sym_lock);
	free(h);
}
