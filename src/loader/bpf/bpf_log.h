/* SPDX-License-Identifier: MIT */
/*
 * bpf_log.h: libbpf's messages.  Its warnings are always shown, its debug
 * output with -v.  The warnings of an attempt memtrace handles itself (a
 * link mode it falls back from, a failure it explains in its own words)
 * are held and dropped instead, unless -v.
 */
#ifndef MEMTRACE_BPF_LOG_H
#define MEMTRACE_BPF_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <bpf/libbpf.h>

/* Send libbpf's messages to OUT: warnings, and with VERBOSE debug too. */
void mt_bpf_log_init(FILE *out, bool verbose);

/* The print function mt_bpf_log_init gives libbpf. */
int mt_bpf_log_print(enum libbpf_print_level level, const char *fmt,
		     va_list ap);

/* Hold the warnings that follow (not with -v) until mt_bpf_log_release. */
void mt_bpf_log_hold(void);

/* Stop holding: print the held warnings when SHOW, else drop them. */
void mt_bpf_log_release(bool show);

#endif
