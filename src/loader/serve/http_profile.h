/* SPDX-License-Identifier: MIT */
/*
 * http_profile.h: profiles for the HTTP server's requests, made in their
 * own threads from the maps the loop thread read (http_bridge.h); and the
 * page's snapshots, taken by a thread of their own every
 * --snapshot-interval, on SIGUSR1, or by a request (the page's button).
 */
#ifndef MEMTRACE_HTTP_PROFILE_H
#define MEMTRACE_HTTP_PROFILE_H

#include <stdbool.h>

#include "http_request.h"

/*
 * The profile of now as Q asks (its processes; with ?seconds, the alloc
 * values of the next Q->seconds seconds, the in-use values of their end),
 * symbolised, --comm applied.  0 or -errno: -ESRCH when Q's ?pid= or
 * ?comm= matches no traced process.
 */
int mt_http_profile(struct mt_http *h, const struct mt_http_query *q,
		    struct mt_profile *prof);

/* The answer for ERR of mt_http_profile: -ESRCH a 404 saying which
 * filter matched nothing, the rest as mt_http_fail. */
enum MHD_Result mt_http_profile_fail(struct MHD_Connection *c,
				     const struct mt_http_query *q, int err);

/* Take a snapshot for the page now (WHY: "interval", "signal",
 * "button"); its number in *SEQ.  0 or -errno. */
int mt_http_take_snapshot(struct mt_http *h, const char *why, unsigned *seq);

/* Wait S seconds, or less when the server stops or the request's client
 * goes (mt_http_client_gone): false then. */
bool mt_http_sleep(struct mt_http *h, double s);

/* The snapshot thread: start it; ask it for one (SIGUSR1, from the loop
 * thread: it does not wait); stop it (and every mt_http_sleep). */
int mt_http_snapper_start(struct mt_http *h);
void mt_http_snapshot_signal(struct mt_http *h);
void mt_http_snapper_stop(struct mt_http *h);

#endif
