/* SPDX-License-Identifier: MIT */
/*
 * flame_tree.h: a profile's stacks merged into a tree of named frames, the
 * model of a flame graph: the root ("all"), then, when the profile holds
 * more than one process, one "COMM (PID)" frame per process, then the
 * functions from the outermost caller to the allocating one.  Frames with
 * the same name under the same parent are one node (like --folded, the
 * lines of a function are not told apart), and a node's value is the sum
 * of the metric over every sample whose stack passes through it.
 */
#ifndef MEMTRACE_FLAME_TREE_H
#define MEMTRACE_FLAME_TREE_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

#define MT_FLAME_NONE UINT32_MAX

enum mt_flame_kind {
	MT_FLAME_ROOT,        /* "all" */
	MT_FLAME_PROCESS,     /* "COMM (PID)" */
	MT_FLAME_FUNCTION,    /* a source-level function */
	MT_FLAME_UNRESOLVED,  /* "module+0xOFFSET": no symbol */
};

struct mt_flame_node {
	uint32_t name;        /* index into mt_flame_tree.names */
	uint32_t parent;      /* MT_FLAME_NONE for the root */
	uint32_t depth;       /* 0 for the root */
	enum mt_flame_kind kind;
	int64_t value;        /* the metric over the subtree (saturating);
			       * of a difference: its changes' sizes, |v| */
	int64_t delta;        /* the metric's sum over the subtree, signed
			       * (= value but of a difference) */
	int64_t x;            /* its left edge: its parent's x plus the
			       * values of the siblings before it */
};

struct mt_flame_tree {
	struct mt_flame_node *nodes;  /* depth first from nodes[0], the root;
				       * siblings by name (byte order) */
	size_t nnodes;
	char **names;         /* distinct frame names, as in the profile */
	size_t nnames;
	uint32_t max_depth;
	int64_t total;        /* nodes[0].value */
	int64_t left_out;     /* sum of the negative values left out (a
			       * profile less a base), as a positive number */
	size_t nstacks;       /* samples with a positive value */
};

/*
 * Build T from P's samples whose METRIC is positive (a negative one, only
 * in a profile less a base, cannot be drawn as a width: it is added to
 * left_out).  Returns 0, -EINVAL for a bad metric, -ENOMEM or -EOVERFLOW;
 * T is empty (freeable) on error.
 */
int mt_flame_tree_build(struct mt_flame_tree *t, const struct mt_profile *p,
			enum mt_value metric);

/*
 * The tree of a difference (a profile less a base, diff.h): every sample
 * whose METRIC is not 0 is drawn, a node's value the sum of |METRIC| (how
 * much changed under it: its width) and its delta the signed sum (grew or
 * shrank: its colour).  left_out is 0.
 */
int mt_flame_tree_build_diff(struct mt_flame_tree *t,
			     const struct mt_profile *p, enum mt_value metric);

void mt_flame_tree_free(struct mt_flame_tree *t);

#endif
