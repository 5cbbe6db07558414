/* SPDX-License-Identifier: MIT */
/* errmsg.h: memtrace's one-line error messages on standard error. */
#ifndef MEMTRACE_ERRMSG_H
#define MEMTRACE_ERRMSG_H

/* Print "memtrace: " and the message, and return 1 (an exit status). */
int mt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
