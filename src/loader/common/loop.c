// SPDX-License-Identifier: MIT
/* loop.c: poll(2) over registered descriptors and timers. */
#include "loop.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <time.h>

double mt_loop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t mt_loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct timespec mt_loop_timespec(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - floor(t)) * 1e9) };

	return ts;
}

int mt_loop_add_fd(struct mt_loop *l, int fd, mt_loop_fd_fn fn, void *ctx)
{
	if (fd < 0)
		return 0;
	if (l->nfds == MT_LOOP_MAX_FDS)
		return -ENOSPC;
	l->fds[l->nfds++] = (struct mt_loop_fd){ fd, fn, ctx };
	return 0;
}

int mt_loop_add_timer(struct mt_loop *l, double period, double after,
		      mt_loop_timer_fn fn, void *ctx)
{
	double first = period > 0 ? period : after;

	if (!(first >= 0) || !isfinite(first) || period < 0)
		return -EINVAL;
	if (l->ntimers == MT_LOOP_MAX_TIMERS)
		return -ENOSPC;
	l->timers[l->ntimers++] = (struct mt_loop_timer){
		.period = period, .due = mt_loop_now() + first, .fn = fn,
		.ctx = ctx,
	};
	return 0;
}

void mt_loop_stop(struct mt_loop *l)
{
	l->stopped = true;
}

/* Milliseconds until the next timer is due (rounded up), -1 if none. */
static int next_timeout(const struct mt_loop *l, double now)
{
	double first = INFINITY;

	for (size_t i = 0; i < l->ntimers; i++)
		if (!l->timers[i].done && l->timers[i].due < first)
			first = l->timers[i].due;
	if (first == INFINITY)
		return -1;
	if (first <= now)
		return 0;
	/* Capped: a timer hours away is still a bounded poll. */
	return first - now > 3600 ? 3600 * 1000 : (int)ceil((first - now) * 1000);
}

static void run_timers(struct mt_loop *l)
{
	double now = mt_loop_now();

	for (size_t i = 0; i < l->ntimers && !l->stopped; i++) {
		struct mt_loop_timer *t = &l->timers[i];

		if (t->done || t->due > now)
			continue;
		if (t->period > 0) {
			t->due += t->period;
			if (t->due <= now) /* fell behind: no burst of catch-ups */
				t->due = now + t->period;
		} else {
			t->done = true;
		}
		t->fn(t->ctx, now);
	}
}

int mt_loop_run(struct mt_loop *l)
{
	struct pollfd pfd[MT_LOOP_MAX_FDS];

	l->stopped = false;
	l->error = 0;
	while (!l->stopped) {
		int n;

		for (size_t i = 0; i < l->nfds; i++)
			pfd[i] = (struct pollfd){ .fd = l->fds[i].fd,
						  .events = POLLIN };
		n = poll(pfd, l->nfds, next_timeout(l, mt_loop_now()));
		if (n < 0 && errno != EINTR) {
			l->error = errno;
			break;
		}
		for (size_t i = 0; n > 0 && i < l->nfds && !l->stopped; i++)
			if (pfd[i].revents)
				l->fds[i].fn(l->fds[i].ctx, l->fds[i].fd,
					     pfd[i].revents);
		if (!l->stopped)
			run_timers(l);
	}
	return l->error ? -l->error : 0;
}
