// SPDX-License-Identifier: MIT
/* child.c: fork, gate, ptrace seize and exec of the traced command. */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "startup_clock.h"

/* 0 for an executable file, else why not: -ENOENT, -EISDIR, -EACCES... */
static int exec_file_error(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK))
		return -EACCES;
	return 0;
}

int mt_child_resolve(const char *file, char *path, size_t len)
{
	const char *dirs = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int ret = -ENOENT;

	if (strchr(file, '/')) {
		if ((size_t)snprintf(path, len, "%s", file) >= len)
			return -ENAMETOOLONG;
		return exec_file_error(path);
	}
	copy = strdup(dirs && *dirs ? dirs : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return -ENOMEM;
	for (dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if ((size_t)snprintf(path, len, "%s/%s", *dir ? dir : ".", file) >= len)
			continue;
		if (exec_file_error(path) == 0) {
			ret = 0;
			break;
		}
	}
	free(copy);
	return ret;
}

/* Standard input from /dev/null: 0 or errno. */
static int null_stdin(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
		return errno;
	if (fd != STDIN_FILENO)
		close(fd);
	return 0;
}

static void run_child(const char *exe, char **argv, int gate, int err,
		      const struct mt_child *child)
{
	const struct mt_runas *runas = child->runas;
	sigset_t none;
	char c;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (read(gate, &c, 1) != 1)
		_exit(127); /* memtrace gave up before releasing us */
	close(gate);
	e = child->null_stdin ? null_stdin() : 0;
	if (!e)
		e = -mt_runas_become(runas);
	if (!e) {
		execv(exe, argv);
		e = errno;
	}
	if (write(err, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int mt_child_spawn(const char *exe, char **argv, struct mt_child *c)
{
	int gate[2], err[2];

	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		close(gate[0]);
		close(gate[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int e = errno;

		close(gate[0]);
		close(gate[1]);
		close(err[0]);
		close(err[1]);
		return -e;
	}
	if (c->pid == 0) {
		close(gate[1]);
		close(err[0]);
		run_child(exe, argv, gate[0], err[1], c);
	}
	close(gate[0]);
	close(err[1]);
	c->gate_fd = gate[1];
	c->err_fd = err[0];
	/* Stops at exec and exit let us read its mappings at those moments;
	 * following, those of the processes it forks too. */
	c->ptraced = ptrace(PTRACE_SEIZE, c->pid, NULL,
			    (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
					   (c->follow ? PTRACE_O_TRACEFORK |
							PTRACE_O_TRACEVFORK : 0))) == 0;
	return 0;
}

int mt_child_release(struct mt_child *c)
{
	ssize_t n;
	int e = 0;

	mt_startup_end();
	if (write(c->gate_fd, "g", 1) != 1)
		e = errno;
	close(c->gate_fd);
	c->gate_fd = -1;
	if (e)
		return -e;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

void mt_child_abort(struct mt_child *c)
{
	if (c->gate_fd >= 0)
		close(c->gate_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->gate_fd = c->err_fd = -1;
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}
