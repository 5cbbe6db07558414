// SPDX-License-Identifier: MIT
/* collect.c: BPF maps -> struct mt_raw_profile. */
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "itab.h"
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

/* The stacks map read whole (by mt_collect), indexed by stack id. */
struct stack_table {
	struct mt_itab index;
	struct mt_stack_ips {
		uint64_t id;
		uint32_t nips;
		uint64_t *ips;
	} *st;
	size_t n, cap;
};

struct stack_find {
	const struct stack_table *t;
	uint64_t id;
};

static bool same_id(const void *ctx, uint32_t idx)
{
	const struct stack_find *f = ctx;

	return f->t->st[idx].id == f->id;
}

/* Frames of ST up to its zero padding; returns how many. */
static uint32_t depth_of(const struct mt_stack *st)
{
	uint32_t n = 0;

	while (n < MT_MAX_STACK_DEPTH && st->ips[n])
		n++;
	return n;
}

/*
 * The frames of stack ID into RS: from T when the map was read whole, else
 * looked up in map STACKS_FD.  An unknown id gives no frames.
 */
static int stack_ips(const struct stack_table *t, int stacks_fd, __u64 id,
		     struct mt_raw_stack *rs)
{
	struct stack_find key = { t, id };
	const void *ips = NULL;
	struct mt_stack st;
	uint32_t n = 0, idx;

	rs->nips = 0;
	rs->ips = NULL;
	if (id == MT_STACK_NONE)
		return 0;
	if (t && mt_itab_find(&t->index, id, same_id, &key, &idx)) {
		n = t->st[idx].nips;
		ips = t->st[idx].ips;
	} else if (!t && bpf_map_lookup_elem(stacks_fd, &id, &st) == 0) {
		n = depth_of(&st);
		ips = st.ips;
	}
	if (n == 0)
		return 0;
	rs->ips = malloc(n * sizeof(*rs->ips));
	if (!rs->ips)
		return -ENOMEM;
	memcpy(rs->ips, ips, n * sizeof(*rs->ips));
	rs->nips = n;
	return 0;
}

static void stack_table_free(struct stack_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->st[i].ips);
	free(t->st);
	mt_itab_free(&t->index);
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

/* Entries read by one bpf_map_lookup_batch() call (more if a bucket of the
 * hash map holds more, which the kernel reports with ENOSPC). */
#define BATCH_ENTRIES 1024U

/* One walk over a map: where it is, what it wants, what it keeps. */
struct walker {
	int fd;
	size_t ksize, vsize;
	const struct pid_filter *f;
	visit_fn visit;
	struct mt_raw_profile *raw;
	void *ctx;
	char *del;          /* keys to delete after the walk (f->remove) */
	size_t ndel, delcap;
};

/* Visit one entry if its process is wanted; queue its key for deletion. */
static int visit_entry(struct walker *w, const void *key, const void *value)
{
	uint32_t pid;
	int ret;

	memcpy(&pid, key, sizeof(pid));
	if (!wanted(w->f, pid))
		return 0;
	if (w->f->remove) {
		ret = reserve((void **)&w->del, &w->delcap, w->ndel, w->ksize);
		if (ret)
			return ret;
		memcpy(w->del + w->ksize * w->ndel++, key, w->ksize);
	}
	return w->visit(w->raw, key, value, w->ctx);
}

static int resize(char **p, size_t size)
{
	char *np = realloc(*p, size);

	if (!np)
		return -ENOMEM;
	*p = np;
	return 0;
}

/*
 * Read the map in batches of entries, one system call each (hash maps have
 * batch operations from Linux 5.6; memtrace needs 5.11 for task storage).
 * Returns 0 or -errno.
 */
static int walk_batches(struct walker *w)
{
	uint32_t cap = BATCH_ENTRIES, n;
	/* The batch position: a bucket number for hash maps, at least a key. */
	size_t tsize = w->ksize > sizeof(uint64_t) ? w->ksize : sizeof(uint64_t);
	char *keys = malloc(cap * w->ksize), *values = malloc(cap * w->vsize);
	char *in = calloc(1, tsize), *out = calloc(1, tsize), *tmp;
	bool first = true, done = false;
	int ret = keys && values && in && out ? 0 : -ENOMEM;

	while (ret == 0 && !done) {
		n = cap;
		ret = bpf_map_lookup_batch(w->fd, first ? NULL : in, out, keys,
					   values, &n, NULL);
		if (ret == -ENOSPC && n == 0) {
			/* One bucket holds more than CAP entries. */
			cap *= 2;
			ret = resize(&keys, cap * w->ksize);
			if (!ret)
				ret = resize(&values, cap * w->vsize);
			continue;
		}
		done = ret == -ENOENT;  /* the last batch, perhaps empty */
		if (ret && !done)
			break;
		ret = 0;
		first = false;
		for (uint32_t i = 0; i < n && ret == 0; i++)
			ret = visit_entry(w, keys + i * w->ksize,
					  values + i * w->vsize);
		tmp = in;
		in = out;
		out = tmp;
	}
	free(keys);
	free(values);
	free(in);
	free(out);
	return ret;
}

/* Delete the queued keys, in one batch where the kernel can. */
static void delete_queued(struct walker *w)
{
	uint32_t n = (uint32_t)w->ndel;
	int err = n ? bpf_map_delete_batch(w->fd, w->del, &n, NULL) : 0;
	/* The batch stops at a key another thread removed first (ENOENT,
	 * having deleted N); after any other error, try each key. */
	size_t from = err == 0 ? w->ndel : err == -ENOENT ? n + 1U : 0;

	for (size_t i = from; i < w->ndel; i++)
		bpf_map_delete_elem(w->fd, w->del + w->ksize * i);
}

/*
 * Visit the entries of map FD (keys of KSIZE bytes, beginning with the pid
 * unless F wants every entry) of the processes F wants; with f->remove,
 * delete them after the walk, which deleting would disturb.
 */
static int walk(int fd, size_t ksize, size_t vsize, const struct pid_filter *f,
		visit_fn visit, struct mt_raw_profile *raw, void *ctx)
{
	struct walker w = { fd, ksize, vsize, f, visit, raw, ctx, NULL, 0, 0 };
	int ret = walk_batches(&w);

	delete_queued(&w);
	free(w.del);
	return ret;
}

struct stats_ctx {
	const struct stack_table *table;  /* or NULL */
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
	/* free_*: derived once the blocks are read (derive_frees). */
	ret = stack_ips(c->table, c->stacks_fd, key->stack_id, rs);
	if (!ret)
		raw->nstacks++;
	return ret;
}

/* A visitor of the stacks map: keep the frames of stack K in table ARG. */
static int keep_stack(struct mt_raw_profile *raw, const void *k, const void *v,
		      void *arg)
{
	struct stack_table *t = arg;
	struct mt_stack_ips *e;
	uint32_t n = depth_of(v);
	uint64_t id;
	int ret;

	(void)raw;
	memcpy(&id, k, sizeof(id));
	if (n == 0)
		return 0;
	ret = reserve((void **)&t->st, &t->cap, t->n, sizeof(*t->st));
	if (ret)
		return ret;
	e = &t->st[t->n];
	e->id = id;
	e->nips = n;
	e->ips = malloc(n * sizeof(*e->ips));
	if (!e->ips)
		return -ENOMEM;
	memcpy(e->ips, ((const struct mt_stack *)v)->ips, n * sizeof(*e->ips));
	ret = mt_itab_add(&t->index, id, (uint32_t)t->n);
	if (ret) {
		free(e->ips);
		return ret;
	}
	t->n++;
	return 0;
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
	b->category = key->category;
	b->addr = key->addr;
	b->size = info->size;
	b->stack_id = info->stack_id;
	b->timestamp_ns = info->timestamp;
	b->est_bytes = info->est_bytes;
	b->est_objects = info->est_objects;
	return 0;
}

/* A (process, category, stack) triple, to find a raw stack by. */
struct stack_key {
	const struct mt_raw_stack *stacks;
	uint32_t pid, category;
	uint64_t stack_id;
};

static uint64_t hash_triple(uint32_t pid, uint32_t category, uint64_t id)
{
	return mt_hash_u64(mt_hash_u64(MT_HASH_SEED,
				       (uint64_t)pid << 32 | category), id);
}

static bool same_triple(const void *ctx, uint32_t idx)
{
	const struct stack_key *k = ctx;
	const struct mt_raw_stack *rs = &k->stacks[idx];

	return rs->pid == k->pid && rs->category == k->category &&
	       rs->stack_id == k->stack_id;
}

/* A - B, or 0 (a block's estimate can only exceed what its stack
 * allocated when that stack's totals were dropped and made anew). */
static uint64_t minus(uint64_t a, uint64_t b)
{
	return a - (b < a ? b : a);
}

/*
 * What the stacks read from index S0 on freed: what they allocated less
 * what their blocks, read from index B0 on, still hold (the BPF program
 * counts no frees; see struct mt_stat).
 */
static int derive_frees(struct mt_raw_profile *raw, size_t s0, size_t b0)
{
	struct mt_itab index = { 0 };
	int ret = 0;

	for (size_t i = s0; i < raw->nstacks && !ret; i++) {
		struct mt_raw_stack *rs = &raw->stacks[i];

		rs->free_bytes = rs->alloc_bytes;
		rs->free_objects = rs->alloc_objects;
		ret = mt_itab_add(&index, hash_triple(rs->pid, rs->category,
						      rs->stack_id),
				  (uint32_t)(i - s0));
	}
	for (size_t i = b0; i < raw->nblocks && !ret; i++) {
		const struct mt_raw_block *b = &raw->blocks[i];
		struct stack_key k = { raw->stacks + s0, b->pid, b->category,
				       b->stack_id };
		struct mt_raw_stack *rs;
		uint32_t idx;

		/* A block whose stack's totals were dropped (stats map full)
		 * has nothing to be subtracted from. */
		if (!mt_itab_find(&index, hash_triple(b->pid, b->category,
						      b->stack_id),
				  same_triple, &k, &idx))
			continue;
		rs = &raw->stacks[s0 + idx];
		rs->free_bytes = minus(rs->free_bytes, b->est_bytes);
		rs->free_objects = minus(rs->free_objects, b->est_objects);
	}
	mt_itab_free(&index);
	return ret;
}

void mt_collect_count_frees(struct mt_raw_profile *raw)
{
	uint64_t *c = raw->sum.counters;
	uint64_t held[2][2] = { { 0 } };  /* [category][bytes, objects] */

	for (size_t i = 0; i < raw->nblocks; i++) {
		const struct mt_raw_block *b = &raw->blocks[i];
		uint32_t cat = b->category == MT_CAT_MMAP;

		held[cat][0] += b->est_bytes;
		held[cat][1] += b->est_objects;
	}
	c[MT_CNT_FREE_BYTES] = minus(c[MT_CNT_ALLOC_BYTES], held[0][0]);
	c[MT_CNT_FREE_OBJECTS] = minus(c[MT_CNT_ALLOC_OBJECTS], held[0][1]);
	c[MT_CNT_MUNMAP_BYTES] = minus(c[MT_CNT_MMAP_BYTES], held[1][0]);
	c[MT_CNT_MUNMAP_OBJECTS] = minus(c[MT_CNT_MMAP_OBJECTS], held[1][1]);
}

/*
 * The stacks, then the outstanding blocks, of the processes F wants; the
 * frames come from TABLE, or when it is NULL, one lookup a stack.
 */
static int read_maps(struct memleak_bpf *skel, struct mt_raw_profile *raw,
		     const struct pid_filter *f, const struct stack_table *table)
{
	struct stats_ctx sc = { table, bpf_map__fd(skel->maps.stacks),
				raw->nstacks };
	size_t bcap = raw->nblocks, s0 = raw->nstacks, b0 = raw->nblocks;
	int ret = walk(bpf_map__fd(skel->maps.stats), sizeof(struct mt_stat_key),
		       sizeof(struct mt_stat), f, add_stack, raw, &sc);

	if (!ret)
		ret = walk(bpf_map__fd(skel->maps.allocs),
			   sizeof(struct mt_alloc_key), sizeof(struct mt_alloc_info),
			   f, add_block, raw, &bcap);
	return ret ? ret : derive_frees(raw, s0, b0);
}

int mt_collect(struct memleak_bpf *skel, struct mt_raw_profile *raw)
{
	struct pid_filter all = { NULL, 0, false };
	struct stack_table table = { 0 };
	int ret = read_counters(skel, raw->sum.counters);

	/* Every stack is wanted: one pass over the stacks map in batches. */
	if (!ret)
		ret = walk(bpf_map__fd(skel->maps.stacks), sizeof(__u64),
			   sizeof(struct mt_stack), &all, keep_stack, raw, &table);
	if (!ret)
		ret = read_maps(skel, raw, &all, &table);
	stack_table_free(&table);
	return ret;
}

int mt_collect_remove(struct memleak_bpf *skel, uint32_t *pids, size_t n,
		      struct mt_raw_profile *raw)
{
	struct pid_filter f = { pids, n, true };

	if (n == 0)
		return 0;
	qsort(pids, n, sizeof(*pids), cmp_u32);
	return read_maps(skel, raw, &f, NULL);
}
