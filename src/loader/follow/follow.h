/* SPDX-License-Identifier: MIT */
/*
 * follow.h: following the traced processes through exec and fork (the BPF
 * program's sched_process_exec and sched_process_fork tracepoints): a
 * process that execs takes its new name, and the blocks of its old image
 * are released; with -- CMD, the processes CMD forks are traced too, and
 * theirs, ...
 */
#ifndef MEMTRACE_FOLLOW_H
#define MEMTRACE_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memleak_bpf;

/*
 * Attach the exec and thread-exit tracepoints, with CHILDREN the fork one too (for a
 * program loaded with follow_only: then only the processes added with
 * mt_follow_add, and those they fork, are traced).  Returns 0 or -errno.
 */
int mt_follow_attach(struct memleak_bpf *skel, bool children);

/* Trace process PID and, with the fork tracepoint, its descendants. */
int mt_follow_add(struct memleak_bpf *skel, uint32_t pid);

/* The name the BPF program last saw process PID take (at its first
 * allocation, or at an exec since), into BUF (LEN bytes); false when it
 * knows none. */
bool mt_follow_comm(struct memleak_bpf *skel, uint32_t pid, char *buf,
		    size_t len);

/*
 * Process PID was forked by *PARENT (and ran its image, at least until an
 * exec): true.  False for CMD itself, or a process not followed.
 */
bool mt_follow_parent(struct memleak_bpf *skel, uint32_t pid, uint32_t *parent);

/*
 * Hold process PID at ld.so's hook (STOPS above 0: the hold's value, the
 * stops of its exec so far plus one, or MT_HOLD_DLOPEN) or no longer (0):
 * while held, each call of the hook by a thread memtrace traces sends it
 * MT_DL_HOLD_SIGNAL, for its tracer to take.
 * 0 or -errno.  mt_follow_held: the value, 0 when not held.
 */
int mt_follow_hold(struct memleak_bpf *skel, uint32_t pid, uint8_t stops);
uint8_t mt_follow_held(struct memleak_bpf *skel, uint32_t pid);

/*
 * Whether thread TID's MT_DL_HOLD_SIGNAL is a hold's (the hook sent it):
 * then it is taken (true, once).  False: the program's, to deliver.
 */
bool mt_follow_hold_taken(struct memleak_bpf *skel, uint32_t tid);

#endif
