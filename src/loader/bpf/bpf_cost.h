/* SPDX-License-Identifier: MIT */
/*
 * bpf_cost.h: what memtrace's BPF programs cost, for -v.  The kernel times
 * every run of a BPF program while statistics are enabled (BPF_ENABLE_STATS:
 * two clock reads per run, some tens of ns); with -v memtrace enables them
 * for its run and says, at the end, how often each program ran and for how
 * long on average.  The rest of what tracing costs a program is the uprobe
 * traps themselves (--probe-only measures them).
 */
#ifndef MEMTRACE_BPF_COST_H
#define MEMTRACE_BPF_COST_H

#include <stdio.h>

struct memleak_bpf;

/* Enable the kernel's run-time statistics until mt_bpf_cost_end: an fd
 * that keeps them on, or -errno (an older kernel: nothing is said). */
int mt_bpf_cost_begin(void);

/* Say on OUT each of SKEL's programs that ran: runs, ns per run, total
 * (with statistics enabled: none ran as far as the kernel says else). */
void mt_bpf_cost_say(const struct memleak_bpf *skel, FILE *out);

/* Stop keeping them on (FD < 0: nothing to do). */
void mt_bpf_cost_end(int fd);

#endif
