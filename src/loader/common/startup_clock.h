/* SPDX-License-Identifier: MIT */
/*
 * startup_clock.h: how long memtrace takes to start tracing, phase by
 * phase, for the -v line "memtrace: started in X ms (...)".  A phase may
 * run on another thread, beside the others: its time is its own, and the
 * total is the wall time from main() to the probes' being in place (with
 * -- CMD: the command released).
 */
#ifndef MEMTRACE_STARTUP_CLOCK_H
#define MEMTRACE_STARTUP_CLOCK_H

#include <stdint.h>
#include <stdio.h>

enum mt_startup_phase {
	MT_STARTUP_SPAWN,  /* the command's files listed, the command forked */
	MT_STARTUP_OPEN,   /* the BPF object opened, the kernel's BTF read and
			    * the maps made (side by side) */
	MT_STARTUP_VERIFY, /* the object loaded: relocated, verified */
	MT_STARTUP_ATTACH, /* the probes attached */
	MT_STARTUP_TABLES, /* the unwind tables made (beside the rest) */
	MT_STARTUP_NPHASES
};

/* The start: main() calls it first. */
void mt_startup_begin(void);

/* PHASE took from SINCE (an mt_loop_now_ns()) to now; added up. */
void mt_startup_add(enum mt_startup_phase phase, uint64_t since);

/* Tracing has begun (the command released): the total ends here. */
void mt_startup_end(void);

/* The -v line: "memtrace: started in X ms (spawn S, open O, ...)". */
void mt_startup_say(FILE *f);

#endif
