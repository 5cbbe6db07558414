// SPDX-License-Identifier: MIT
/* collect.c: BPF maps -> struct mt_raw_profile. */
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "itab.h"
#include "map_walk.h"
#include "memleak.skel.h"
#include "stack_cache.h"

void mt_collect_start(struct memleak_bpf *skel)
{
	__atomic_store_n(&skel->bss->trace_state, MT_TRACE_RECORDING,
			 __ATOMIC_SEQ_CST);
}

void mt_collect_stop(struct memleak_bpf *skel)
{
	__atomic_store_n(&skel->bss->trace_state, MT_TRACE_STOPPED,
			 __ATOMIC_SEQ_CST);
}

int mt_collect_counters(struct memleak_bpf *skel, uint64_t *out)
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

/* The size histogram ("sizes", per CPU) summed over CPUs into OUT. */
static int read_sizes(struct memleak_bpf *skel,
		      struct mt_size_count out[MT_NCATEGORIES][MT_SIZE_CLASSES])
{
	int ncpus = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(skel->maps.sizes);
	struct mt_size_count *vals;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 cat = 0; cat < MT_NCATEGORIES; cat++) {
		for (__u32 k = 0; k < MT_SIZE_CLASSES; k++) {
			__u32 key = MT_SIZE_INDEX(cat, k);

			out[cat][k] = (struct mt_size_count){ 0 };
			if (bpf_map_lookup_elem(fd, &key, vals))
				continue;
			for (int c = 0; c < ncpus; c++) {
				out[cat][k].objects += vals[c].objects;
				out[cat][k].bytes += vals[c].bytes;
			}
		}
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

/*
 * The frames of every stack read so far, kept from one read to the next
 * (stacks never change: stack_cache.h).  One BPF object is read at a
 * time; the cache notices a new one by its map's id.
 */
static struct mt_stack_cache stack_cache;

void mt_collect_forget_stacks(void)
{
	mt_stack_cache_free(&stack_cache);
}

uint64_t mt_collect_stacks_read(void)
{
	return stack_cache.read;
}

/* Set by mt_collect_set_resolved(): whether a provisional stack id has
 * been unwound since (its whole stack known), or NULL. */
static bool (*resolved)(uint64_t id);

void mt_collect_set_resolved(bool (*fn)(uint64_t id))
{
	resolved = fn;
}

/* Give the stacks of RAW from index S0 their frames, from the cache,
 * which reads those it has not seen from map STACKS_FD first. */
static int stacks_frames(struct mt_raw_profile *raw, size_t s0, int stacks_fd)
{
	size_t n = raw->nstacks - s0;
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	int ret = ids ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && ids; i++)
		/* A provisional id unwound since: its frames are known
		 * (deferred unwinding), its own no longer kept. */
		ids[i] = resolved && resolved(raw->stacks[s0 + i].stack_id)
				 ? MT_STACK_NONE
				 : raw->stacks[s0 + i].stack_id;
	if (!ret)
		ret = mt_stack_cache_fill(&stack_cache, stacks_fd, ids, n);
	free(ids);
	for (size_t i = s0; i < raw->nstacks && !ret; i++) {
		struct mt_raw_stack *rs = &raw->stacks[i];
		const uint64_t *ips;
		uint32_t nips;

		if (!mt_stack_cache_get(&stack_cache, rs->stack_id, &ips, &nips))
			continue; /* no frames */
		rs->ips = malloc(nips * sizeof(*rs->ips));
		if (!rs->ips)
			return -ENOMEM;
		memcpy(rs->ips, ips, nips * sizeof(*rs->ips));
		rs->nips = nips;
	}
	return ret;
}

/* When a process last exec'd (the "execs" map), sorted by pid. */
struct exec_time {
	uint32_t pid;
	uint64_t ns;
};

/* Visitors' context: the profile read into, and its arrays' capacities. */
struct read_ctx {
	struct mt_raw_profile *raw;
	size_t stacks_cap, blocks_cap;
	struct exec_time *execs;
	size_t nexecs, execs_cap;
	struct mt_collect_live *live;
	size_t seen;            /* blocks visited, for live->poll */
};

static int cmp_exec(const void *a, const void *b)
{
	const struct exec_time *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A visitor of the execs map. */
static int add_exec(const void *k, const void *v, void *arg)
{
	struct read_ctx *c = arg;
	int ret = reserve((void **)&c->execs, &c->execs_cap, c->nexecs,
			  sizeof(*c->execs));

	if (ret)
		return ret;
	memcpy(&c->execs[c->nexecs].pid, k, sizeof(uint32_t));
	c->execs[c->nexecs].ns = ((const struct mt_exec *)v)->ns;
	c->nexecs++;
	return 0;
}

/* Was block K allocated by an image its process has since replaced? */
static bool before_exec(const struct read_ctx *c, const struct mt_alloc_key *k,
			const struct mt_alloc_info *info)
{
	struct exec_time key = { k->pid, 0 };
	const struct exec_time *e = c->nexecs ?
		bsearch(&key, c->execs, c->nexecs, sizeof(key), cmp_exec) : NULL;

	return e && info->timestamp < e->ns;
}

/* A visitor of the stats map: one raw stack. */
static int add_stack(const void *k, const void *v, void *arg)
{
	const struct mt_stat_key *key = k;
	const struct mt_stat *st = v;
	struct read_ctx *c = arg;
	struct mt_raw_profile *raw = c->raw;
	struct mt_raw_stack *rs;
	int ret = reserve((void **)&raw->stacks, &c->stacks_cap, raw->nstacks,
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
	/* free_*: derived once the blocks are read (derive_frees); the
	 * frames once every stack is read (stacks_frames). */
	raw->nstacks++;
	return 0;
}

/* A visitor of the allocs map: one outstanding block. */
static int add_block(const void *k, const void *v, void *arg)
{
	const struct mt_alloc_key *key = k;
	const struct mt_alloc_info *info = v;
	struct read_ctx *c = arg;
	struct mt_raw_profile *raw = c->raw;
	struct mt_raw_block *b;
	int ret = reserve((void **)&raw->blocks, &c->blocks_cap, raw->nblocks,
			  sizeof(*raw->blocks));

	if (ret)
		return ret;
	if (c->live && c->live->poll && ++c->seen % 4096 == 0)
		c->live->poll(c->live->ctx);
	/* A snapshot: allocated after its instant. */
	if (c->live && info->timestamp > c->live->t0_ns)
		return 0;
	/* Gone with the old image's address space: released at the exec
	 * (its stack's frees are derived from the blocks kept). */
	if (before_exec(c, key, info))
		return 0;
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
		ret = mt_itab_add(&index, mt_raw_key_hash(rs->pid, rs->category,
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
		if (!mt_itab_find(&index, mt_raw_key_hash(b->pid, b->category,
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

/* The blocks the last read of every process found (a size to start from). */
static size_t blocks_hint;

/* Room for N blocks in RAW, if memory allows (only a hint: the walk
 * grows the array as it needs). */
static void presize(struct mt_raw_profile *raw, size_t *cap, size_t n)
{
	struct mt_raw_block *v;

	if (n <= *cap)
		return;
	v = realloc(raw->blocks, n * sizeof(*v));
	if (v) {
		raw->blocks = v;
		*cap = n;
	}
}

/* The stacks, then the outstanding blocks, of the processes F wants. */
static int read_maps(struct memleak_bpf *skel, struct mt_raw_profile *raw,
		     const struct mt_pid_filter *f,
		     struct mt_collect_live *live)
{
	struct read_ctx c = { raw, raw->nstacks, raw->nblocks, NULL, 0, 0,
			      live, 0 };
	size_t s0 = raw->nstacks, b0 = raw->nblocks;
	int ret = mt_map_walk(bpf_map__fd(skel->maps.stats),
			      sizeof(struct mt_stat_key), sizeof(struct mt_stat),
			      f, add_stack, &c);

	if (!ret)
		ret = stacks_frames(raw, s0, bpf_map__fd(skel->maps.stacks));
	if (!ret)
		ret = mt_map_walk(bpf_map__fd(skel->maps.execs), sizeof(uint32_t),
				  sizeof(struct mt_exec), f, add_exec, &c);
	if (!ret) {
		if (c.nexecs)
			qsort(c.execs, c.nexecs, sizeof(*c.execs), cmp_exec);
		/* As many blocks as last time, and an eighth: a million blocks
		 * are not copied again and again as the array doubles. */
		if (f->n == 0 && blocks_hint)
			presize(raw, &c.blocks_cap,
				b0 + blocks_hint + blocks_hint / 8);
		ret = mt_map_walk(bpf_map__fd(skel->maps.allocs),
				  sizeof(struct mt_alloc_key),
				  sizeof(struct mt_alloc_info), f, add_block, &c);
	}
	free(c.execs);
	if (!ret && f->n == 0)
		blocks_hint = raw->nblocks - b0;
	if (!ret && live && live->fix)
		ret = live->fix(live->ctx, raw, s0, b0);
	if (ret) {
		/* Nothing read counts: the walks deleted nothing either. */
		for (size_t i = s0; i < raw->nstacks; i++)
			free(raw->stacks[i].ips);
		raw->nstacks = s0;
		raw->nblocks = b0;
		return ret;
	}
	return derive_frees(raw, s0, b0);
}

int mt_collect(struct memleak_bpf *skel, struct mt_raw_profile *raw)
{
	return mt_collect_live(skel, raw, NULL);
}

int mt_collect_live(struct memleak_bpf *skel, struct mt_raw_profile *raw,
		    struct mt_collect_live *live)
{
	struct mt_pid_filter all = { NULL, 0, false };
	int ret = mt_collect_counters(skel, raw->sum.counters);

	if (!ret)
		ret = read_sizes(skel, raw->sum.sizes);
	if (!ret)
		ret = read_maps(skel, raw, &all, live);
	return ret;
}

int mt_collect_remove(struct memleak_bpf *skel, uint32_t *pids, size_t n,
		      struct mt_raw_profile *raw)
{
	struct mt_pid_filter f = { pids, n, true };

	if (n == 0)
		return 0;
	mt_pids_sort(pids, n);
	return read_maps(skel, raw, &f, NULL);
}
