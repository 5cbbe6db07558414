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
#include "http_listen.h"
#include "http_metrics.h"
#include "http_profile.h"
#include "symbolize.h"
#include "text.h"
#include "tracer.h"
#include "units.h"

/* Idle seconds before a connection is closed (the limits on connections
 * and the deadline of a request's headers: http_admit.h); memory for a
 * request's headers (a longer URL is a 414). */
#define IDLE_TIMEOUT_S 15
#define REQUEST_MEMORY ((size_t)64 * 1024)
#define THREAD_STACK (8u << 20)  /* libdw recurses */

/* ---- responses ---- */

/* DATA as the response, with TYPE and, when FILENAME is given, as an
 * attachment of that name. */
static enum MHD_Result respond(struct MHD_Connection *c, unsigned status,
			       const char *type, char *data, size_t len,
			       const char *filename, const char *csp)
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
	if (csp)
		MHD_add_response_header(r, "Content-Security-Policy", csp);
	/* go tool pprof prints the reason of an error so marked. */
	if (status >= 400)
		MHD_add_response_header(r, "X-Go-Pprof", "1");
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
	return respond(c, status, type, data, len, NULL, NULL);
}

enum MHD_Result mt_http_send_html(struct MHD_Connection *c, char *data,
				  size_t len, const char *csp)
{
	return respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", data, len,
		       NULL, csp);
}

enum MHD_Result mt_http_send_file(struct MHD_Connection *c, char *data,
				  size_t len, const char *filename)
{
	return respond(c, MHD_HTTP_OK, "application/octet-stream", data, len,
		       filename, NULL);
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
	case -ECANCELED: /* the client has gone: nobody to answer */
		return MHD_NO;
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

/* pprof's views, named as `memtrace report`'s options are (show_from). */
static const char *const view_args[MT_VIEW__COUNT] = {
	[MT_VIEW_FOCUS] = "focus", [MT_VIEW_IGNORE] = "ignore",
	[MT_VIEW_HIDE] = "hide", [MT_VIEW_SHOW] = "show",
	[MT_VIEW_SHOW_FROM] = "show_from", [MT_VIEW_TAGFOCUS] = "tagfocus",
	[MT_VIEW_TAGIGNORE] = "tagignore",
};

/* The command line's views (--focus ...), checked by the options: what
 * every answer shows unless its query gives that kind of view itself. */
static const struct mt_view_spec *cmdline_view;

/* C's ?focus= ... into V, each compiled once to check it. */
static int view_parse(struct MHD_Connection *c, struct mt_view_spec *v,
		      char *err, size_t errlen)
{
	char why[256];

	memset(v, 0, sizeof(*v));
	v->quiet = true; /* a request's view matching nothing: its answer */
	for (int k = 0; k < MT_VIEW__COUNT; k++) {
		const char *e = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
							    view_args[k]);

		if (!e || !*e) {
			v->expr[k] = cmdline_view ? cmdline_view->expr[k] : NULL;
			continue;
		}
		if (mt_view_check((enum mt_view_kind)k, e, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %s", view_args[k], why);
			return -1;
		}
		v->expr[k] = e;
	}
	return 0;
}

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
		bool glob = strpbrk(comm, "*?[") != NULL;

		if (strlen(comm) >= (glob ? sizeof(q->comm) : 16)) {
			snprintf(err, errlen, glob ? "comm: a glob of at most %zu characters"
						   : "comm: a process name has at most 15 characters",
				 sizeof(q->comm) - 1);
			return -1;
		}
		snprintf(q->comm, sizeof(q->comm), "%s", comm);
	}
	if (m && *m && mt_value_parse(m, &q->metric)) {
		snprintf(err, errlen, "metric: expected inuse_space, inuse_objects, alloc_space or alloc_objects");
		return -1;
	}
	return view_parse(c, &q->view, err, errlen);
}

/* ---- links ---- */

struct link {
	const char *const *skip;
	char *buf;
	size_t len, off;
};

/* S URL-encoded, then HTML-escaped (only & needs it) into L. */
static void link_put(struct link *l, const char *s)
{
	for (; *s && l->off + 4 < l->len; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= 'A' && ch <= 'Z') || strchr("-_.~", ch))
			l->buf[l->off++] = (char)ch;
		else
			l->off += (size_t)snprintf(l->buf + l->off, l->len - l->off,
						   "%%%02X", ch);
	}
	l->buf[l->off] = '\0';
}

static enum MHD_Result link_arg(void *cls, enum MHD_ValueKind kind,
				const char *key, const char *value)
{
	struct link *l = cls;
	size_t need = strlen(key) * 3 + (value ? strlen(value) * 3 : 0) + 8;

	(void)kind;
	for (const char *const *s = l->skip; *s; s++)
		if (!strcmp(key, *s))
			return MHD_YES;
	if (!value || !*value)
		return MHD_YES;
	if (l->off + need >= l->len) /* too long: left out whole */
		return MHD_YES;
	l->off += (size_t)snprintf(l->buf + l->off, l->len - l->off, "&amp;");
	link_put(l, key);
	l->buf[l->off++] = '=';
	link_put(l, value);
	return MHD_YES;
}

void mt_http_query_link(struct MHD_Connection *c, const char *const *skip,
			char *buf, size_t len)
{
	struct link l = { skip, buf, len, 0 };

	buf[0] = '\0';
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, link_arg, &l);
}

/* ---- routes ---- */

/* A connection's state between the calls of one request. */
struct conn {
	size_t body;   /* bytes of body sent (none is wanted) */
	/* POST /debug/pprof/symbol's body, its addresses. */
	bool symbols;
	char *text;
	size_t len;
};

#define SYMBOL_URL "/debug/pprof/symbol"

/* A piece of the addresses posted to SYMBOL_URL: kept.  false: too many. */
static bool keep_symbols(struct conn *s, const char *data, size_t n)
{
	char *v;

	if (n > MT_HTTP_SYMBOL_BODY - s->len)
		return false;
	v = realloc(s->text, s->len + n + 1);
	if (!v)
		return false;
	memcpy(v + s->len, data, n);
	s->len += n;
	v[s->len] = '\0';
	s->text = v;
	return true;
}

/* Does the request say it sends more addresses than are taken? */
static bool too_many_symbols(struct MHD_Connection *c)
{
	const char *n = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_CONTENT_LENGTH);

	return n && strtoull(n, NULL, 10) > MT_HTTP_SYMBOL_BODY;
}

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
			     const char *url, const char *method,
			     const struct conn *s)
{
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) ||
		   !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool post = !strcmp(method, MHD_HTTP_METHOD_POST);

	if (post && !strcmp(url, "/snapshots"))
		return mt_http_page(h, c, url, true);
	if (post && !strcmp(url, SYMBOL_URL))
		return mt_http_symbol(h, c, s->text ? s->text : "", s->len);
	if (!get) {
		struct MHD_Response *r;
		enum MHD_Result ret;
		static char msg[] = "only GET and HEAD (and POST /snapshots, " SYMBOL_URL ")\n";

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

/* ---- admission (http_guard.h, http_admit.h) ---- */

static enum MHD_Result with_header(struct MHD_Connection *c, unsigned status,
				   const char *name, const char *value,
				   const char *msg)
{
	char *text = strdup(msg);
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text,
					    MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, name, value);
	if (status == MHD_HTTP_UNAUTHORIZED) /* a browser asks for it */
		MHD_add_response_header(r, name, "Basic realm=\"memtrace\", charset=\"UTF-8\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Does C carry the token: Bearer, or Basic with it as the password? */
static bool has_token(const struct mt_http *h, struct MHD_Connection *c)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_AUTHORIZATION);
	char *user, *pass = NULL;
	bool ok;

	if (mt_guard_bearer_ok(&h->guard, auth))
		return true;
	user = MHD_basic_auth_get_username_password(c, &pass);
	ok = pass && mt_guard_token_eq(&h->guard, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return ok;
}

/* Host, token, Origin: false, or a refusal queued in *RET. */
static bool refused(struct mt_http *h, struct MHD_Connection *c,
		    const char *method, enum MHD_Result *ret)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);
	bool safe = !strcmp(method, MHD_HTTP_METHOD_GET) ||
		    !strcmp(method, MHD_HTTP_METHOD_HEAD);

	if (!mt_guard_host_ok(&h->guard, host)) {
		*ret = mt_http_text(c, MHD_HTTP_MISDIRECTED_REQUEST,
				    "Host '%.100s' does not name this server (DNS rebinding?): use %s/, or name it with --http-host\n",
				    host, h->url);
		return true;
	}
	if (h->guard.token && !has_token(h, c)) {
		*ret = with_header(c, MHD_HTTP_UNAUTHORIZED,
				   MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				   "Bearer realm=\"memtrace\"",
				   "a token is needed: Authorization: Bearer TOKEN (--http-token-file)\n");
		return true;
	}
	if (!safe &&
	    !mt_guard_origin_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							    MHD_HTTP_HEADER_ORIGIN),
				MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							    "Sec-Fetch-Site"),
				host)) {
		*ret = mt_http_text(c, MHD_HTTP_FORBIDDEN,
				    "a request from another site may not change anything here\n");
		return true;
	}
	return false;
}

/* ROUTE C's request, its socket watched for the client leaving, a long
 * one (?seconds=N) within the caps. */
static enum MHD_Result admitted(struct mt_http *h, struct MHD_Connection *c,
				const char *url, const char *method,
				const struct conn *s)
{
	struct mt_http_conn *conn = mt_http_admit_conn(c);
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "seconds");
	unsigned long seconds = 0;
	unsigned retry;
	enum MHD_Result ret;

	if (sec && mt_parse_decimal(sec, MT_HTTP_MAX_SECONDS, &seconds))
		seconds = 0; /* the handler says what is wrong */
	if (mt_http_admit_long(&h->admit, conn, (unsigned)seconds, &retry)) {
		char after[16];

		snprintf(after, sizeof(after), "%u", retry);
		return with_header(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   MHD_HTTP_HEADER_RETRY_AFTER, after,
				   "too many ?seconds= requests waiting (from you, or in all); try again later\n");
	}
	mt_http_admit_enter(&h->admit, conn);
	ret = route(h, c, url, method, s);
	mt_http_admit_leave(&h->admit, conn);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct mt_http *h = cls;
	struct conn *s = *state;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	if (!s) { /* the headers: the request's state; its body next */
		mt_http_admit_headers(&h->admit, mt_http_admit_conn(c));
		s = calloc(1, sizeof(*s));
		if (!s)
			return MHD_NO;
		s->symbols = !strcmp(method, MHD_HTTP_METHOD_POST) &&
			     !strcmp(url, SYMBOL_URL);
		*state = s;
		if (refused(h, c, method, &ret))
			return ret;
		if (s->symbols && too_many_symbols(c))
			return mt_http_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
					    "at most %zu bytes of addresses\n",
					    MT_HTTP_SYMBOL_BODY);
		return MHD_YES;
	}
	if (*upload_size && s->symbols) { /* beyond (chunked): cut off */
		bool kept = keep_symbols(s, upload, *upload_size);

		*upload_size = 0;
		return kept ? MHD_YES : MHD_NO;
	}
	if (*upload_size) { /* no other request has a body: count it, drop it */
		s->body += *upload_size;
		*upload_size = 0;
		return s->body > REQUEST_MEMORY ? MHD_NO : MHD_YES;
	}
	if (s->body)
		return mt_http_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
				    "no request takes a body\n");
	return admitted(h, c, url, method, s);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode why)
{
	struct mt_http *h = cls;

	(void)why;
	mt_http_admit_done(&h->admit, mt_http_admit_conn(c));
	if (*state)
		free(((struct conn *)*state)->text);
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

/* A client gone: wake the waits that check mt_http_client_gone. */
static void wake_waits(void *ctx)
{
	struct mt_http *h = ctx;

	pthread_mutex_lock(&h->lock);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_lock(&h->bridge.lock);
	pthread_cond_broadcast(&h->bridge.cond);
	pthread_mutex_unlock(&h->bridge.lock);
}

/* Serve on L's socket (bound by mt_http_listen). */
static int listen_on(struct mt_http *h, const struct mt_http_listener *l)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG |
			 MHD_USE_ITC | MHD_USE_POLL;

	if (l->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->daemon = MHD_start_daemon(
		flags, 0, on_connect, h, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, on_log, h, /* first: for every message */
		MHD_OPTION_LISTEN_SOCKET, l->fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)MT_ADMIT_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, mt_http_admit_notify, &h->admit,
		MHD_OPTION_END);
	if (!h->daemon)
		return -1;
	if (l->addr.ss_family == AF_UNIX) {
		mt_addr_str((const struct sockaddr *)&l->addr, h->url,
			    sizeof(h->url));
	} else {
		mt_addr_str((const struct sockaddr *)&l->addr, h->url + 7,
			    sizeof(h->url) - 7);
		memcpy(h->url, "http://", 7);
	}
	return 0;
}

int mt_http_start(struct mt_http **out, const struct mt_options *o,
		  struct mt_tracer *tr, struct mt_symcache *symbols)
{
	struct mt_http *h = calloc(1, sizeof(*h));
	struct mt_http_listener *l;
	char err[320];
	int ret;

	*out = NULL;
	if (!h)
		return mt_fail("--http: %s", strerror(ENOMEM));
	h->o = o;
	cmdline_view = &o->view;
	h->bridge.efd = -1;
	h->admit.efd = -1;
	mt_ring_init(&h->ring);
	h->own_symbols = !symbols;
	h->symbols = symbols ? symbols : mt_symcache_new();
	/* Bound by main() before anything started; here if it was not. */
	l = mt_http_listener_take();
	if (!l && !(ret = mt_http_listen(o, (uid_t)-1, (gid_t)-1)))
		l = mt_http_listener_take();
	if (!l) {
		ret = ret ? ret : mt_fail("--http: no socket");
		goto fail;
	}
	if (o->http_allow &&
	    mt_cidrs_parse(o->http_allow, &h->allow, err, sizeof(err))) {
		ret = mt_fail("--http-allow: %s", err);
		goto fail;
	}
	if (mt_guard_init(&h->guard, (const struct sockaddr *)&l->addr,
			  o->http_hosts, o->http)) {
		ret = mt_fail("--http-host: %d names at most", MT_GUARD_MAX_NAMES);
		goto fail;
	}
	if (o->http_token_file &&
	    mt_guard_read_token(&h->guard, o->http_token_file, err, sizeof(err))) {
		ret = mt_fail("--http-token-file %s", err);
		goto fail;
	}
	h->allow_on = o->http_allow != NULL;
	ret = mt_http_bridge_init(&h->bridge, tr);
	if (ret) {
		ret = mt_fail("--http: %s", strerror(-ret));
		goto fail;
	}
	ret = mt_http_snapper_start(h);
	if (!ret)
		ret = mt_http_admit_init(&h->admit, wake_waits, h);
	if (ret) {
		ret = mt_fail("--http: cannot start the server's threads: %s",
			      strerror(-ret));
		goto fail;
	}
	if (listen_on(h, l)) {
		ret = mt_fail("--http: cannot serve on %s: %s", o->http,
			      strerror(errno ? errno : EINVAL));
		goto fail;
	}
	h->prev_report = tr->s.on_report;
	h->prev_ctx = tr->s.report_ctx;
	tr->s.on_report = on_sigusr1;
	tr->s.report_ctx = h;
	h->hooked = tr;
	if (l->addr.ss_family == AF_UNIX)
		fprintf(stderr, "memtrace: serving %s (curl --unix-socket %s http://localhost/debug/pprof/heap)\n",
			h->url, h->url + 5);
	else
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
	mt_http_admit_stop(&h->admit);
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	mt_http_admit_free(&h->admit);
	mt_guard_free(&h->guard);
	mt_http_bridge_free(&h->bridge);
	if (h->own_symbols)
		mt_symcache_free(h->symbols);
	mt_ring_free(&h->ring);
	free(h);
}
