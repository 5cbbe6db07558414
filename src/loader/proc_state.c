// SPDX-License-Identifier: MIT
/* proc_state.c: a process's state and flags from /proc/PID/stat, its name. */
#include "proc_state.h"

#include <stdio.h>
#include <string.h>

#define PF_KTHREAD 0x00200000U /* include/linux/sched.h */

enum mt_proc_state mt_proc_state(pid_t pid)
{
	char name[64], line[1024], state;
	const char *p;
	unsigned flags;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return MT_PROC_GONE;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	/* "pid (comm) S ppid pgrp session tty tpgid flags ...": comm may
	 * hold spaces and parentheses, so parse from its last ')'. */
	p = p ? strrchr(line, ')') : NULL;
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
		return MT_PROC_GONE;
	if (state == 'X' || state == 'x')
		return MT_PROC_GONE;
	if (state == 'Z')
		return MT_PROC_ZOMBIE;
	return flags & PF_KTHREAD ? MT_PROC_KTHREAD : MT_PROC_RUNNING;
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
