// SPDX-License-Identifier: MIT
/* top_frame.c: a frame of `memtrace top` from a snapshot: per process and
 * per stack, in use now and its growth since the previous frame. */
#include "top.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct mt_top_proc *)a)->pid;
	uint32_t y = ((const struct mt_top_proc *)b)->pid;

	return x < y ? -1 : x > y;
}

static int cmp_key(const void *a, const void *b)
{
	const struct mt_top_stack *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->category != y->category)
		return x->category < y->category ? -1 : 1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static struct mt_top_proc *find_proc(const struct mt_top_proc *rows, size_t n,
				     uint32_t pid)
{
	struct mt_top_proc key = { .pid = pid };

	return n ? bsearch(&key, rows, n, sizeof(*rows), cmp_pid) : NULL;
}

void mt_top_frame_free(struct mt_top_frame *f)
{
	free(f->procs);
	free(f->stacks);
	f->raw.procs = NULL; /* the tracer's */
	f->raw.nprocs = 0;
	mt_raw_profile_free(&f->raw);
	memset(f, 0, sizeof(*f));
}

/* One row per pid of RAW's processes and stacks (a pid listed twice,
 * after an exec: one row, named by a name that is known; a process whose
 * stacks were read before its name: "?"). */
static int proc_rows(const struct mt_raw_profile *raw, struct mt_top_frame *f)
{
	size_t n = 0;

	f->procs = calloc(raw->nprocs + raw->nstacks + 1, sizeof(*f->procs));
	if (!f->procs)
		return -ENOMEM;
	for (size_t i = 0; i < raw->nprocs; i++) {
		f->procs[n].pid = raw->procs[i].pid;
		memcpy(f->procs[n].comm, raw->procs[i].comm,
		       sizeof(f->procs[n].comm));
		n++;
	}
	for (size_t i = 0; i < raw->nstacks; i++)
		f->procs[n++].pid = raw->stacks[i].pid;
	qsort(f->procs, n, sizeof(*f->procs), cmp_pid);
	f->nprocs = 0;
	for (size_t i = 0; i < n; i++) {
		if (f->nprocs && f->procs[f->nprocs - 1].pid == f->procs[i].pid) {
			if (f->procs[i].comm[0] && strcmp(f->procs[i].comm, "?") != 0)
				memcpy(f->procs[f->nprocs - 1].comm,
				       f->procs[i].comm, sizeof(f->procs[i].comm));
			continue;
		}
		f->procs[f->nprocs++] = f->procs[i];
	}
	for (size_t i = 0; i < f->nprocs; i++)
		if (!f->procs[i].comm[0])
			snprintf(f->procs[i].comm, sizeof(f->procs[i].comm), "?");
	return 0;
}

int mt_top_frame_make(struct mt_raw_profile *raw,
		      const struct mt_top_frame *prev,
		      struct mt_top_frame *out)
{
	struct mt_top_frame f = { 0 };
	int ret;

	f.seq = prev->seq + 1;
	f.t = raw->sum.duration_s;
	f.dt = f.t - prev->t;
	f.events = raw->sum.counters[MT_CNT_EVENTS];
	ret = proc_rows(raw, &f);
	f.stacks = calloc(raw->nstacks + 1, sizeof(*f.stacks));
	if (ret || !f.stacks) {
		mt_top_frame_free(&f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < raw->nstacks; i++) {
		const struct mt_raw_stack *s = &raw->stacks[i];
		uint64_t inuse = s->alloc_bytes > s->free_bytes
				 ? s->alloc_bytes - s->free_bytes : 0;
		struct mt_top_proc *p = find_proc(f.procs, f.nprocs, s->pid);

		f.stacks[f.nstacks++] = (struct mt_top_stack){
			.pid = s->pid, .category = s->category,
			.stack_id = s->stack_id, .inuse = inuse, .raw = i,
		};
		if (p) {
			p->inuse += inuse;
			p->alloc_total += s->alloc_bytes;
		}
	}
	qsort(f.stacks, f.nstacks, sizeof(*f.stacks), cmp_key);
	for (size_t i = 0; i < f.nstacks; i++) {
		struct mt_top_stack *s = &f.stacks[i];
		const struct mt_top_stack *was = prev->nstacks
			? bsearch(s, prev->stacks, prev->nstacks, sizeof(*s), cmp_key)
			: NULL;

		s->growth = (int64_t)s->inuse - (int64_t)(was ? was->inuse : 0);
	}
	for (size_t i = 0; i < f.nprocs; i++) {
		struct mt_top_proc *p = &f.procs[i];
		const struct mt_top_proc *was = find_proc(prev->procs,
							  prev->nprocs, p->pid);
		uint64_t before = was ? was->alloc_total : 0;

		p->growth = (int64_t)p->inuse - (int64_t)(was ? was->inuse : 0);
		p->alloc = p->alloc_total > before ? p->alloc_total - before : 0;
		p->peak = p->inuse;
		if (was && was->peak > p->peak)
			p->peak = was->peak;
	}
	f.raw = *raw;
	memset(raw, 0, sizeof(*raw));
	/* The stacks are drawn; the blocks (one per allocation held) not. */
	free(f.raw.blocks);
	f.raw.blocks = NULL;
	f.raw.nblocks = 0;
	*out = f;
	return 0;
}

static enum mt_top_sort sort_key; /* for qsort's comparison */

static int64_t proc_value(const struct mt_top_proc *p)
{
	switch (sort_key) {
	case MT_TOP_GROWTH:
		return p->growth;
	case MT_TOP_PEAK:
		return (int64_t)p->peak;
	case MT_TOP_ALLOC:
		return (int64_t)p->alloc;
	case MT_TOP_INUSE:
	default:
		return (int64_t)p->inuse;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct mt_top_proc *x = a, *y = b;
	int64_t vx = proc_value(x), vy = proc_value(y);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->inuse != y->inuse)
		return x->inuse > y->inuse ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void mt_top_sort_procs(struct mt_top_proc *rows, size_t n,
		       enum mt_top_sort key)
{
	sort_key = key;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_rows);
}

static int cmp_growth(const void *a, const void *b)
{
	const struct mt_top_stack *x = a, *y = b;

	if (x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	if (x->inuse != y->inuse)
		return x->inuse > y->inuse ? -1 : 1;
	return cmp_key(a, b);
}

void mt_top_sort_stacks(struct mt_top_stack *rows, size_t n)
{
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_growth);
}
