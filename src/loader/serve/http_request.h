/* SPDX-License-Identifier: MIT */
/*
 * http_request.h: what the HTTP server's handlers share (http_server.c,
 * http_pprof.c, http_page.c): the server, a request's query, responses,
 * and the profile of now as a request sees it.
 */
#ifndef MEMTRACE_HTTP_REQUEST_H
#define MEMTRACE_HTTP_REQUEST_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "http_admit.h"
#include "http_bridge.h"
#include "http_guard.h"
#include "net_addr.h"
#include "options.h"
#include "profile.h"
#include "snapshot_ring.h"
#include "text.h"
#include "view.h"

struct mt_symcache;
struct mt_tracer;

/* How long a request waits for the loop thread, and ?seconds at most. */
#define MT_HTTP_WAIT_S 60.0
#define MT_HTTP_MAX_SECONDS 3600

struct mt_http {
	const struct mt_options *o;
	struct MHD_Daemon *daemon;
	struct mt_http_bridge bridge;
	struct mt_cidrs allow;
	bool allow_on;
	char url[128];                 /* http://ADDR:PORT */
	struct mt_symcache *symbols;   /* kept from one request to the next
					* (it locks itself: shared) */
	bool own_symbols;              /* else the trace's reports' */
	struct mt_ring ring;           /* the page's snapshots */
	/* The snapshot thread: every --snapshot-interval, and on demand. */
	pthread_t snapper;
	bool snapper_on;
	pthread_mutex_t lock;          /* over what follows */
	pthread_cond_t cond;           /* CLOCK_MONOTONIC */
	unsigned signal_wanted;        /* SIGUSR1s not yet served */
	bool stopping;
	/* The reports' SIGUSR1 handler, called first; the tracer whose
	 * handler is ours meanwhile. */
	void (*prev_report)(void *ctx);
	void *prev_ctx;
	struct mt_tracer *hooked;
	/* Who may ask (Host, Origin, token) and what keeps the server
	 * available (deadlines, caps, gone clients). */
	struct mt_http_guard guard;
	struct mt_http_admit admit;
};

/*
 * A request's query (?seconds= &debug= &pid= &comm= &metric=, and pprof's
 * views as `memtrace report` takes them: ?focus= &ignore= &hide= &show=
 * &show_from= &tagfocus= &tagignore=).
 */
struct mt_http_query {
	unsigned seconds;      /* 0: the profile of now */
	int debug;             /* > 0: text */
	uint32_t pid;          /* 0: every process */
	char comm[128];        /* "": any name; a name or a glob (--comm's) */
	enum mt_value metric;  /* text and flame graph; default given */
	struct mt_view_spec view; /* the request's strings (MHD's), checked */
};

/*
 * Parse C's query into Q (METRIC its default).  0, or -1 with a reason
 * in ERR (a 400: one line).
 */
int mt_http_query_parse(struct MHD_Connection *c, enum mt_value metric,
			struct mt_http_query *q, char *err, size_t errlen);

/*
 * C's query arguments but those named in SKIP (NULL-terminated) and the
 * empty ones, for a link in a page: "&amp;key=value..." (URL-encoded,
 * HTML-escaped; an argument that does not fit in LEN is left out).
 */
void mt_http_query_link(struct MHD_Connection *c, const char *const *skip,
			char *buf, size_t len);

/*
 * Send LEN bytes at DATA (malloc()ed: the response frees it, also on
 * failure) with STATUS and content type TYPE.
 */
enum MHD_Result mt_http_send(struct MHD_Connection *c, unsigned status,
			     const char *type, char *data, size_t len);

/* An HTML page (200), as mt_http_send, with the Content-Security-Policy
 * CSP. */
enum MHD_Result mt_http_send_html(struct MHD_Connection *c, char *data,
				  size_t len, const char *csp);

/* LEN bytes at DATA (malloc()ed, as mt_http_send's) as a file to save,
 * FILENAME (a pprof profile: application/octet-stream, as Go sends it). */
enum MHD_Result mt_http_send_file(struct MHD_Connection *c, char *data,
				  size_t len, const char *filename);

/* A short text/plain answer: STATUS and a line. */
enum MHD_Result mt_http_text(struct MHD_Connection *c, unsigned status,
			     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The answer for ERR (-errno) of a profile request. */
enum MHD_Result mt_http_fail(struct MHD_Connection *c, int err);

/* The text report of P (memtrace's --text) into *DATA, *LEN.  0 or
 * -errno. */
int mt_http_text_report(const struct mt_profile *p,
			const struct mt_text_opts *o, char **data, size_t *len);

/* The handlers (http_server.c routes to them): /debug/pprof/...; the
 * rest (the page, its images, snapshots and diffs, 404s). */
enum MHD_Result mt_http_pprof(struct mt_http *h, struct MHD_Connection *c,
			      const char *url);
enum MHD_Result mt_http_page(struct mt_http *h, struct MHD_Connection *c,
			     const char *url, bool post);

/* /debug/pprof/symbol (http_symbol.c): BODY, LEN a POST's addresses;
 * BODY NULL: a GET's (in its query). */
enum MHD_Result mt_http_symbol(struct mt_http *h, struct MHD_Connection *c,
			       const char *body, size_t len);

/* The most bytes of addresses a POST to /debug/pprof/symbol may send
 * (some 100,000 addresses; beyond: a 413). */
#define MT_HTTP_SYMBOL_BODY ((size_t)2 << 20)

#endif
