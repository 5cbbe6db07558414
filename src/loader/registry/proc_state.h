/* SPDX-License-Identifier: MIT */
/* proc_state.h: is a process there, a zombie, or a kernel thread? its name? */
#ifndef MEMTRACE_PROC_STATE_H
#define MEMTRACE_PROC_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum mt_proc_state {
	MT_PROC_RUNNING,  /* a user-space process (any state but dead) */
	MT_PROC_GONE,     /* no such process, or dead */
	MT_PROC_ZOMBIE,   /* exited, not yet reaped by its parent */
	MT_PROC_KTHREAD,  /* a kernel thread: no user space to trace */
};

/* What PID is now, from /proc/PID/stat. */
enum mt_proc_state mt_proc_state(pid_t pid);

/*
 * Whether PID is gone or on its way out: not running, or exiting (its
 * main thread's PF_EXITING: its mappings may already be gone, as read
 * between the exit's start and its becoming a zombie).
 */
bool mt_proc_exiting(pid_t pid);

/*
 * PID's name from /proc/PID/comm, into BUF (LEN bytes, without the
 * newline).  False when it cannot be read (BUF is then "").
 */
bool mt_proc_comm(pid_t pid, char *buf, size_t len);

#endif
