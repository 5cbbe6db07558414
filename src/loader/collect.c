// SPDX-License-Identifier: MIT
/* collect.c: BPF maps -> struct mt_raw_profile. */
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memleak.skel.h"

static int read_counters(struct memleak_bpf *skel, uint64_t *out)
{
	int ncpus = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(skel->maps.counters);
	__u64 *vals;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 k = 0; k < MT_CNT__COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

/* Grow *v (of *cap elements of SIZE bytes) so that index N fits. */
static int reserve(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	for (ncap = *cap ? *cap * 2 : 256; ncap <= n; ncap *= 2)
		;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

static int stack_ips(int stacks_fd, __u64 id, struct mt_raw_stack *rs)
{
	struct mt_stack st;
	uint32_t n = 0;

	rs->nips = 0;
	rs->ips = NULL;
	if (id == MT_STACK_NONE || bpf_map_lookup_elem(stacks_fd, &id, &st))
		return 0;
	while (n < MT_MAX_STACK_DEPTH && st.ips[n])
		n++;
	if (n == 0)
		return 0;
	rs->ips = malloc(n * sizeof(*rs->ips));
	if (!rs->ips)
		return -ENOMEM;
	memcpy(rs->ips, st.ips, n * sizeof(*rs->ips));
	rs->nips = n;
	return 0;
}

/* Which processes to read: all (n == 0), or the sorted PIDS. */
struct pid_filter {
	const uint32_t *pids;
	size_t n;
	bool remove;  /* delete what was read from the maps */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool wanted(const struct pid_filter *f, uint32_t pid)
{
	return f->n == 0 || bsearch(&pid, f->pids, f->n, sizeof(pid), cmp_u32);
}

/* Called for every entry of a walked map; returns 0 or -errno. */
typedef int (*visit_fn)(struct mt_raw_profile *raw, const void *key,
			const void *value, void *ctx);

/*
 * Visit the entries of map FD (keys of KSIZE bytes beginning with the pid)
 * of the processes F wants; with f->remove, delete them after the walk,
 * which deleting would disturb.
 */
static int walk(int fd, size_t ksize, size_t vsize, const struct pid_filter *f,
		visit_fn visit, struct mt_raw_profile *raw, void *ctx)
{
	char *key = malloc(ksize), *value = malloc(vsize), *del = NULL;
	size_t ndel = 0, delcap = 0;
	void *prev = NULL;
	int ret = key && value ? 0 : -ENOMEM;

	while (ret == 0 && bpf_map_get_next_key(fd, prev, key) == 0) {
		uint32_t pid;

		memcpy(&pid, key, sizeof(pid));
		prev = key;
		if (!wanted(f, pid) || bpf_map_lookup_elem(fd, key, value))
			continue;
		if (f->remove) {
			ret = reserve((void **)&del, &delcap, ndel, ksize);
			if (ret)
				break;
			memcpy(del + ksize * ndel++, key, ksize);
		}
		ret = visit(raw, key, value, ctx);
	}
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, del + ksize * i);
	free(del);
	free(key);
	free(value);
	return ret;
}

struct stats_ctx {
	int stacks_fd;
	size_t cap;
};

static int add_stack(struct mt_raw_profile *raw, const void *k, const void *v,
		     void *arg)
{
	const struct mt_stat_key *key = k;
	const struct mt_stat *st = v;
	struct stats_ctx *c = arg;
	struct mt_raw_stack *rs;
	int ret = reserve((void **)&raw->stacks, &c->cap, raw->nstacks,
			  sizeof(*raw->stacks));

	if (ret)
		return ret;
	rs = &raw->stacks[raw->nstacks];
	memset(rs, 0, sizeof(*rs));
	rs->pid = key->pid;
	rs->stack_id = key->stack_id;
	rs->category = key->category;
	rs->alloc_bytes = st->alloc_bytes;
	rs->alloc_objects = st->alloc_objects;
	rs->free_bytes = st->free_bytes;
	rs->free_objects = st->free_objects;
	ret = stack_ips(c->stacks_fd, key->stack_id, rs);
	if (!ret)
		raw->nstacks++;
	return ret;
}

static int add_block(struct mt_raw_profile *raw, const void *k, const void *v,
		     void *arg)
{
	const struct mt_alloc_key *key = k;
	const struct mt_alloc_info *info = v;
	size_t *cap = arg;
	struct mt_raw_block *b;
	int ret = reserve((void **)&raw->blocks, cap, raw->nblocks,
			  sizeof(*raw->blocks));

	if (ret)
		return ret;
	b = &raw->blocks[raw->nblocks++];
	b->pid = key->pid;
	b->addr = key->addr;
	b->size = info->size;
	b->stack_id = info->stack_id;
	b->timestamp_ns = info->timestamp;
	b->est_bytes = info->est_bytes;
	b->est_objects = info->est_objects;
	return 0;
}

/* The stacks, then the outstanding blocks, of the processes F wants. */
static int read_maps(struct memleak_bpf *skel, struct mt_raw_profile *raw,
		     const struct pid_filter *f)
{
	struct stats_ctx sc = { bpf_map__fd(skel->maps.stacks), raw->nstacks };
	size_t bcap = raw->nblocks;
	int ret = walk(bpf_map__fd(skel->maps.stats), sizeof(struct mt_stat_key),
		       sizeof(struct mt_stat), f, add_stack, raw, &sc);

	if (!ret)
		ret = walk(bpf_map__fd(skel->maps.allocs),
			   sizeof(struct mt_alloc_key), sizeof(struct mt_alloc_info),
			   f, add_block, raw, &bcap);
	return ret;
}

int mt_collect(struct memleak_bpf *skel, struct mt_raw_profile *raw)
{
	struct pid_filter all = { NULL, 0, false };
	int ret = read_counters(skel, raw->sum.counters);

	return ret ? ret : read_maps(skel, raw, &all);
}

int mt_collect_remove(struct memleak_bpf *skel, uint32_t *pids, size_t n,
		      struct mt_raw_profile *raw)
{
	struct pid_filter f = { pids, n, true };

	if (n == 0)
		return 0;
	qsort(pids, n, sizeof(*pids), cmp_u32);
	return read_maps(skel, raw, &f);
}
