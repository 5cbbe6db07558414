/* SPDX-License-Identifier: MIT */
/*
 * child.h: starting the command given after "--", held at a gate until the
 * probes are attached, so it is traced from its very first allocation.
 */
#ifndef MEMTRACE_CHILD_H
#define MEMTRACE_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "runas.h"

struct mt_child {
	pid_t pid;
	int gate_fd;   /* write end: one byte lets the child exec */
	int err_fd;    /* read end: errno of a failed exec, EOF on success */
	bool ptraced;  /* seized, to read its mappings at exec and exit */
	const struct mt_runas *runas; /* the user CMD runs as; NULL: ours */
	bool follow;   /* set before spawning: the processes it forks are
			  seized too (their exit stops, for their mappings) */
	bool null_stdin; /* CMD reads /dev/null, not ours (memtrace top
			    reads the terminal's keys) */
};

/* Find FILE like execvp does; 0 and PATH filled, or -errno. */
int mt_child_resolve(const char *file, char *path, size_t len);

/* Fork a child that waits at the gate, then execs EXE with ARGV. */
int mt_child_spawn(const char *exe, char **argv, struct mt_child *c);

/* Open the gate.  Returns 0 once CMD runs, or -errno if exec failed. */
int mt_child_release(struct mt_child *c);

/* Kill and reap a child that never got past the gate. */
void mt_child_abort(struct mt_child *c);

#endif
