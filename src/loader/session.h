/* SPDX-License-Identifier: MIT */
/*
 * session.h: waiting while the probes collect: until the duration ends, a
 * signal arrives or the target exits, capturing the target's mappings as
 * they change.
 */
#ifndef MEMTRACE_SESSION_H
#define MEMTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"

enum mt_stop { MT_STOP_EXIT, MT_STOP_DURATION, MT_STOP_SIGNAL, MT_STOP_ERROR };

struct mt_session {
	struct mt_process *proc; /* target; its modules are refreshed; NULL:
				    system-wide, on_new_files is called instead */
	bool is_child;           /* started by us (waitpid) or attached (-p) */
	bool ptraced;            /* child seized with exec/exit stops */
	double duration;         /* seconds; 0: no limit */
	int sigfd;               /* signalfd for SIGINT/SIGTERM/SIGHUP/SIGCHLD */
	/* Called when the target has mapped new files (a dlopen), or on every
	 * turn of the loop when system-wide; may be NULL. */
	void (*on_new_files)(void *ctx);
	/* Called on every turn of the loop (a command and its descendants:
	 * the system-wide machinery); may be NULL. */
	void (*tick)(void *ctx);
	/* Following the child's descendants (they are seized too): called
	 * when one of them, process PID, stops at its exit; may be NULL. */
	void (*on_exit_stop)(void *ctx, pid_t pid);
	bool follow;             /* reap and resume the descendants too */
	void *ctx;
	/* Called on every turn of the loop (at least every 100 ms), and at
	 * once when tick_fd (used only with on_tick) is readable; may be NULL. */
	void (*on_tick)(void *tick_ctx);
	void *tick_ctx;
	int tick_fd;
	/* Called when the ptraced child has just exec'ed, before it runs
	 * (its new image is mapped, its libraries not yet); may be NULL. */
	void (*on_exec)(void *ctx, pid_t pid);
	int wake_fd;             /* also wakes the loop when readable; -1: none
				    (not with -p, whose target's exit does) */
	/* results */
	enum mt_stop stop;
	int signo;               /* with MT_STOP_SIGNAL */
	int error;               /* with MT_STOP_ERROR: errno of poll() */
	bool exited;             /* the target is gone */
	int exit_code;           /* child's exit code (128+signal if killed) */
	double elapsed;          /* seconds traced */
	uint64_t stop_ns;        /* CLOCK_MONOTONIC when tracing stopped */
};

/*
 * Block the signals the session waits for and return a signalfd for them.
 * Call before starting a child, so no SIGCHLD is lost.  -errno on error.
 */
int mt_session_signals(void);

/* Run until a stop condition.  Returns 0 or -errno. */
int mt_session_run(struct mt_session *s);

/* After a stop for another reason: reap the child if it has exited. */
void mt_session_reap(struct mt_session *s);

#endif
