// SPDX-License-Identifier: MIT
/* filter.c: dropping the samples of other processes. */
#include "filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mt_comm_match(const char *pattern, const char *comm)
{
	if (strpbrk(pattern, "*?["))
		return fnmatch(pattern, comm, 0) == 0;
	return strcmp(pattern, comm) == 0;
}

static bool keep(const struct mt_profile *p, uint32_t want_pid,
		 const char *comm, uint32_t pid)
{
	return (!want_pid || pid == want_pid) &&
	       (!comm || mt_comm_match(comm, mt_procs_comm(p->procs, p->nprocs, pid)));
}

/* Distinct pids among P's processes and samples (quadratic: a report's
 * processes are few; every sample's pid is usually among the first). */
static size_t count_pids(const struct mt_profile *p)
{
	uint32_t *seen = malloc((p->nprocs + p->nsamples + 1) * sizeof(*seen));
	size_t n = 0;

	if (!seen)
		return 0;
	for (size_t i = 0; i < p->nprocs + p->nsamples; i++) {
		uint32_t pid = i < p->nprocs ? p->procs[i].pid
					     : p->samples[i - p->nprocs].pid;
		size_t k = 0;

		while (k < n && seen[k] != pid)
			k++;
		if (k == n)
			seen[n++] = pid;
	}
	free(seen);
	return n;
}

/* The header's "shown:" line: what the filter kept, of how many. */
static void describe(struct mt_profile *p, uint32_t pid, const char *comm,
		     size_t before)
{
	size_t after = count_pids(p);
	char what[160];

	if (after == before)
		return;  /* nothing left out: the target line says it all */
	if (pid && comm)
		snprintf(what, sizeof(what), "pid %u named '%s'", pid, comm);
	else if (pid)
		snprintf(what, sizeof(what), "pid %u", pid);
	else
		snprintf(what, sizeof(what), "named '%s'", comm);
	if (after == 0)
		snprintf(p->sum.shown, sizeof(p->sum.shown),
			 "nothing: no process %s among the %zu traced", what, before);
	else
		snprintf(p->sum.shown, sizeof(p->sum.shown),
			 "%zu of %zu processes (%s); events, untracked frees and drops count all %zu",
			 after, before, what, before);
}

size_t mt_profile_nprocs(const struct mt_profile *p)
{
	return count_pids(p);
}

static bool is_mmap(const struct mt_profile *p, const struct mt_sample *s)
{
	return s->nframes &&
	       strcmp(p->frames[s->frames[0]].function, MT_MMAP_FRAME) == 0;
}

/* The header's totals, from the samples that are left. */
static void recount(struct mt_profile *p)
{
	uint64_t *c = p->sum.counters;

	c[MT_CNT_ALLOC_OBJECTS] = c[MT_CNT_ALLOC_BYTES] = 0;
	c[MT_CNT_FREE_OBJECTS] = c[MT_CNT_FREE_BYTES] = 0;
	c[MT_CNT_MMAP_OBJECTS] = c[MT_CNT_MMAP_BYTES] = 0;
	c[MT_CNT_MUNMAP_OBJECTS] = c[MT_CNT_MUNMAP_BYTES] = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const int64_t *v = p->samples[i].v;
		bool m = is_mmap(p, &p->samples[i]);

		c[m ? MT_CNT_MMAP_OBJECTS : MT_CNT_ALLOC_OBJECTS] += (uint64_t)v[MT_ALLOC_OBJECTS];
		c[m ? MT_CNT_MMAP_BYTES : MT_CNT_ALLOC_BYTES] += (uint64_t)v[MT_ALLOC_SPACE];
		c[m ? MT_CNT_MUNMAP_OBJECTS : MT_CNT_FREE_OBJECTS] +=
			(uint64_t)(v[MT_ALLOC_OBJECTS] - v[MT_INUSE_OBJECTS]);
		c[m ? MT_CNT_MUNMAP_BYTES : MT_CNT_FREE_BYTES] +=
			(uint64_t)(v[MT_ALLOC_SPACE] - v[MT_INUSE_SPACE]);
	}
}

/* The timeline's processes that are kept (by their own names). */
static void filter_timeline(struct mt_tl_summary *tl, uint32_t pid,
			    const char *comm)
{
	size_t n = 0;

	for (size_t i = 0; i < tl->nkept; i++) {
		const struct mt_tl_peak *pk = &tl->procs[i];

		char name[sizeof(pk->comm) + 1];

		snprintf(name, sizeof(name), "%.*s", (int)sizeof(pk->comm), pk->comm);
		if ((!pid || pk->pid == pid) && (!comm || mt_comm_match(comm, name)))
			tl->procs[n++] = *pk;
	}
	/* Those not kept in the summary are not known by name: left out. */
	tl->nkept = tl->nprocs = n;
}

int mt_profile_filter(struct mt_profile *p, uint32_t pid, const char *comm)
{
	size_t total = p->nsamples ? p->nsamples : 1;
	size_t *moved = malloc(total * sizeof(*moved));
	struct mt_sample *kept = malloc(total * sizeof(*kept));
	size_t n = 0, before = count_pids(p);

	if (!moved || !kept || (!pid && !comm)) {
		free(moved);
		free(kept);
		return pid || comm ? -ENOMEM : 0;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		if (keep(p, pid, comm, p->samples[i].pid)) {
			moved[i] = n;
			kept[n++] = p->samples[i];
		} else {
			moved[i] = SIZE_MAX;
			free(p->samples[i].frames);
		}
	}
	free(p->samples);
	p->samples = kept;
	p->nsamples = n;
	n = 0;
	for (size_t i = 0; i < p->nblocks; i++) {
		struct mt_block b = p->blocks[i];

		if (!keep(p, pid, comm, b.pid))
			continue;
		b.sample = b.sample < SIZE_MAX && moved[b.sample] != SIZE_MAX
				   ? moved[b.sample] : SIZE_MAX;
		p->blocks[n++] = b;
	}
	p->nblocks = n;
	free(moved);
	n = 0;
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct mt_process *pr = &p->procs[i];

		if ((!pid || pr->pid == pid) && (!comm || mt_comm_match(comm, pr->comm)))
			p->procs[n++] = *pr;
	}
	p->nprocs = n;
	describe(p, pid, comm, before);
	filter_timeline(&p->sum.timeline, pid, comm);
	recount(p);
	/* The histogram counts every process: it cannot be split. */
	p->sum.missing |= MT_FACT_SIZES;
	return 0;
}

static const char *raw_comm_of(const struct mt_raw_profile *raw, uint32_t pid)
{
	return mt_procs_comm(raw->procs, raw->nprocs, pid);
}

void mt_raw_profile_filter(struct mt_raw_profile *raw, const char *comm)
{
	size_t n = 0;

	if (!comm)
		return;
	raw->sum.missing |= MT_FACT_SIZES;  /* of every process */
	for (size_t i = 0; i < raw->nstacks; i++) {
		if (mt_comm_match(comm, raw_comm_of(raw, raw->stacks[i].pid)))
			raw->stacks[n++] = raw->stacks[i];
		else
			free(raw->stacks[i].ips);
	}
	raw->nstacks = n;
	n = 0;
	for (size_t i = 0; i < raw->nblocks; i++)
		if (mt_comm_match(comm, raw_comm_of(raw, raw->blocks[i].pid)))
			raw->blocks[n++] = raw->blocks[i];
	raw->nblocks = n;
}

void mt_profile_recount(struct mt_profile *p)
{
	recount(p);
}
