// SPDX-License-Identifier: MIT
/* keys.c: a thread reading the terminal for `q` or Enter. */
#include "keys.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void *read_keys(void *arg)
{
	const struct mt_keys *k = arg;
	char c;

	for (;;) {
		ssize_t n = read(k->fd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL; /* end of input: Ctrl-C and -d still stop */
		if (c == 'q' || c == 'Q' || c == '\n' || c == '\r') {
			kill(getpid(), SIGINT);
			return NULL;
		}
	}
}

bool mt_keys_start(struct mt_keys *k)
{
	struct termios t;
	pid_t fg;

	memset(k, 0, sizeof(*k));
	k->fd = STDIN_FILENO;
	if (!isatty(k->fd) || tcgetattr(k->fd, &k->saved))
		return false;
	/* In the background, reading the terminal would stop memtrace. */
	fg = tcgetpgrp(k->fd);
	if (fg >= 0 && fg != getpgrp())
		return false;
	t = k->saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	k->restore = tcsetattr(k->fd, TCSANOW, &t) == 0;
	if (pthread_create(&k->thread, NULL, read_keys, k)) {
		mt_keys_stop(k);
		return false;
	}
	k->on = true;
	return true;
}

void mt_keys_stop(struct mt_keys *k)
{
	if (k->on) {
		pthread_cancel(k->thread);
		pthread_join(k->thread, NULL);
		k->on = false;
	}
	if (k->restore)
		tcsetattr(k->fd, TCSANOW, &k->saved);
	k->restore = false;
}
