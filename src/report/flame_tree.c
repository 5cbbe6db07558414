// SPDX-License-Identifier: MIT
/* flame_tree.c: merging a profile's stacks into a tree of named frames. */
#include "flame_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itab.h"

struct builder {
	struct mt_flame_tree *t;
	size_t cap_nodes, cap_names;
	struct mt_itab by_name;     /* names, by their text */
	struct mt_itab by_edge;     /* nodes, by (parent, name) */
	uint32_t *frame_name;       /* profile frame -> name, NONE: not yet */
};

struct name_key {
	const struct mt_flame_tree *t;
	const char *s;
};

struct edge_key {
	const struct mt_flame_tree *t;
	uint32_t parent, name;
};

static bool name_eq(const void *ctx, uint32_t idx)
{
	const struct name_key *k = ctx;

	return strcmp(k->t->names[idx], k->s) == 0;
}

static bool edge_eq(const void *ctx, uint32_t idx)
{
	const struct edge_key *k = ctx;

	return k->t->nodes[idx].parent == k->parent &&
	       k->t->nodes[idx].name == k->name;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Grow *V (N used, *CAP allocated, SIZE each) to hold one more. */
static int grow(void **v, size_t n, size_t *cap, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *nv;

	if (n < *cap)
		return 0;
	if (n >= MT_FLAME_NONE - 1)
		return -EOVERFLOW;
	nv = reallocarray(*v, ncap, size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* The index of name S, added (copied) when new. */
static int intern(struct builder *b, const char *s, uint32_t *id)
{
	struct mt_flame_tree *t = b->t;
	struct name_key key = { t, s };
	uint64_t h = mt_hash_str(MT_HASH_SEED, s);
	int ret;

	if (mt_itab_find(&b->by_name, h, name_eq, &key, id))
		return 0;
	ret = grow((void **)&t->names, t->nnames, &b->cap_names,
		   sizeof(*t->names));
	if (ret)
		return ret;
	t->names[t->nnames] = strdup(s);
	if (!t->names[t->nnames])
		return -ENOMEM;
	ret = mt_itab_add(&b->by_name, h, (uint32_t)t->nnames);
	if (ret) {
		free(t->names[t->nnames]);
		return ret;
	}
	*id = (uint32_t)t->nnames++;
	return 0;
}

/* The child of PARENT named NAME, added when new. */
static int child(struct builder *b, uint32_t parent, uint32_t name,
		 enum mt_flame_kind kind, uint32_t *idx)
{
	struct mt_flame_tree *t = b->t;
	struct edge_key key = { t, parent, name };
	uint64_t h = mt_hash_u64(mt_hash_u64(MT_HASH_SEED, parent), name);
	struct mt_flame_node *n;
	int ret;

	if (mt_itab_find(&b->by_edge, h, edge_eq, &key, idx))
		return 0;
	ret = grow((void **)&t->nodes, t->nnodes, &b->cap_nodes,
		   sizeof(*t->nodes));
	if (ret)
		return ret;
	ret = mt_itab_add(&b->by_edge, h, (uint32_t)t->nnodes);
	if (ret)
		return ret;
	n = &t->nodes[t->nnodes];
	*n = (struct mt_flame_node){
		.name = name,
		.parent = parent,
		.depth = parent == MT_FLAME_NONE ? 0 : t->nodes[parent].depth + 1,
		.child = MT_FLAME_NONE,
		.kind = kind,
	};
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	*idx = (uint32_t)t->nnodes++;
	return 0;
}

static int frame_name(struct builder *b, const struct mt_profile *p,
		      uint32_t frame, uint32_t *id)
{
	const char *fn = p->frames[frame].function;
	int ret;

	if (b->frame_name[frame] != MT_FLAME_NONE) {
		*id = b->frame_name[frame];
		return 0;
	}
	ret = intern(b, fn && fn[0] ? fn : "?", id);
	if (ret == 0)
		b->frame_name[frame] = *id;
	return ret;
}

static int process_name(struct builder *b, const struct mt_profile *p,
			uint32_t pid, uint32_t *id)
{
	const char *comm = mt_procs_comm(p->procs, p->nprocs, pid);
	char name[96];

	snprintf(name, sizeof(name), "%s (%" PRIu32 ")", comm[0] ? comm : "?",
		 pid);
	return intern(b, name, id);
}

/* Add V to every node on sample S's path, creating the missing ones. */
static int add_sample(struct builder *b, const struct mt_profile *p,
		      const struct mt_sample *s, int64_t v)
{
	struct mt_flame_tree *t = b->t;
	uint32_t node = 0, name;
	int ret = 0;

	t->nodes[0].value = add_sat(t->nodes[0].value, v);
	if (p->nprocs > 1) {
		ret = process_name(b, p, s->pid, &name);
		if (ret == 0)
			ret = child(b, node, name, MT_FLAME_PROCESS, &node);
		if (ret)
			return ret;
		t->nodes[node].value = add_sat(t->nodes[node].value, v);
	}
	for (size_t k = s->nframes; k-- > 0;) {
		uint32_t f = s->frames[k];

		ret = frame_name(b, p, f, &name);
		if (ret == 0)
			ret = child(b, node, name,
				    p->frames[f].unresolved ? MT_FLAME_UNRESOLVED
							    : MT_FLAME_FUNCTION,
				    &node);
		if (ret)
			return ret;
		t->nodes[node].value = add_sat(t->nodes[node].value, v);
	}
	return 0;
}

struct order_ctx {
	const struct mt_flame_node *nodes;
	const uint32_t *rank;
};

static int cmp_names(const void *a, const void *b, void *names)
{
	char *const *v = names;

	return strcmp(v[*(const uint32_t *)a], v[*(const uint32_t *)b]);
}

static int cmp_order(const void *a, const void *b, void *ctx)
{
	const struct order_ctx *c = ctx;
	const struct mt_flame_node *x = &c->nodes[*(const uint32_t *)a];
	const struct mt_flame_node *y = &c->nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (c->rank[x->name] != c->rank[y->name])
		return c->rank[x->name] < c->rank[y->name] ? -1 : 1;
	return 0;
}

/* Children by name, each group after its parent's; then every x. */
static int lay_out(struct mt_flame_tree *t)
{
	uint32_t *by_name = calloc(t->nnames ? t->nnames : 1, sizeof(*by_name));
	uint32_t *rank = calloc(t->nnames ? t->nnames : 1, sizeof(*rank));
	int64_t run = 0;
	int ret = 0;

	t->order = calloc(t->nnodes, sizeof(*t->order));
	if (!by_name || !rank || !t->order) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (uint32_t i = 0; i < t->nnames; i++)
		by_name[i] = i;
	qsort_r(by_name, t->nnames, sizeof(*by_name), cmp_names, t->names);
	for (uint32_t i = 0; i < t->nnames; i++)
		rank[by_name[i]] = i;
	for (uint32_t i = 0; i < t->nnodes; i++)
		t->order[i] = i;
	/* The root (parent NONE) stays first: every other node follows. */
	qsort_r(t->order + 1, t->nnodes - 1, sizeof(*t->order), cmp_order,
		&(struct order_ctx){ t->nodes, rank });
	/* A parent's index is below its children's: its group comes first,
	 * so its x is known when its children are placed. */
	for (uint32_t pos = 1; pos < t->nnodes; pos++) {
		struct mt_flame_node *n = &t->nodes[t->order[pos]];
		struct mt_flame_node *parent = &t->nodes[n->parent];

		if (parent->nchildren++ == 0) {
			parent->child = pos;
			run = parent->x;
		}
		n->x = run;
		run = add_sat(run, n->value);
	}
cleanup:
	free(by_name);
	free(rank);
	return ret;
}

int mt_flame_tree_build(struct mt_flame_tree *t, const struct mt_profile *p,
			enum mt_value metric)
{
	struct builder b = { .t = t };
	uint32_t root, name;
	int ret;

	memset(t, 0, sizeof(*t));
	if ((unsigned)metric >= MT_NVALUES)
		return -EINVAL;
	b.frame_name = malloc((p->nframes ? p->nframes : 1) * sizeof(*b.frame_name));
	if (!b.frame_name) {
		ret = -ENOMEM;
		goto cleanup;
	}
	memset(b.frame_name, 0xff, (p->nframes ? p->nframes : 1) * sizeof(*b.frame_name));
	ret = intern(&b, "all", &name);
	if (ret == 0)
		ret = child(&b, MT_FLAME_NONE, name, MT_FLAME_ROOT, &root);
	for (size_t i = 0; i < p->nsamples && ret == 0; i++) {
		int64_t v = p->samples[i].v[metric];

		if (v < 0) {
			t->left_out = add_sat(t->left_out, v == INT64_MIN ? INT64_MAX : -v);
		} else if (v > 0) {
			t->nstacks++;
			ret = add_sample(&b, p, &p->samples[i], v);
		}
	}
	if (ret == 0)
		ret = lay_out(t);
	t->total = t->nnodes ? t->nodes[0].value : 0;
cleanup:
	free(b.frame_name);
	mt_itab_free(&b.by_name);
	mt_itab_free(&b.by_edge);
	if (ret)
		mt_flame_tree_free(t);
	return ret;
}

void mt_flame_tree_free(struct mt_flame_tree *t)
{
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->nodes);
	free(t->order);
	memset(t, 0, sizeof(*t));
}
