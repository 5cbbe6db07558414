/* SPDX-License-Identifier: MIT */
/*
 * table_holds.h: processes kept stopped (at their exec, or at ld.so's
 * hook) until the unwind tables of their own files are in, so that their
 * first stacks are whole.  Each waits for its files only, and the session
 * loop goes on meanwhile: a process that dlopens a small library is not
 * held behind another's large table (libLLVM, cc1) still being made.
 */
#ifndef MEMTRACE_TABLE_HOLDS_H
#define MEMTRACE_TABLE_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mt_file_key;
struct mt_unwinder;
struct mt_objects;
struct mt_image;

/* What -v says of a hold when it ends. */
struct mt_hold_note {
	const char *exe;   /* its exec of EXE (copied); NULL: ld.so's hook */
	bool dlopen;       /* at ld.so's hook: a dlopen, not its start */
	double t0;         /* when it stopped (mt_loop_now()) */
	double t1, t2;     /* an exec: its files read, its probes placed */
};

struct mt_table_holds {
	struct mt_table_hold {
		pid_t pid;
		struct mt_file_key *keys;  /* its files */
		size_t n;
		struct mt_hold_note note;
	} *v;
	size_t n;
	bool verbose;
};

/* PID, stopped, maps the files OBJS, or those mapped executable of IMG:
 * true when it is to stay stopped until their tables are in
 * (mt_table_holds_check() resumes it); false when they are in now (its
 * caller resumes it).  -v says how long it was held, either way. */
bool mt_table_holds_objects(struct mt_table_holds *h, struct mt_unwinder *u,
			    pid_t pid, const struct mt_objects *objs,
			    const struct mt_hold_note *note);
bool mt_table_holds_image(struct mt_table_holds *h, struct mt_unwinder *u,
			  pid_t pid, const struct mt_image *img,
			  const struct mt_hold_note *note);

/* Resume the processes whose tables are in. */
void mt_table_holds_check(struct mt_table_holds *h, struct mt_unwinder *u);

/* PID is gone: not held any more. */
void mt_table_holds_gone(struct mt_table_holds *h, pid_t pid);

/* Resume every process held (tracing stops), and free H. */
void mt_table_holds_free(struct mt_table_holds *h);

#endif
