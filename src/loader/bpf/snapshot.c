// SPDX-License-Identifier: MIT
/* snapshot.c: the maps read while tracing, put back at one instant. */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect.h"
#include "itab.h"
#include "memleak.skel.h"
#include "loop.h"

static int keep_record(void *ctx, void *data, size_t size)
{
	struct mt_snapshot *s = ctx;

	if (size < sizeof(struct mt_journal) || s->error)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		struct mt_journal *v = realloc(s->recs, cap * sizeof(*v));

		if (!v) {
			s->error = -ENOMEM;
			return 0;
		}
		s->recs = v;
		s->cap = cap;
	}
	memcpy(&s->recs[s->n++], data, sizeof(struct mt_journal));
	return 0;
}

int mt_snapshot_init(struct mt_snapshot *s, struct memleak_bpf *skel)
{
	memset(s, 0, sizeof(*s));
	s->active_fd = bpf_map__fd(skel->maps.active);
	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.journal), keep_record,
				 s, NULL);
	return s->rb ? 0 : -errno;
}

static void drain(void *ctx)
{
	struct mt_snapshot *s = ctx;

	ring_buffer__consume(s->rb);
}

struct find_stack {
	const struct mt_raw_stack *stacks;
	const struct mt_journal *j;
};

static bool same_stack(const void *ctx, uint32_t idx)
{
	const struct find_stack *f = ctx;
	const struct mt_raw_stack *rs = &f->stacks[idx];

	return rs->pid == f->j->pid && rs->category == f->j->category &&
	       rs->stack_id == f->j->info.stack_id;
}

static uint64_t block_hash(uint32_t pid, uint32_t category, uint64_t addr,
			   uint64_t ts)
{
	return mt_hash_u64(mt_raw_key_hash(pid, category, addr), ts);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a - (b < a ? b : a);
}

/*
 * Wait until every program counted in active[IDX] has ended (they run for
 * microseconds, but a preempted one may take longer).  False after 2 s.
 */
static bool wait_idle(struct mt_snapshot *s, uint32_t idx)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 vals[ncpus > 0 ? ncpus : 1];

	for (int tries = 0; ncpus > 0 && tries < 20000; tries++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(s->active_fd, &idx, vals))
			return false;
		for (int c = 0; c < ncpus; c++)
			sum += vals[c];
		if (sum == 0)
			return true;
		usleep(100);
	}
	return false;
}

/* Set the BPF program's journal_state, then wait for the programs that
 * began before (counted in OLD's index) to end. */
static void set_state(struct mt_snapshot *s, struct memleak_bpf *skel,
		      uint32_t state)
{
	uint32_t old = __atomic_load_n(&skel->bss->journal_state,
				       __ATOMIC_SEQ_CST);

	__atomic_store_n(&skel->bss->journal_state, state, __ATOMIC_SEQ_CST);
	if ((old & MT_JOURNAL_IDX) != (state & MT_JOURNAL_IDX) &&
	    !wait_idle(s, old & MT_JOURNAL_IDX))
		s->skew++;
}

/* The raw stack of record J among those from S0, or NULL. */
static struct mt_raw_stack *stack_of(struct mt_raw_profile *raw, size_t s0,
				     const struct mt_itab *stacks,
				     const struct mt_journal *j)
{
	struct find_stack f = { raw->stacks + s0, j };
	uint32_t idx;

	if (!j->stat_count ||
	    !mt_itab_find(stacks, mt_raw_key_hash(j->pid, j->category,
					      j->info.stack_id),
			  same_stack, &f, &idx))
		return NULL;
	return &raw->stacks[s0 + idx];
}

/*
 * An allocation journaled: its stack's totals read either counted it (its
 * objects had reached stat_count) or not; at T0 they should if it came
 * before T0.
 */
static void place_alloc(struct mt_raw_stack *rs, const struct mt_journal *j,
			uint64_t t0)
{
	bool counted = rs->alloc_objects >= j->stat_count;
	bool before = j->info.timestamp <= t0;

	if (counted && !before) {
		rs->alloc_bytes = minus(rs->alloc_bytes, j->info.est_bytes);
		rs->alloc_objects = minus(rs->alloc_objects, j->info.est_objects);
	} else if (!counted && before) {
		rs->alloc_bytes += j->info.est_bytes;
		rs->alloc_objects += j->info.est_objects;
	}
}

/*
 * The blocks the journal speaks of that were allocated by T0, each once
 * (a block may have an allocation and a free record): indexed by the
 * block's identity, so that the blocks read (a million, perhaps) are each
 * looked up in this small table rather than all indexed for the journal's
 * few.
 */
struct journal_blocks {
	struct mt_itab index;      /* block -> its first record's index */
	const struct mt_journal *recs;
	struct journal_block {
		uint32_t rec;          /* its first record */
		bool read;             /* among the blocks read */
		bool freed;            /* freed by T0 */
	} *v;
	size_t n;
};

struct find_record {
	const struct journal_blocks *jb;
	uint32_t pid, category;
	uint64_t addr, ts;
};

static bool same_record(const void *ctx, uint32_t idx)
{
	const struct find_record *f = ctx;
	const struct mt_journal *j = &f->jb->recs[f->jb->v[idx].rec];

	return j->pid == f->pid && j->category == f->category &&
	       j->addr == f->addr && j->info.timestamp == f->ts;
}

static struct journal_block *journal_block(const struct journal_blocks *jb,
					   uint32_t pid, uint32_t category,
					   uint64_t addr, uint64_t ts)
{
	struct find_record f = { jb, pid, category, addr, ts };
	uint32_t idx;

	if (!mt_itab_find(&jb->index, block_hash(pid, category, addr, ts),
			  same_record, &f, &idx))
		return NULL;
	return &jb->v[idx];
}

static int journal_blocks_make(struct journal_blocks *jb,
			       const struct mt_snapshot *s)
{
	struct journal_block *v = malloc((s->n ? s->n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	jb->recs = s->recs;
	jb->v = v;
	for (size_t i = 0; i < s->n; i++) {
		const struct mt_journal *j = &s->recs[i];
		struct journal_block *e;
		int ret;

		if (j->info.timestamp > s->t0_ns)
			continue; /* allocated after T0: not held then */
		e = journal_block(jb, j->pid, j->category, j->addr,
				  j->info.timestamp);
		if (!e) {
			e = &v[jb->n];
			*e = (struct journal_block){ .rec = (uint32_t)i };
			ret = mt_itab_add(&jb->index,
					  block_hash(j->pid, j->category,
						     j->addr, j->info.timestamp),
					  (uint32_t)jb->n);
			if (ret)
				return ret;
			jb->n++;
		}
		if (j->kind == MT_JOURNAL_FREE && j->ns <= s->t0_ns)
			e->freed = true;
	}
	return 0;
}

static void journal_blocks_free(struct journal_blocks *jb)
{
	mt_itab_free(&jb->index);
	free(jb->v);
}

/* Append the block of record J to RAW. */
static int add_block(struct mt_raw_profile *raw, const struct mt_journal *j)
{
	struct mt_raw_block *b = realloc(raw->blocks,
					 (raw->nblocks + 1) * sizeof(*b));

	if (!b)
		return -ENOMEM;
	raw->blocks = b;
	raw->blocks[raw->nblocks++] = (struct mt_raw_block){
		.pid = j->pid, .category = j->category, .addr = j->addr,
		.size = j->info.size, .stack_id = j->info.stack_id,
		.timestamp_ns = j->info.timestamp,
		.est_bytes = j->info.est_bytes,
		.est_objects = j->info.est_objects,
	};
	return 0;
}

/*
 * The blocks held at T0: those read from B0 on (allocated by T0), and
 * those journaled as allocated by T0 but not read (stored after their
 * bucket was read, or freed after T0 before it was); less those freed by
 * T0.
 */
static int place_blocks(struct mt_snapshot *s, struct mt_raw_profile *raw,
			size_t b0)
{
	struct journal_blocks jb = { 0 };
	size_t out = b0, nread = raw->nblocks;
	int ret = s->n && s->recs ? journal_blocks_make(&jb, s) : 0;

	if (ret || jb.n == 0 || !jb.v) {
		journal_blocks_free(&jb);
		return ret;
	}
	for (size_t i = b0; i < nread; i++) {
		const struct mt_raw_block *b = &raw->blocks[i];
		struct journal_block *e = journal_block(&jb, b->pid, b->category,
							b->addr,
							b->timestamp_ns);

		if (e)
			e->read = true;
		if (!e || !e->freed)
			raw->blocks[out++] = *b;
	}
	raw->nblocks = out;
	for (size_t i = 0; i < jb.n && !ret; i++) {
		const struct journal_block *e = &jb.v[i];

		/* jb.v is set whenever jb.n > 0 (checked above). */
		if (!e->read && !e->freed) // NOLINT(clang-analyzer-core.NullDereference)
			ret = add_block(raw, &jb.recs[e->rec]);
	}
	journal_blocks_free(&jb);
	return ret;
}

/* Everything is read: bring it back to T0 with the journal. */
static int fix(void *ctx, struct mt_raw_profile *raw, size_t s0, size_t b0)
{
	struct mt_snapshot *s = ctx;
	struct mt_itab stacks = { 0 };
	uint64_t *c = raw->sum.counters;
	uint64_t read[2][2] = { { 0 } }, now[2][2] = { { 0 } };
	int ret = 0;

	/* Every program that began while the maps were read has ended, its
	 * records in the journal (the state stays "journaling"). */
	set_state(s, s->skel, (s->state ^ MT_JOURNAL_IDX) | MT_JOURNAL_ON);
	s->state ^= MT_JOURNAL_IDX;
	drain(s);
	for (size_t i = s0; i < raw->nstacks && !ret; i++) {
		const struct mt_raw_stack *rs = &raw->stacks[i];

		read[rs->category == MT_CAT_MMAP][0] += rs->alloc_bytes;
		read[rs->category == MT_CAT_MMAP][1] += rs->alloc_objects;
		ret = mt_itab_add(&stacks, mt_raw_key_hash(rs->pid, rs->category,
						       rs->stack_id),
				  (uint32_t)(i - s0));
	}
	for (size_t i = 0; i < s->n && !ret; i++) {
		const struct mt_journal *j = &s->recs[i];
		struct mt_raw_stack *rs;

		if (j->kind == MT_JOURNAL_ALLOC &&
		    (rs = stack_of(raw, s0, &stacks, j)) != NULL)
			place_alloc(rs, j, s->t0_ns);
	}
	if (!ret)
		ret = place_blocks(s, raw, b0);
	/* The counters' totals: the stacks' at T0, and what no stack kept. */
	for (size_t i = s0; i < raw->nstacks && !ret; i++) {
		const struct mt_raw_stack *rs = &raw->stacks[i];

		now[rs->category == MT_CAT_MMAP][0] += rs->alloc_bytes;
		now[rs->category == MT_CAT_MMAP][1] += rs->alloc_objects;
	}
	c[MT_CNT_ALLOC_BYTES] = now[0][0] + minus(c[MT_CNT_ALLOC_BYTES], read[0][0]);
	c[MT_CNT_ALLOC_OBJECTS] = now[0][1] + minus(c[MT_CNT_ALLOC_OBJECTS], read[0][1]);
	c[MT_CNT_MMAP_BYTES] = now[1][0] + minus(c[MT_CNT_MMAP_BYTES], read[1][0]);
	c[MT_CNT_MMAP_OBJECTS] = now[1][1] + minus(c[MT_CNT_MMAP_OBJECTS], read[1][1]);
	c[MT_CNT_SNAPSHOT_SKEW] += s->skew;
	mt_itab_free(&stacks);
	return ret ? ret : s->error;
}

int mt_snapshot_take(struct mt_snapshot *s, struct memleak_bpf *skel,
		     struct mt_raw_profile *raw)
{
	struct mt_collect_live live = { .poll = drain, .fix = fix, .ctx = s };
	int ret;

	drain(s); /* nothing should be there; whatever is, is old */
	s->n = 0;
	s->error = 0;
	s->skew = 0;
	s->skel = skel;
	/* Journal; once every program that began before has ended, every
	 * change after T0 is in the journal. */
	s->state ^= MT_JOURNAL_IDX;
	set_state(s, skel, s->state | MT_JOURNAL_ON);
	s->t0_ns = mt_loop_now_ns();
	live.t0_ns = s->t0_ns;
	ret = mt_collect_live(skel, raw, &live);
	set_state(s, skel, s->state); /* off (same index: no wait) */
	s->n = 0;
	return ret;
}

void mt_snapshot_free(struct mt_snapshot *s)
{
	if (s->rb)
		ring_buffer__free(s->rb);
	free(s->recs);
	memset(s, 0, sizeof(*s));
}
