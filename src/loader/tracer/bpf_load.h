/* SPDX-License-Identifier: MIT */
/*
 * bpf_load.h: opening and loading the BPF object sized by the options, and
 * attaching it with the best kind of uprobe link the kernel has (uprobe
 * sessions, uprobe_multi, one perf-event uprobe per function), falling
 * back one kind at a time.
 */
#ifndef MEMTRACE_BPF_LOAD_H
#define MEMTRACE_BPF_LOAD_H

#include "options.h"
#include "probes.h"

struct memleak_bpf;

/* Attaches the probes to a loaded program; undoes a partial attach itself. */
typedef int (*mt_attach_fn)(struct memleak_bpf *skel, enum mt_link_mode mode,
			    void *ctx);

/*
 * Load, then ATTACH(ctx), from the best link mode down while either says
 * -EOPNOTSUPP.  Returns 1 after a message when loading failed (or
 * attaching was not allowed), else 0 with *attach_err the attach's result
 * (0: *skel is loaded and attached; else *skel is NULL).
 */
int mt_bpf_load_and_attach(const struct mt_options *o, bool follow_only,
			   struct memleak_bpf **skel, mt_attach_fn attach,
			   void *ctx, int *attach_err);

#endif
