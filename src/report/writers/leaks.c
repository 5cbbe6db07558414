// SPDX-License-Identifier: MIT
/* leaks.c: outstanding blocks grouped by stack. */
#include "leaks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "text.h"
#include "timeline_text.h"

#define MAX_ADDRS 3

struct leak_group {
	size_t group;            /* index into the stack groups */
	uint64_t bytes, blocks, min_size, max_size;  /* blocks: estimated (-s) */
	uint64_t nsampled;       /* blocks seen (all of them without -s) */
	uint64_t oldest_ts, newest_ts;
	uint64_t addrs[MAX_ADDRS];
};

static int cmp_leak(const void *a, const void *b)
{
	const struct leak_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static void add_block(struct leak_group *l, const struct mt_block *b)
{
	if (l->nsampled < MAX_ADDRS)
		l->addrs[l->nsampled] = b->addr;
	if (l->nsampled == 0 || b->size < l->min_size)
		l->min_size = b->size;
	if (b->size > l->max_size)
		l->max_size = b->size;
	if (l->nsampled == 0 || b->timestamp_ns < l->oldest_ts)
		l->oldest_ts = b->timestamp_ns;
	if (b->timestamp_ns > l->newest_ts)
		l->newest_ts = b->timestamp_ns;
	l->bytes += b->est_bytes;
	l->blocks += b->est_objects;
	l->nsampled++;
}

static double age_s(const struct mt_profile *p, uint64_t ts)
{
	return p->sum.stop_ns > ts ? (double)(p->sum.stop_ns - ts) / 1e9 : 0.0;
}

static const char *proc_name(const struct mt_profile *p, uint32_t pid)
{
	const char *c = mt_procs_comm(p->procs, p->nprocs, pid);

	return c[0] ? c : "?";
}

static void write_group(FILE *out, const struct mt_profile *p,
			const struct leak_group *l, const struct mt_sample *s,
			size_t rank, enum mt_unit unit, bool name_pid)
{
	char a[32], b[32], t[32];

	fprintf(out, "#%zu %" PRIu64 " bytes in %" PRIu64 " blocks (%s) not freed",
		rank, l->bytes, l->blocks,
		mt_format_bytes(t, sizeof(t), (int64_t)l->bytes, unit));
	/* Several processes: the same stack in two is two entries, named. */
	if (name_pid)
		fprintf(out, " by pid %u (%s)", s->pid,
			proc_name(p, s->pid));
	if (p->nblocks == 0) {
		/* A saved profile keeps totals per stack, not blocks. */
		fputc('\n', out);
	} else {
		if (p->sum.sample_bytes)
			fprintf(out, ", estimated from %" PRIu64 " sampled blocks",
				l->nsampled);
		fprintf(out, ", block sizes %s..%s, ages %.1fs..%.1fs\n",
			mt_format_bytes(a, sizeof(a), (int64_t)l->min_size, MT_UNIT_B),
			mt_format_bytes(b, sizeof(b), (int64_t)l->max_size, MT_UNIT_B),
			age_s(p, l->newest_ts), age_s(p, l->oldest_ts));
		fputs("    at", out);
		for (uint64_t i = 0; i < l->nsampled && i < MAX_ADDRS; i++)
			fprintf(out, " 0x%" PRIx64, l->addrs[i]);
		fputs(l->nsampled > MAX_ADDRS ? " ...\n" : "\n", out);
	}
	mt_write_frames(out, p, s);
	fputc('\n', out);
}

struct proc_leak {
	uint32_t pid;
	uint64_t bytes, blocks;
	size_t sites;
};

static int cmp_proc_leak(const void *a, const void *b)
{
	const struct proc_leak *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * What each process did not free, largest first, when the groups span
 * more than one process (the header's "(below)" then comes true too).
 * Returns the number of processes with something not freed, or -ENOMEM.
 */
static long write_procs(FILE *out, const struct mt_profile *p,
			const struct leak_group *leaks, size_t nl,
			const struct mt_stack_group *g, enum mt_unit unit)
{
	struct proc_leak *v = calloc(nl ? nl : 1, sizeof(*v));
	size_t n = 0;
	char buf[32];

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nl; i++) {
		uint32_t pid = p->samples[g[leaks[i].group].sample].pid;
		size_t k = 0;

		while (k < n && v[k].pid != pid)
			k++;
		if (k == n)
			v[n++].pid = pid;
		v[k].bytes += leaks[i].bytes;
		v[k].blocks += leaks[i].blocks;
		v[k].sites++;
	}
	if (n > 1) {
		qsort(v, n, sizeof(*v), cmp_proc_leak);
		fputs("Not freed by process:\n", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%10s in %" PRIu64 " blocks from %zu call sites  pid %u (%s)\n",
				mt_format_bytes(buf, sizeof(buf),
						(int64_t)v[i].bytes, unit),
				v[i].blocks, v[i].sites, v[i].pid,
				proc_name(p, v[i].pid));
		fputc('\n', out);
		mt_tl_write_procs(out, &p->sum, unit);
	}
	free(v);
	return (long)n;
}

/* Live profile: the outstanding blocks old enough, by stack group. */
static size_t groups_from_blocks(const struct mt_profile *p,
				 const struct mt_leak_opts *o,
				 const size_t *gof, size_t *slot,
				 struct leak_group *leaks)
{
	size_t nl = 0;

	for (size_t i = 0; i < p->nblocks; i++) {
		const struct mt_block *b = &p->blocks[i];
		size_t gi;

		if (b->sample >= p->nsamples ||
		    age_s(p, b->timestamp_ns) * 1e9 < (double)o->min_age_ns)
			continue;
		gi = gof[b->sample];
		if (slot[gi] == SIZE_MAX) {
			slot[gi] = nl;
			leaks[nl++].group = gi;
		}
		add_block(&leaks[slot[gi]], b);
	}
	return nl;
}

/* Saved profile: what each stack still had in use. */
static size_t groups_from_samples(const struct mt_stack_group *g, size_t ng,
				  struct leak_group *leaks)
{
	size_t nl = 0;

	for (size_t i = 0; i < ng; i++) {
		if (g[i].v[MT_INUSE_OBJECTS] <= 0)
			continue;
		leaks[nl].group = i;
		leaks[nl].bytes = (uint64_t)g[i].v[MT_INUSE_SPACE];
		leaks[nl++].blocks = (uint64_t)g[i].v[MT_INUSE_OBJECTS];
	}
	return nl;
}

int mt_write_leaks(FILE *out, const struct mt_profile *p,
		   const struct mt_leak_opts *o)
{
	struct mt_stack_group *g = NULL;
	struct leak_group *leaks = NULL;
	size_t ng = 0, nl = 0, *gof = NULL, *slot = NULL;
	uint64_t bytes = 0, blocks = 0;
	long nprocs;
	char buf[32];
	int ret = mt_stacks_group(p, true, &g, &ng, &gof);

	if (ret)
		return ret;
	slot = malloc((ng ? ng : 1) * sizeof(*slot));
	leaks = calloc(ng ? ng : 1, sizeof(*leaks));
	if (!slot || !leaks) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ng; i++)
		slot[i] = SIZE_MAX;
	if (p->nblocks)
		nl = groups_from_blocks(p, o, gof, slot, leaks);
	else
		nl = groups_from_samples(g, ng, leaks);
	for (size_t i = 0; i < nl; i++) {
		bytes += leaks[i].bytes;
		blocks += leaks[i].blocks;
	}
	qsort(leaks, nl, sizeof(*leaks), cmp_leak);
	mt_write_header(out, &p->sum, o->unit, "leak report");
	fputc('\n', out);
	fprintf(out, "not freed: %" PRIu64 " bytes in %" PRIu64 " blocks from %zu call sites (%s)",
		bytes, blocks, nl,
		mt_format_bytes(buf, sizeof(buf), (int64_t)bytes, o->unit));
	if (o->min_age_ns && p->nblocks)
		fprintf(out, ", blocks older than %.1fs", (double)o->min_age_ns / 1e9);
	fputs("\n\n", out);
	nprocs = write_procs(out, p, leaks, nl, g, o->unit);
	if (nprocs < 0) {
		ret = (int)nprocs;
		goto out;
	}
	for (size_t i = 0; i < nl && (o->top_n <= 0 || i < (size_t)o->top_n); i++)
		write_group(out, p, &leaks[i], &p->samples[g[leaks[i].group].sample],
			    i + 1, o->unit, nprocs > 1);
	if (o->top_n > 0 && nl > (size_t)o->top_n)
		fprintf(out, "(%zu more call sites not shown; -n sets how many)\n",
			nl - (size_t)o->top_n);
	ret = ferror(out) ? -EIO : 0;
out:
	free(g);
	free(gof);
	free(slot);
	free(leaks);
	return ret;
}
