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

/* Frames of ST up to its zero padding. */
static uint32_t depth_of(const struct mt_stack *st)
{
	uint32_t n = 0;

	while (n < MT_MAX_STACK_DEPTH && st->ips[n])
		n++;
	return n;
}

/* Keep stack ID (frames ST), unless cached already. */
static int keep(struct mt_stack_cache *c, uint64_t id, const struct mt_stack *st)
{
	struct mt_cached_stack *e;
	uint32_t n = depth_of(st), idx;
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
	memcpy(e->ips, st->ips, n * sizeof(*e->ips));
	ret = mt_itab_add(&c->index, id, (uint32_t)c->n);
	if (ret) {
		free(e->ips);
		return ret;
	}
	c->n++;
	return 0;
}

/* A visitor of the stacks map. */
static int keep_entry(const void *k, const void *v, void *arg)
{
	uint64_t id;

	memcpy(&id, k, sizeof(id));
	((struct mt_stack_cache *)arg)->read++;
	return keep(arg, id, v);
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
	size_t missing = 0;
	struct mt_stack st;
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
	if (missing >= WALK_FROM)
		return mt_map_walk(fd, sizeof(__u64), sizeof(struct mt_stack),
				   &all, keep_entry, c);
	for (size_t i = 0; i < n && missing && !ret; i++) {
		if (ids[i] == MT_STACK_NONE || cached(c, ids[i], &idx))
			continue;
		missing--;
		c->read++;
		if (bpf_map_lookup_elem(fd, &ids[i], &st) == 0)
			ret = keep(c, ids[i], &st);
	}
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
