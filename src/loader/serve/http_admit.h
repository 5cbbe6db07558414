/* SPDX-License-Identifier: MIT */
/*
 * http_admit.h: what keeps --http available (libmicrohttpd runs a thread
 * per connection; its timeout only measures silence, and a thread in a
 * handler does not read its socket):
 *
 *   - a connection must send a whole request's headers within
 *     MT_ADMIT_HEADER_S of opening (or of its last answer): one that
 *     trickles a header line now and then (slowloris) is shut then;
 *   - near the limits (connections in all, from one peer) a new
 *     connection evicts the one that has waited longest for its headers,
 *     so trickling connections cannot keep anyone else out;
 *   - while a request is handled, a thread watches its socket: a client
 *     that has gone (closed, reset) cancels the request's waits
 *     (mt_http_client_gone), its thread ends at once;
 *   - long requests (?seconds=N) are capped per peer and in all: beyond,
 *     a 503 with Retry-After (when the first of them ends).
 */
#ifndef MEMTRACE_HTTP_ADMIT_H
#define MEMTRACE_HTTP_ADMIT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define MT_ADMIT_HEADER_S 15.0       /* a request's headers, whole */
#define MT_ADMIT_CONNECTIONS 128     /* libmicrohttpd's limit */
#define MT_ADMIT_SOFT 112            /* beyond: evict the longest waiting */
#define MT_ADMIT_PER_PEER 64         /* from one address */
#define MT_ADMIT_LONG 32             /* ?seconds requests, in all */
#define MT_ADMIT_LONG_PER_PEER 8     /* ... from one address */

struct mt_http_conn;

struct mt_http_admit {
	pthread_mutex_t lock;
	struct mt_http_conn *conns;   /* every open connection */
	size_t nconns;
	unsigned long next_id;
	int efd;                      /* wakes the watcher */
	pthread_t watcher;
	bool inited, watcher_on, stopping;
	/* Called (no lock held) when clients have gone: wakes the waits
	 * that check mt_http_client_gone. */
	void (*wake)(void *ctx);
	void *wake_ctx;
};

/* Start A's watcher thread.  0 or -errno. */
int mt_http_admit_init(struct mt_http_admit *a, void (*wake)(void *ctx),
		       void *ctx);

/* Stop the watcher (before MHD_stop_daemon), free A (after). */
void mt_http_admit_stop(struct mt_http_admit *a);
void mt_http_admit_free(struct mt_http_admit *a);

/* MHD_OPTION_NOTIFY_CONNECTION's callback (CLS: A). */
void mt_http_admit_notify(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code);

/* C's connection state (NULL if none). */
struct mt_http_conn *mt_http_admit_conn(struct MHD_Connection *c);

/* C's request has its headers: no deadline until it is answered. */
void mt_http_admit_headers(struct mt_http_admit *a, struct mt_http_conn *c);

/*
 * A request of C that waits SECONDS (0: not a long one): may it?  0, or
 * -EBUSY with the seconds until a place frees in *RETRY.
 */
int mt_http_admit_long(struct mt_http_admit *a, struct mt_http_conn *c,
		       unsigned seconds, unsigned *retry);

/* Around the handling of C's request in this thread: its socket
 * watched, mt_http_client_gone() its; at the end its long place freed. */
void mt_http_admit_enter(struct mt_http_admit *a, struct mt_http_conn *c);
void mt_http_admit_leave(struct mt_http_admit *a, struct mt_http_conn *c);

/* C's request answered (MHD_OPTION_NOTIFY_COMPLETED): its next one's
 * headers are due within MT_ADMIT_HEADER_S. */
void mt_http_admit_done(struct mt_http_admit *a, struct mt_http_conn *c);

/* Has the client of the request this thread handles gone? */
bool mt_http_client_gone(void);

#endif
