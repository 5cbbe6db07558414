// SPDX-License-Identifier: MIT
/*
 * flame_tree.c: merging a profile's stacks into a tree of named frames.
 *
 * The stacks, as sequences of names from the root, are sorted (names by
 * byte order); the tree is then built in one pass, each stack sharing
 * with the one before it the nodes of their common prefix.  Nodes come
 * out depth first, siblings by name, with no table of (parent, name).
 */
#include "flame_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itab.h"

/* A sample drawn: its index, and its process's name when several. */
struct kept {
	size_t sample;
	uint32_t proc;
};

struct builder {
	struct mt_flame_tree *t;
	const struct mt_profile *p;
	bool multi;                 /* a "COMM (PID)" frame first */
	size_t cap_nodes, cap_names;
	struct mt_itab by_name;     /* names, by their text */
	uint32_t *frame_name;       /* profile frame -> name, NONE: not yet */
	uint32_t *rank;             /* name -> its place in byte order */
	struct kept *kept;
	size_t nkept;
};

struct name_key {
	const struct mt_flame_tree *t;
	const char *s;
};

static bool name_eq(const void *ctx, uint32_t idx)
{
	const struct name_key *k = ctx;

	return strcmp(k->t->names[idx], k->s) == 0;
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

/* Name every frame of sample S and, with several processes, its process. */
static int name_sample(struct builder *b, const struct mt_sample *s,
		       struct kept *k)
{
	const struct mt_profile *p = b->p;
	int ret = 0;

	if (b->multi) {
		const char *comm = mt_procs_comm(p->procs, p->nprocs, s->pid);
		char name[96];

		snprintf(name, sizeof(name), "%s (%" PRIu32 ")",
			 comm[0] ? comm : "?", s->pid);
		ret = intern(b, name, &k->proc);
	}
	for (size_t i = 0; i < s->nframes && ret == 0; i++) {
		uint32_t f = s->frames[i];
		const char *fn = p->frames[f].function;

		if (b->frame_name[f] == MT_FLAME_NONE)
			ret = intern(b, fn && fn[0] ? fn : "?", &b->frame_name[f]);
	}
	return ret;
}

/* Names from the root: the process's, then the frames outermost first. */
static size_t seq_len(const struct builder *b, const struct kept *k)
{
	return b->p->samples[k->sample].nframes + (b->multi ? 1 : 0);
}

static uint32_t seq_name(const struct builder *b, const struct kept *k,
			 size_t i)
{
	const struct mt_sample *s = &b->p->samples[k->sample];

	if (b->multi) {
		if (i == 0)
			return k->proc;
		i--;
	}
	return b->frame_name[s->frames[s->nframes - 1 - i]];
}

static enum mt_flame_kind seq_kind(const struct builder *b,
				   const struct kept *k, size_t i)
{
	const struct mt_sample *s = &b->p->samples[k->sample];

	if (b->multi) {
		if (i == 0)
			return MT_FLAME_PROCESS;
		i--;
	}
	return b->p->frames[s->frames[s->nframes - 1 - i]].unresolved
		       ? MT_FLAME_UNRESOLVED : MT_FLAME_FUNCTION;
}

/* How many names the sequences of X and Y share from the root. */
static size_t common(const struct builder *b, const struct kept *x,
		     const struct kept *y)
{
	size_t n = seq_len(b, x), m = seq_len(b, y), i = 0;

	while (i < n && i < m && seq_name(b, x, i) == seq_name(b, y, i))
		i++;
	return i;
}

static int cmp_kept(const void *x, const void *y, void *ctx)
{
	const struct builder *b = ctx;
	size_t i = common(b, x, y), n = seq_len(b, x), m = seq_len(b, y);

	if (i < n && i < m)
		return b->rank[seq_name(b, x, i)] < b->rank[seq_name(b, y, i)] ? -1 : 1;
	return n < m ? -1 : n > m;
}

static int cmp_names(const void *x, const void *y, void *names)
{
	char *const *v = names;

	return strcmp(v[*(const uint32_t *)x], v[*(const uint32_t *)y]);
}

/* RANK[name]: the name's place among all of them in byte order. */
static int rank_names(struct builder *b)
{
	struct mt_flame_tree *t = b->t;
	uint32_t *by_name = calloc(t->nnames, sizeof(*by_name));

	b->rank = calloc(t->nnames, sizeof(*b->rank));
	if (!by_name || !b->rank) {
		free(by_name);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nnames; i++)
		by_name[i] = i;
	qsort_r(by_name, t->nnames, sizeof(*by_name), cmp_names, t->names);
	for (uint32_t i = 0; i < t->nnames; i++)
		b->rank[by_name[i]] = i;
	free(by_name);
	return 0;
}

static int add_node(struct builder *b, uint32_t name, uint32_t parent,
		    enum mt_flame_kind kind, uint32_t *idx)
{
	struct mt_flame_tree *t = b->t;
	uint32_t depth = parent == MT_FLAME_NONE ? 0 : t->nodes[parent].depth + 1;
	int ret = grow((void **)&t->nodes, t->nnodes, &b->cap_nodes,
		       sizeof(*t->nodes));

	if (ret)
		return ret;
	t->nodes[t->nnodes] = (struct mt_flame_node){
		.name = name, .parent = parent, .depth = depth, .kind = kind,
	};
	if (depth > t->max_depth)
		t->max_depth = depth;
	*idx = (uint32_t)t->nnodes++;
	return 0;
}

/*
 * The nodes, from the sorted stacks: PATH holds the previous stack's
 * nodes from the root; a stack keeps the part it shares and adds the
 * rest.  Then each node's x, depth first: after its earlier siblings.
 */
static int grow_tree(struct builder *b, enum mt_value metric)
{
	struct mt_flame_tree *t = b->t;
	size_t longest = 0, plen = 1;
	uint32_t *path = NULL;
	int64_t *cursor = NULL;
	int ret;

	for (size_t j = 0; j < b->nkept; j++)
		if (seq_len(b, &b->kept[j]) > longest)
			longest = seq_len(b, &b->kept[j]);
	path = calloc(longest + 1, sizeof(*path));
	ret = path ? add_node(b, 0, MT_FLAME_NONE, MT_FLAME_ROOT, &path[0]) : -ENOMEM;
	for (size_t j = 0; j < b->nkept && ret == 0; j++) {
		const struct kept *k = &b->kept[j];
		int64_t d = b->p->samples[k->sample].v[metric];
		int64_t v = d >= 0 ? d : d == INT64_MIN ? INT64_MAX : -d;
		size_t n = seq_len(b, k);

		plen = 1 + (j ? common(b, &b->kept[j - 1], k) : 0);
		for (; plen <= n && ret == 0; plen++)
			ret = add_node(b, seq_name(b, k, plen - 1), path[plen - 1],
				       seq_kind(b, k, plen - 1), &path[plen]);
		for (size_t i = 0; i < plen && ret == 0; i++) {
			struct mt_flame_node *node = &t->nodes[path[i]];

			node->value = add_sat(node->value, v);
			node->delta = add_sat(node->delta, d);
		}
	}
	if (ret == 0) {
		cursor = calloc(t->nnodes, sizeof(*cursor));
		ret = cursor ? 0 : -ENOMEM;
	}
	for (size_t i = 1; i < t->nnodes && ret == 0; i++) {
		struct mt_flame_node *node = &t->nodes[i];

		node->x = cursor[node->parent];
		cursor[node->parent] = add_sat(cursor[node->parent], node->value);
		cursor[i] = node->x;
	}
	free(path);
	free(cursor);
	return ret;
}

static int build(struct mt_flame_tree *t, const struct mt_profile *p,
		 enum mt_value metric, bool diff)
{
	struct builder b = { .t = t, .p = p, .multi = p->nprocs > 1 };
	uint32_t root;
	int ret;

	memset(t, 0, sizeof(*t));
	if ((unsigned)metric >= MT_NVALUES)
		return -EINVAL;
	b.frame_name = malloc((p->nframes ? p->nframes : 1) * sizeof(*b.frame_name));
	b.kept = calloc(p->nsamples ? p->nsamples : 1, sizeof(*b.kept));
	if (!b.frame_name || !b.kept) {
		ret = -ENOMEM;
		goto cleanup;
	}
	memset(b.frame_name, 0xff, (p->nframes ? p->nframes : 1) * sizeof(*b.frame_name));
	ret = intern(&b, "all", &root);
	for (size_t i = 0; i < p->nsamples && ret == 0; i++) {
		int64_t v = p->samples[i].v[metric];

		if (v < 0 && !diff) {
			t->left_out = add_sat(t->left_out, v == INT64_MIN ? INT64_MAX : -v);
		} else if (v != 0) {
			b.kept[b.nkept].sample = i;
			ret = name_sample(&b, &p->samples[i], &b.kept[b.nkept++]);
		}
	}
	t->nstacks = b.nkept;
	if (ret == 0)
		ret = rank_names(&b);
	if (ret == 0) {
		qsort_r(b.kept, b.nkept, sizeof(*b.kept), cmp_kept, &b);
		ret = grow_tree(&b, metric);
	}
	t->total = t->nnodes ? t->nodes[0].value : 0;
cleanup:
	free(b.frame_name);
	free(b.rank);
	free(b.kept);
	mt_itab_free(&b.by_name);
	if (ret)
		mt_flame_tree_free(t);
	return ret;
}

int mt_flame_tree_build(struct mt_flame_tree *t, const struct mt_profile *p,
			enum mt_value metric)
{
	return build(t, p, metric, false);
}

int mt_flame_tree_build_diff(struct mt_flame_tree *t,
			     const struct mt_profile *p, enum mt_value metric)
{
	return build(t, p, metric, true);
}

void mt_flame_tree_free(struct mt_flame_tree *t)
{
	for (size_t i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}
