// SPDX-License-Identifier: MIT
/* session.c: the registrations that watch the target while tracing. */
#include "session.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deferred_unwind.h"
#include "memleak.h"
#include "mapping_capture.h"
#include "vma_files.h"
#include "perf_map.h"

/* Mappings, new processes and the system-wide scan are looked at this
 * often (and at once when a ring buffer says so). */
#define REFRESH_S 0.1

/* Signals whose default would kill memtrace, and mean nothing to it. */
static const int ignored[] = { SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGPWR,
			       SIGIO };

int mt_session_signals(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGQUIT);
	/* Signals that would kill memtrace and lose the trace: noted. */
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaddset(&set, ignored[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static void stop(struct mt_session *s, enum mt_stop why)
{
	s->stop = why;
	mt_loop_stop(&s->loop);
}

static void record_exit(struct mt_session *s, int status)
{
	s->exited = true;
	if (WIFEXITED(status))
		s->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		s->exit_code = 128 + WTERMSIG(status);
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/* Capture new mappings; a new library may bring functions to probe. */
static int refresh(struct mt_session *s)
{
	int ret = mt_images_refresh_modules(s->images, s->skel, s->proc, true);

	if (ret > 0 && s->on_new_files)
		s->on_new_files(s->ctx);
	return ret;
}

/*
 * One ptrace stop of the child (or, following, of a descendant): capture
 * mappings, then let it go on.
 */
static void handle_stop(struct mt_session *s, pid_t pid, int status)
{
	int event = status >> 16, sig = WSTOPSIG(status);
	bool main = pid == (pid_t)s->proc->pid;

	if (event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_EXIT) {
		if (event == PTRACE_EVENT_EXEC && s->on_exec)
			s->on_exec(s->ctx, pid);
		/* Its JIT's perf map, while its root is there to find it. */
		if (event == PTRACE_EVENT_EXIT)
			mt_perf_map_keep((uint32_t)pid);
		/* Its stacks copied for the loader: what they need of it. */
		if (event == PTRACE_EVENT_EXIT)
			mt_deferred_unwind_exit((uint32_t)pid);
		if (main)
			mt_images_refresh_modules(s->images, s->skel, s->proc,
						  true);
		else if (event == PTRACE_EVENT_EXIT && s->on_exit_stop)
			s->on_exit_stop(s->ctx, pid);
		if (!s->keep_stopped)
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		s->keep_stopped = false;
	} else if (event == PTRACE_EVENT_STOP) {
		/* A group stop, or a new descendant's first stop. */
		if (!main && s->on_new_child)
			s->on_new_child(s->ctx, pid);
		if (is_stop_signal(sig))
			ptrace(PTRACE_LISTEN, pid, NULL, NULL);
		else
			ptrace(PTRACE_CONT, pid, NULL, NULL);
	} else if (event) {
		ptrace(PTRACE_CONT, pid, NULL, NULL); /* fork, vfork */
	} else {
		siginfo_t si;

		/* ld.so's hook held it for us (follow.h): taken, not delivered. */
		if (sig == MT_DL_HOLD_SIGNAL && s->on_dl_hold &&
		    ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) == 0 &&
		    si.si_code == SI_KERNEL && s->on_dl_hold(s->ctx, pid))
			sig = 0;
		/* A signal for the child: deliver it unchanged. */
		if (!s->keep_stopped || sig)
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
		s->keep_stopped = false;
	}
}

static void reap(struct mt_session *s)
{
	pid_t main, pid;
	int status;

	if (!s->proc)
		return;
	main = (pid_t)s->proc->pid;
	/* Following, every stop of every descendant comes here too. */
	while ((s->follow || !s->exited) &&
	       (pid = waitpid(s->follow ? -1 : main, &status,
			      WNOHANG | __WALL)) > 0) {
		if (WIFSTOPPED(status) && s->ptraced)
			handle_stop(s, pid, status);
		else if (pid == main && (WIFEXITED(status) || WIFSIGNALED(status)))
			record_exit(s, status);
		else if ((WIFEXITED(status) || WIFSIGNALED(status)) && s->on_gone)
			s->on_gone(s->ctx, pid);
	}
}

void mt_session_reap(struct mt_session *s)
{
	if (s->is_child)
		reap(s);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* The target is gone: stop, unless the child's exit is still to reap. */
static void check_exit(struct mt_session *s)
{
	if (s->exited)
		stop(s, MT_STOP_EXIT);
}

/* The signalfd: a stop signal, SIGUSR1 (a report now), SIGCHLD. */
static void on_signal(void *arg, int fd, short revents)
{
	struct mt_session *s = arg;
	struct signalfd_siginfo si;
	bool report = false;

	(void)revents;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (si.ssi_signo == SIGUSR1) {
			report = true;
			continue;
		}
		if (si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM &&
		    si.ssi_signo != SIGHUP && si.ssi_signo != SIGQUIT) {
			fprintf(stderr, "memtrace: %s ignored (SIGUSR1: a report now; SIGINT, SIGTERM: stop)\n",
				strsignal((int)si.ssi_signo));
			continue;
		}
		s->signo = (int)si.ssi_signo;
		stop(s, MT_STOP_SIGNAL);
	}
	if (s->is_child)
		reap(s);
	if (report && s->on_report && !s->loop.stopped)
		s->on_report(s->report_ctx);
	if (!s->loop.stopped && s->proc)
		check_exit(s);
}

/* The attached target's pidfd: it exited. */
static void on_pidfd(void *arg, int fd, short revents)
{
	struct mt_session *s = arg;

	(void)fd;
	(void)revents;
	s->exited = true;
	stop(s, MT_STOP_EXIT);
}

/* A new process allocated (system-wide, or a command's descendants). */
static void on_wake(void *arg, int fd, short revents)
{
	struct mt_session *s = arg;

	(void)fd;
	(void)revents;
	if (s->tick)
		s->tick(s->ctx);
	else if (!s->proc && s->on_new_files)
		s->on_new_files(s->ctx);
}

/* The unwinder asked for tables. */
static void on_tick_fd(void *arg, int fd, short revents)
{
	struct mt_session *s = arg;

	(void)fd;
	(void)revents;
	s->on_tick(s->tick_ctx);
}

/* Every REFRESH_S: mappings, new processes, and whether the target lives. */
static void on_refresh(void *arg, double now)
{
	struct mt_session *s = arg;

	(void)now;
	if (s->is_child)
		reap(s);
	if (s->on_tick)
		s->on_tick(s->tick_ctx);
	if (s->tick)
		s->tick(s->ctx);
	if (!s->proc) {
		/* System-wide: no one target to follow or outlive. */
		if (s->on_new_files)
			s->on_new_files(s->ctx);
		return;
	}
	/* Mappings change as libraries load: keep an up-to-date copy. */
	if (!s->exited && refresh(s) == -ESRCH && !s->is_child)
		s->exited = true;
	if (!s->is_child && kill((pid_t)s->proc->pid, 0) && errno == ESRCH)
		s->exited = true;
	check_exit(s);
}

static void on_duration(void *arg, double now)
{
	(void)now;
	stop(arg, MT_STOP_DURATION);
}

int mt_session_prepare(struct mt_session *s)
{
	struct mt_loop *l = &s->loop;
	int pidfd = s->is_child || !s->proc ? -1
				: open_pidfd((pid_t)s->proc->pid);
	int ret = mt_loop_add_fd(l, s->sigfd, on_signal, s);

	s->exited = false;
	s->start = mt_loop_now();
	if (!ret)
		ret = mt_loop_add_fd(l, pidfd, on_pidfd, s);
	if (!ret)
		ret = mt_loop_add_fd(l, s->wake_fd, on_wake, s);
	if (!ret && s->on_tick)
		ret = mt_loop_add_fd(l, s->tick_fd, on_tick_fd, s);
	if (!ret)
		ret = mt_loop_add_timer(l, REFRESH_S, 0, on_refresh, s);
	if (!ret && s->duration > 0)
		ret = mt_loop_add_timer(l, 0, s->duration, on_duration, s);
	s->pidfd = pidfd;
	return ret;
}

int mt_session_run(struct mt_session *s)
{
	int ret = mt_loop_run(&s->loop);

	if (ret) {
		s->stop = MT_STOP_ERROR;
		s->error = -ret;
	}
	s->elapsed = mt_loop_now() - s->start;
	s->stop_ns = (uint64_t)(mt_loop_now() * 1e9);
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	return ret;
}
