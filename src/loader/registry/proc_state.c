// SPDX-License-Identifier: MIT
/* proc_state.c: a process's state and flags from /proc/PID/stat, its name. */
#include "proc_state.h"

#include <stdio.h>
#include <string.h>

#define PF_EXITING 0x00000004U /* include/linux/sched.h */
#define PF_KTHREAD 0x00200000U

/* PID's state letter and flags from /proc/PID/stat; false if gone. */
static bool read_stat(pid_t pid, char *state, unsigned *flags)
{
	char name[64], line[1024];
	const char *p;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return false;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	/* "pid (comm) S ppid pgrp session tty tpgid flags ...": comm may
	 * hold spaces and parentheses, so parse from its last ')'. */
	p = p ? strrchr(line, ')') : NULL;
	return p && sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", state, flags) == 2;
}

/* What a process is, from its stat line's state letter and flags. */
static enum mt_proc_state classify(char state, unsigned flags)
{
	if (state == 'X' || state == 'x')
		return MT_PROC_GONE;
	if (state == 'Z')
		return MT_PROC_ZOMBIE;
	return flags & PF_KTHREAD ? MT_PROC_KTHREAD : MT_PROC_RUNNING;
}

enum mt_proc_state mt_proc_state(pid_t pid)
{
	unsigned flags;
	char state;

	return read_stat(pid, &state, &flags) ? classify(state, flags)
					      : MT_PROC_GONE;
}

bool mt_proc_exiting(pid_t pid)
{
	unsigned flags;
	char state;

	return !read_stat(pid, &state, &flags) ||
	       classify(state, flags) != MT_PROC_RUNNING ||
	       (flags & PF_EXITING);
}

bool mt_proc_comm(pid_t pid, char *buf, size_t len)
{
	char name[64];
	bool ok;
	FILE *f;

	if (len)
		buf[0] = '\0';
	snprintf(name, sizeof(name), "/proc/%d/comm", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return false;
	ok = len && fgets(buf, (int)len, f) != NULL;
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	else if (len)
		buf[0] = '\0';
	fclose(f);
	return ok;
}
