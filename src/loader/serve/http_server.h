/* SPDX-License-Identifier: MIT */
/*
 * http_server.h: --http.  While tracing, serve what Go's net/http/pprof
 * serves, for the traced processes: /debug/pprof/heap and allocs (and
 * the index), /metrics for Prometheus, and / for people (timeline, flame
 * graph, the last snapshots and the diff of any two).  Built on
 * libmicrohttpd, a thread per connection, bounded: connections (in all
 * and per peer), request size (headers; no request has a body), time
 * (idle connections are closed, a request waits for the maps a bounded
 * time) and jobs waiting for the loop.  No request changes what is
 * traced.  The maps are read by the loop thread (http_bridge.h);
 * symbols and encodings are made in the requests' threads.
 */
#ifndef MEMTRACE_HTTP_SERVER_H
#define MEMTRACE_HTTP_SERVER_H

#include "options.h"

struct mt_http;
struct mt_tracer;

/*
 * Listen on o->http and serve TR (started, its loop not yet run; the
 * reports' SIGUSR1 handler already set: a snapshot is taken too).  Says
 * where on standard error.  SYMBOLS: the trace's reports' symbol cache,
 * shared (it must outlive the server; NULL: one of the server's own).
 * 0, or an exit status after a message.
 */
struct mt_symcache;
int mt_http_start(struct mt_http **out, const struct mt_options *o,
		  struct mt_tracer *tr, struct mt_symcache *symbols);

/*
 * Tracing has stopped (the loop returned): answer no more profile
 * requests, close every connection, free H.  NULL is a no-op.
 */
void mt_http_stop(struct mt_http *h);

#endif
