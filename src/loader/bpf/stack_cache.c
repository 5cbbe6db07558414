// SPDX-License-Identifier: MIT
/* stack_cache.c: the BPF stacks map, kept across reads (see stack_cache.h). */
#include "stack_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "map_walk.h"
#include "memleak.h"

/* Missing stacks from which one walk of the whole map in batches is
 * cheaper than a lookup (a system call) each. */
#define WALK_FROM 1024

struct find {
	const struct mt_stack_cache *c;
	uint64_t id;
};

static bool same_id(const void *ctx, uint32_t idx)
{
	const struct find *f = ctx;

	return f->c->st[idx].id == f->id;
}

static bool cached(const struct mt_stack_cache *c, uint64_t id, uint32_t *idx)
{
	struct find f = { c, id };

	return mt_itab_find(&c->index, id, same_id, &f, idx);
}

/* Segments read by a walk of the whole map, by key. */
struct segs {
	struct mt_itab index;
	struct seg {
		uint64_t id;
		struct mt_stack st;
	} *v;
	size_t n, cap;
};

struct find_seg {
	const struct segs *s;
	uint64_t id;
};

static bool same_seg(const void *ctx, uint32_t idx)
{
	const struct find_seg *f = ctx;

	return f->s->v[idx].id == f->id;
}

/* Segment ID: from the segments walked W (NULL: none), else from map FD.
 * 0, or -1 when there is none. */
static int read_seg(int fd, const struct segs *w, uint64_t id,
		    struct mt_stack *out)
{
	struct find_seg f = { w, id };
	uint32_t idx;

	if (w && mt_itab_find(&w->index, id, same_seg, &f, &idx)) {
		*out = w->v[idx].st;
		return 0;
	}
	return bpf_map_lookup_elem(fd, &id, out) ? -1 : 0;
}

/* The frames of stack ID, its segments followed (at most MT_STACK_SEGS:
 * a cycle, which a hash collision could make, ends there) into IPS
 * (MT_MAX_STACK_DEPTH); their number, 0 if the stack is not in the map. */
static uint32_t assemble(int fd, const struct segs *w, uint64_t id,
			 uint64_t *ips)
{
	struct mt_stack seg;
	uint32_t n = 0;

	for (int k = 0; k < MT_STACK_SEGS && id; k++) {
		if (read_seg(fd, w, id, &seg))
			break;
		for (int i = 0; i < MT_STACK_SEG && seg.ips[i] &&
				n < MT_MAX_STACK_DEPTH; i++)
			ips[n++] = seg.ips[i];
		id = seg.next;
	}
	return n;
}

/* Keep stack ID (N frames IPS), unless cached already. */
static int keep(struct mt_stack_cache *c, uint64_t id, const uint64_t *ips,
		uint32_t n)
{
	struct mt_cached_stack *e;
	uint32_t idx;
	int ret;

	if (n == 0 || cached(c, id, &idx))
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 256;
		struct mt_cached_stack *nst = realloc(c->st, ncap * sizeof(*nst));

		if (!nst)
			return -ENOMEM;
		c->st = nst;
		c->cap = ncap;
	}
	e = &c->st[c->n];
	e->id = id;
	e->nips = n;
	e->ips = malloc(n * sizeof(*e->ips));
	if (!e->ips)
		return -ENOMEM;
	memcpy(e->ips, ips, n * sizeof(*e->ips));
	ret = mt_itab_add(&c->index, id, (uint32_t)c->n);
	if (ret) {
		free(e->ips);
		return ret;
	}
	c->n++;
	return 0;
}

/* A visitor of the stacks map: every segment, kept by key. */
static int keep_seg(const void *k, const void *v, void *arg)
{
	struct segs *w = arg;
	struct seg *e;

	if (w->n == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 1024;
		struct seg *nv = realloc(w->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		w->v = nv;
		w->cap = ncap;
	}
	e = &w->v[w->n];
	memcpy(&e->id, k, sizeof(e->id));
	memcpy(&e->st, v, sizeof(e->st));
	w->n++;
	return mt_itab_add(&w->index, e->id, (uint32_t)(w->n - 1));
}

static void empty(struct mt_stack_cache *c)
{
	uint64_t read = c->read;

	for (size_t i = 0; i < c->n; i++)
		free(c->st[i].ips);
	free(c->st);
	mt_itab_free(&c->index);
	memset(c, 0, sizeof(*c));
	c->read = read;
}

int mt_stack_cache_fill(struct mt_stack_cache *c, int fd, const uint64_t *ids,
			size_t n)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	struct mt_pid_filter all = { NULL, 0, false };
	struct segs walked = { 0 };
	const struct segs *w = NULL;
	size_t missing = 0;
	uint64_t *ips;
	uint32_t idx;
	int ret = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.id != c->map_id) {
		empty(c);
		c->map_id = info.id;
	}
	for (size_t i = 0; i < n; i++)
		if (ids[i] != MT_STACK_NONE && !cached(c, ids[i], &idx))
			missing++;
	if (!missing)
		return 0;
	ips = calloc(MT_MAX_STACK_DEPTH, sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	if (missing >= WALK_FROM) {
		ret = mt_map_walk(fd, sizeof(__u64), sizeof(struct mt_stack),
				  &all, keep_seg, &walked);
		w = &walked;
	}
	for (size_t i = 0; i < n && missing && !ret; i++) {
		if (ids[i] == MT_STACK_NONE || cached(c, ids[i], &idx))
			continue;
		missing--;
		c->read++;
		ret = keep(c, ids[i], ips, assemble(fd, w, ids[i], ips));
	}
	free(ips);
	free(walked.v);
	mt_itab_free(&walked.index);
	return ret;
}

bool mt_stack_cache_get(const struct mt_stack_cache *c, uint64_t id,
			const uint64_t **ips, uint32_t *n)
{
	uint32_t idx;

	if (id == MT_STACK_NONE || !cached(c, id, &idx))
		return false;
	*ips = c->st[idx].ips;
	*n = c->st[idx].nips;
	return true;
}

void mt_stack_cache_free(struct mt_stack_cache *c)
{
	empty(c);
}
