/* SPDX-License-Identifier: MIT */
/*
 * keys.h: `q` or Enter on the terminal stops tracing.  Ctrl-C reaches
 * every process of a pipeline (`memtrace --folded | flamegraph.pl`), and
 * the others die before memtrace's report reaches them; a key reaches
 * memtrace alone, which then stops as on SIGINT.
 */
#ifndef MEMTRACE_KEYS_H
#define MEMTRACE_KEYS_H

#include <pthread.h>
#include <stdbool.h>
#include <termios.h>

struct mt_keys {
	bool on;                /* a thread is reading the terminal */
	int fd;                 /* standard input, a terminal */
	bool restore;           /* SAVED is to be put back */
	struct termios saved;
	pthread_t thread;
};

/*
 * When standard input is a terminal and memtrace is not in the background:
 * read it without echo, key by key, in a thread that sends memtrace a
 * SIGINT at `q` or Enter.  Call after the signals are blocked (the thread
 * inherits the mask).  True when on.
 */
bool mt_keys_start(struct mt_keys *k);

/* Stop reading and give the terminal back its settings. */
void mt_keys_stop(struct mt_keys *k);

#endif
