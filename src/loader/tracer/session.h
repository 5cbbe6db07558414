/* SPDX-License-Identifier: MIT */
/*
 * session.h: what the event loop watches while the probes collect: the
 * duration, the signals, the target's exit, the child's ptrace stops,
 * new processes and new mappings.  Each is a registration in a struct
 * mt_loop; the caller may add its own (interval reports, the timeline)
 * to the same loop before mt_session_run.
 */
#ifndef MEMTRACE_SESSION_H
#define MEMTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "loop.h"
#include "profile.h"

enum mt_stop { MT_STOP_EXIT, MT_STOP_DURATION, MT_STOP_SIGNAL, MT_STOP_ERROR };

struct memleak_bpf;
struct mt_images;

struct mt_session {
	struct mt_loop loop;     /* the caller may add registrations */
	/* Following: the registry its processes are read into (images.h),
	 * and the BPF object whose iterator names their files; NULL: read
	 * from /proc alone. */
	struct mt_images *images;
	const struct memleak_bpf *skel;
	struct mt_process *proc; /* target; its modules are refreshed; NULL:
				    system-wide, on_new_files is called instead */
	bool is_child;           /* started by us (waitpid) or attached (-p) */
	bool ptraced;            /* child seized with exec/exit stops */
	double duration;         /* seconds; 0: no limit */
	int sigfd;               /* signalfd of mt_session_signals() */
	/* Called when the target has mapped new files (a dlopen), or on every
	 * refresh when system-wide; may be NULL. */
	void (*on_new_files)(void *ctx);
	/* Called on every refresh and when wake_fd is readable (a command and
	 * its descendants: the system-wide machinery); may be NULL. */
	void (*tick)(void *ctx);
	/* Following the child's descendants (they are seized too): called
	 * when one of them, process PID, stops at its exit; may be NULL. */
	void (*on_exit_stop)(void *ctx, pid_t pid);
	/* Following: called when descendant PID stops before it first runs
	 * (and at its later PTRACE_EVENT_STOPs), then when it has exited;
	 * may be NULL. */
	void (*on_new_child)(void *ctx, pid_t pid);
	void (*on_gone)(void *ctx, pid_t pid);
	bool follow;             /* reap and resume the descendants too */
	void *ctx;
	/* Called on every refresh, and at once when tick_fd (used only with
	 * on_tick) is readable; may be NULL. */
	void (*on_tick)(void *tick_ctx);
	void *tick_ctx;
	int tick_fd;
	/* Called when the ptraced child has just exec'ed, before it runs
	 * (its new image is mapped, its libraries not yet); may be NULL. */
	void (*on_exec)(void *ctx, pid_t pid);
	/* Called when PID stops with MT_DL_HOLD_SIGNAL sent by the kernel
	 * (ld.so's hook, for a process held there: follow.h); true when the
	 * signal was the hold's, and is not delivered.  May be NULL. */
	bool (*on_dl_hold)(void *ctx, pid_t pid);
	/* Set by on_exec or on_dl_hold: PID stays stopped, for its caller to
	 * resume later (PTRACE_CONT, signal 0). */
	bool keep_stopped;
	int wake_fd;             /* a new process allocated; -1: none */
	/* SIGUSR1: a report now, and tracing goes on; may be NULL (then
	 * the signal is ignored). */
	void (*on_report)(void *report_ctx);
	void *report_ctx;
	int pidfd;               /* the attached target's, while running */
	/* results */
	enum mt_stop stop;
	int signo;               /* with MT_STOP_SIGNAL */
	int error;               /* with MT_STOP_ERROR: errno of poll() */
	bool exited;             /* the target is gone */
	int exit_code;           /* child's exit code (128+signal if killed) */
	double start;            /* CLOCK_MONOTONIC seconds when it began */
	double elapsed;          /* seconds traced */
	uint64_t stop_ns;        /* CLOCK_MONOTONIC when tracing stopped */
};

/*
 * Block the signals the session waits for (SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT stop; SIGUSR1 asks for a report; SIGCHLD; others whose default
 * would kill memtrace are ignored with a note) and return a signalfd for
 * them.  Call before starting
 * a child, so no SIGCHLD is lost.  -errno on error.
 */
int mt_session_signals(void);

/*
 * Register the session's watches in s->loop (call once, after setting
 * the fields above; the caller's own registrations may come before or
 * after).  Returns 0 or -errno.
 */
int mt_session_prepare(struct mt_session *s);

/* Run the loop until a stop condition.  Returns 0 or -errno. */
int mt_session_run(struct mt_session *s);

/* After a stop for another reason: reap the child if it has exited. */
void mt_session_reap(struct mt_session *s);

#endif
