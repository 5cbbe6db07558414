// SPDX-License-Identifier: MIT
/* http_admit.c: deadlines, eviction, caps and gone clients (http_admit.h). */
#include "http_admit.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop.h"

/* How often the watcher looks at deadlines while connections are open. */
#define TICK_MS 250

struct mt_http_conn {
	struct mt_http_conn *prev, *next;
	unsigned long id;
	int fd;
	int family;                /* the peer's, AF_UNIX: one peer */
	unsigned char peer[16];
	double since;              /* waiting for headers since */
	bool in_request;           /* headers in, not yet answered */
	bool watched;              /* a thread handles its request */
	bool shut;                 /* shut down by us */
	double long_end;           /* > 0: holds a long place until then */
	int gone;                  /* its client left (atomic) */
};

static __thread struct mt_http_conn *current;

bool mt_http_client_gone(void)
{
	return current && __atomic_load_n(&current->gone, __ATOMIC_ACQUIRE);
}

static void poke(struct mt_http_admit *a)
{
	uint64_t one = 1;

	if (write(a->efd, &one, sizeof(one)) < 0)
		return; /* full: it is awake anyway */
}

/* The peer of SA as a key: IPv4-mapped IPv6 as IPv4. */
static void peer_key(struct mt_http_conn *c, const struct sockaddr *sa)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
						  0, 0xff, 0xff };

	c->family = sa ? sa->sa_family : AF_UNIX;
	if (c->family == AF_INET) {
		memcpy(c->peer, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (c->family == AF_INET6) {
		const unsigned char *b =
			((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		if (!memcmp(b, mapped, 12)) {
			c->family = AF_INET;
			memcpy(c->peer, b + 12, 4);
		} else {
			memcpy(c->peer, b, 16);
		}
	} else {
		c->family = AF_UNIX;
	}
}

static bool same_peer(const struct mt_http_conn *a,
		      const struct mt_http_conn *b)
{
	return a->family == b->family &&
	       memcmp(a->peer, b->peer, a->family == AF_INET6 ? 16 : 4) == 0;
}

/* Shut C's socket: its thread reads the end and closes it.  Under the
 * lock, C in the list: its fd is still its own (the list loses C before
 * libmicrohttpd closes the fd). */
static void shut(struct mt_http_conn *c)
{
	if (c->shut)
		return;
	c->shut = true;
	shutdown(c->fd, SHUT_RDWR);
}

/* The connection other than NEW that has waited longest for its
 * headers, of NEW's peer when PEER; NULL if none. */
static struct mt_http_conn *longest_waiting(struct mt_http_admit *a,
					    const struct mt_http_conn *new,
					    bool peer)
{
	struct mt_http_conn *best = NULL;

	for (struct mt_http_conn *c = a->conns; c; c = c->next)
		if (c != new && !c->in_request && !c->shut &&
		    (!peer || same_peer(c, new)) &&
		    (!best || c->since < best->since))
			best = c;
	return best;
}

/* A new connection C (counted): make room near the limits. */
static void admit_locked(struct mt_http_admit *a, struct mt_http_conn *c)
{
	size_t same = 0;
	struct mt_http_conn *victim;

	for (struct mt_http_conn *o = a->conns; o; o = o->next)
		same += !o->shut && same_peer(o, c);
	if (same > MT_ADMIT_PER_PEER) {
		victim = longest_waiting(a, c, true);
		shut(victim ? victim : c);
	} else if (a->nconns > MT_ADMIT_SOFT) {
		victim = longest_waiting(a, c, false);
		if (victim)
			shut(victim);
	}
}

void mt_http_admit_notify(void *cls, struct MHD_Connection *mc,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct mt_http_admit *a = cls;
	struct mt_http_conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *addr =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		c = calloc(1, sizeof(*c));
		if (!c)
			return; /* unwatched, unbounded: rare */
		c->fd = fd ? fd->connect_fd : -1;
		peer_key(c, addr ? addr->client_addr : NULL);
		c->since = mt_loop_now();
		pthread_mutex_lock(&a->lock);
		c->id = ++a->next_id;
		c->next = a->conns;
		if (a->conns)
			a->conns->prev = c;
		a->conns = c;
		a->nconns++;
		if (c->fd >= 0)
			admit_locked(a, c);
		pthread_mutex_unlock(&a->lock);
		*socket_context = c;
		poke(a);
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&a->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		a->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	a->nconns--;
	pthread_mutex_unlock(&a->lock);
	*socket_context = NULL;
	free(c);
}

struct mt_http_conn *mt_http_admit_conn(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

void mt_http_admit_headers(struct mt_http_admit *a, struct mt_http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&a->lock);
	c->in_request = true;
	pthread_mutex_unlock(&a->lock);
}

void mt_http_admit_done(struct mt_http_admit *a, struct mt_http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&a->lock);
	c->in_request = false;
	c->since = mt_loop_now();
	pthread_mutex_unlock(&a->lock);
}

int mt_http_admit_long(struct mt_http_admit *a, struct mt_http_conn *c,
		       unsigned seconds, unsigned *retry)
{
	double now = mt_loop_now(), first_all = INFINITY, first_peer = INFINITY;
	size_t all = 0, peer = 0;
	int ret = 0;

	*retry = 0;
	if (!c || !seconds)
		return 0;
	pthread_mutex_lock(&a->lock);
	for (struct mt_http_conn *o = a->conns; o; o = o->next) {
		if (o->long_end <= 0)
			continue;
		all++;
		first_all = fmin(first_all, o->long_end);
		if (same_peer(o, c)) {
			peer++;
			first_peer = fmin(first_peer, o->long_end);
		}
	}
	if (peer >= MT_ADMIT_LONG_PER_PEER || all >= MT_ADMIT_LONG) {
		double first = peer >= MT_ADMIT_LONG_PER_PEER ? first_peer
							      : first_all;

		*retry = (unsigned)fmax(1, ceil(first - now));
		ret = -EBUSY;
	} else {
		c->long_end = now + seconds;
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

void mt_http_admit_enter(struct mt_http_admit *a, struct mt_http_conn *c)
{
	current = c;
	if (!c)
		return;
	pthread_mutex_lock(&a->lock);
	c->watched = true;
	pthread_mutex_unlock(&a->lock);
	poke(a);
}

void mt_http_admit_leave(struct mt_http_admit *a, struct mt_http_conn *c)
{
	current = NULL;
	if (!c)
		return;
	pthread_mutex_lock(&a->lock);
	c->watched = false;
	c->long_end = 0;
	pthread_mutex_unlock(&a->lock);
}

/* The watcher: shut connections past their headers' deadline; poll the
 * sockets of the requests handled for their clients' leaving. */
static void *watch(void *arg)
{
	struct mt_http_admit *a = arg;
	struct pollfd *pfd = NULL;
	unsigned long *ids = NULL;
	size_t cap = 0;

	for (;;) {
		size_t n = 0;
		bool any, woke = false;
		double now = mt_loop_now();
		uint64_t v;

		pthread_mutex_lock(&a->lock);
		if (a->stopping) {
			pthread_mutex_unlock(&a->lock);
			break;
		}
		if (cap < a->nconns + 1) {
			size_t want = a->nconns + 64;
			struct pollfd *p = realloc(pfd, want * sizeof(*p));
			unsigned long *i = p ? realloc(ids, want * sizeof(*i)) : NULL;

			if (p)
				pfd = p;
			if (i) {
				ids = i;
				cap = want;
			}
		}
		for (struct mt_http_conn *c = a->conns; c; c = c->next) {
			if (!c->in_request && now - c->since >= MT_ADMIT_HEADER_S)
				shut(c);
			if (c->watched && !c->gone && n + 1 < cap) {
				pfd[n] = (struct pollfd){ .fd = c->fd, .events = POLLRDHUP };
				ids[n++] = c->id;
			}
		}
		any = a->conns != NULL;
		pthread_mutex_unlock(&a->lock);
		if (!cap)
			continue;
		pfd[n] = (struct pollfd){ .fd = a->efd, .events = POLLIN };
		if (poll(pfd, n + 1, any ? TICK_MS : -1) <= 0)
			continue;
		if (pfd[n].revents && read(a->efd, &v, sizeof(v)) < 0)
			v = 0;
		pthread_mutex_lock(&a->lock);
		for (size_t i = 0; i < n; i++) {
			if (!(pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
				continue;
			/* Still the same connection, still handled: the fd
			 * polled was its own all along. */
			for (struct mt_http_conn *c = a->conns; c; c = c->next)
				if (c->id == ids[i] && c->watched) {
					__atomic_store_n(&c->gone, 1, __ATOMIC_RELEASE);
					woke = true;
				}
		}
		pthread_mutex_unlock(&a->lock);
		if (woke && a->wake)
			a->wake(a->wake_ctx);
	}
	free(pfd);
	free(ids);
	return NULL;
}

int mt_http_admit_init(struct mt_http_admit *a, void (*wake)(void *ctx),
		       void *ctx)
{
	int err;

	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	a->inited = true;
	a->wake = wake;
	a->wake_ctx = ctx;
	a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->efd < 0)
		return -errno;
	err = pthread_create(&a->watcher, NULL, watch, a);
	if (err)
		return -err;
	a->watcher_on = true;
	return 0;
}

void mt_http_admit_stop(struct mt_http_admit *a)
{
	if (!a->watcher_on)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_mutex_unlock(&a->lock);
	poke(a);
	pthread_join(a->watcher, NULL);
	a->watcher_on = false;
}

void mt_http_admit_free(struct mt_http_admit *a)
{
	if (!a->inited)
		return;
	mt_http_admit_stop(a);
	if (a->efd >= 0)
		close(a->efd);
	a->efd = -1;
	pthread_mutex_destroy(&a->lock);
	a->inited = false;
}
