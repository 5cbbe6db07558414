/* SPDX-License-Identifier: MIT */
/*
 * follow.h: following the traced processes through exec (the BPF
 * program's sched_process_exec tracepoint): a process that execs takes its
 * new name, and the blocks of its old image are released.
 */
#ifndef MEMTRACE_FOLLOW_H
#define MEMTRACE_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memleak_bpf;

/* Attach the exec tracepoint.  Returns 0 or -errno. */
int mt_follow_attach(struct memleak_bpf *skel);

/* The name the BPF program last saw process PID take (at its first
 * allocation, or at an exec since), into BUF (LEN bytes); false when it
 * knows none. */
bool mt_follow_comm(struct memleak_bpf *skel, uint32_t pid, char *buf,
		    size_t len);

#endif
