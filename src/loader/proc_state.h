/* SPDX-License-Identifier: MIT */
/* proc_state.h: is a process there, a zombie, or a kernel thread? */
#ifndef MEMTRACE_PROC_STATE_H
#define MEMTRACE_PROC_STATE_H

#include <sys/types.h>

enum mt_proc_state {
	MT_PROC_RUNNING,  /* a user-space process (any state but dead) */
	MT_PROC_GONE,     /* no such process, or dead */
	MT_PROC_ZOMBIE,   /* exited, not yet reaped by its parent */
	MT_PROC_KTHREAD,  /* a kernel thread: no user space to trace */
};

/* What PID is now, from /proc/PID/stat. */
enum mt_proc_state mt_proc_state(pid_t pid);

#endif
