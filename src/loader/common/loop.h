/* SPDX-License-Identifier: MIT */
/*
 * loop.h: memtrace's one event loop.  Everything that happens while
 * tracing is a registration: a descriptor that becomes readable (the
 * signalfd, the target's pidfd, the new-process and missing-table ring
 * buffers) or a periodic timer (refreshing mappings, the timeline, the
 * interval reports, the duration).  One thread, poll(2), no callbacks
 * from signal handlers.
 */
#ifndef MEMTRACE_LOOP_H
#define MEMTRACE_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MT_LOOP_MAX_FDS 8
#define MT_LOOP_MAX_TIMERS 8

/* Called when FD is readable (or hung up, or in error: REVENTS says). */
typedef void (*mt_loop_fd_fn)(void *ctx, int fd, short revents);
/* Called when a timer is due; NOW is CLOCK_MONOTONIC in seconds. */
typedef void (*mt_loop_timer_fn)(void *ctx, double now);

struct mt_loop {
	struct mt_loop_fd {
		int fd;
		mt_loop_fd_fn fn;
		void *ctx;
	} fds[MT_LOOP_MAX_FDS];
	size_t nfds;
	struct mt_loop_timer {
		double period;   /* seconds; 0: fires once */
		double due;      /* CLOCK_MONOTONIC seconds */
		bool done;       /* a one-shot timer that fired */
		mt_loop_timer_fn fn;
		void *ctx;
	} timers[MT_LOOP_MAX_TIMERS];
	size_t ntimers;
	bool stopped;
	int error;           /* errno of a failed poll(), which stops the loop */
};

/* CLOCK_MONOTONIC in seconds; and in ns (bpf_ktime_get_ns's clock). */
double mt_loop_now(void);
uint64_t mt_loop_now_ns(void);

/* That clock's second T as a timespec (a deadline for a condition
 * variable on CLOCK_MONOTONIC, e.g. mt_loop_now() + 2). */
struct timespec mt_loop_timespec(double t);

/* Watch FD (ignored when negative).  0, or -ENOSPC when full. */
int mt_loop_add_fd(struct mt_loop *l, int fd, mt_loop_fd_fn fn, void *ctx);

/*
 * Call FN every PERIOD seconds from now (the first time after PERIOD), or
 * once, AFTER seconds from now, when PERIOD is 0.  0, or -ENOSPC/-EINVAL.
 */
int mt_loop_add_timer(struct mt_loop *l, double period, double after,
		      mt_loop_timer_fn fn, void *ctx);

/* Make mt_loop_run return once the current callback is done. */
void mt_loop_stop(struct mt_loop *l);

/*
 * Run until mt_loop_stop (or a failed poll(): l->error).  A timer that
 * falls behind (a slow callback) is not called again to catch up: it
 * fires once and is due PERIOD after that.  Returns 0 or -errno.
 */
int mt_loop_run(struct mt_loop *l);

#endif
