// SPDX-License-Identifier: MIT
/* session.c: the poll loop around signals, a timer and the target's exit. */
#include "session.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "modules.h"

#define REFRESH_MS 100

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mt_session_signals(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
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
	int ret = mt_modules_refresh(s->proc, true);

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
		if (main)
			mt_modules_refresh(s->proc, true);
		else if (event == PTRACE_EVENT_EXIT && s->on_exit_stop)
			s->on_exit_stop(s->ctx, pid);
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	} else if (event == PTRACE_EVENT_STOP) {
		/* A group stop, or a new descendant's first stop. */
		if (is_stop_signal(sig))
			ptrace(PTRACE_LISTEN, pid, NULL, NULL);
		else
			ptrace(PTRACE_CONT, pid, NULL, NULL);
	} else if (event) {
		ptrace(PTRACE_CONT, pid, NULL, NULL); /* fork, vfork */
	} else {
		/* A signal for the child: deliver it unchanged. */
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
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

/* Drain the signalfd; true when a stop signal arrived. */
static bool read_signals(struct mt_session *s)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		s->signo = (int)si.ssi_signo;
		stop = true;
	}
	return stop;
}

int mt_session_run(struct mt_session *s)
{
	double start = now_s();
	int pidfd = s->is_child || !s->proc ? -1 : open_pidfd((pid_t)s->proc->pid);
	struct pollfd fds[3] = {
		{ .fd = s->sigfd, .events = POLLIN },
		/* the target's exit, or (system-wide, or a command's
		 * descendants) a new process */
		{ .fd = pidfd >= 0 ? pidfd : s->wake_fd, .events = POLLIN },
		/* poll() skips a negative descriptor */
		{ .fd = s->on_tick ? s->tick_fd : -1, .events = POLLIN },
	};

	s->exited = false;
	for (;;) {
		int timeout = REFRESH_MS;

		if (s->duration > 0) {
			double left = start + s->duration - now_s();

			if (left <= 0) {
				s->stop = MT_STOP_DURATION;
				break;
			}
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		if (poll(fds, 3, timeout) < 0 && errno != EINTR) {
			s->stop = MT_STOP_ERROR;
			s->error = errno;
			break;
		}
		if (s->is_child)
			reap(s);
		if (read_signals(s)) {
			s->stop = MT_STOP_SIGNAL;
			break;
		}
		if (s->on_tick)
			s->on_tick(s->tick_ctx);
		if (s->tick)
			s->tick(s->ctx);
		if (!s->proc) {
			/* System-wide: no one target to follow or outlive. */
			if (s->on_new_files)
				s->on_new_files(s->ctx);
			continue;
		}
		/* Mappings change as libraries load: keep an up-to-date copy. */
		if (!s->exited && refresh(s) == -ESRCH && !s->is_child)
			s->exited = true;
		if (pidfd >= 0 && (fds[1].revents & POLLIN))
			s->exited = true;
		if (!s->is_child && pidfd < 0 && kill((pid_t)s->proc->pid, 0) &&
		    errno == ESRCH)
			s->exited = true;
		if (s->exited) {
			s->stop = MT_STOP_EXIT;
			break;
		}
	}
	s->elapsed = now_s() - start;
	s->stop_ns = (uint64_t)(now_s() * 1e9);
	if (pidfd >= 0)
		close(pidfd);
	return 0;
}
