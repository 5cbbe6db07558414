/* SPDX-License-Identifier: MIT */
/*
 * target.h: what is traced: a running process (-p), or a command memtrace
 * starts (-- CMD), held at a gate until the probes are in place; its
 * files and the allocator chosen among them.
 */
#ifndef MEMTRACE_TARGET_H
#define MEMTRACE_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include "allocator.h"
#include "child.h"
#include "proc_files.h"
#include "options.h"

struct mt_target {
	pid_t pid;
	struct mt_child child;
	bool is_child;
	struct mt_objects objs;   /* executable and libraries */
	struct mt_allocator alloc;
	char comm[64];
};

/* -- CMD traces the processes CMD starts too (not with --no-follow). */
bool mt_target_follows(const struct mt_options *o);

/* -p: find the process and its allocator.  0, or 1 after a message. */
int mt_target_find(const struct mt_options *o, struct mt_target *t);

/* -- CMD: start it, held at its gate.  0, or 1 after a message. */
int mt_target_spawn(const struct mt_options *o, struct mt_target *t);

/* The message for a target that exited while memtrace attached; 1. */
int mt_target_exited_while_attaching(const struct mt_target *t);

/* The allocator's file as shown, or "the allocator". */
const char *mt_target_alloc_name(const struct mt_target *t);

#endif
