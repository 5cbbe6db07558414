/* SPDX-License-Identifier: MIT */
/* privs.h: do we have the privileges that tracing needs? */
#ifndef MEMTRACE_PRIVS_H
#define MEMTRACE_PRIVS_H

#include <stdbool.h>

/* The capabilities memtrace needs, for error messages. */
#define MT_CAPS_NEEDED "CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (or root)"

/* True when the effective set allows loading BPF and uprobes. */
bool mt_privileged(void);

#endif
