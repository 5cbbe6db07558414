// SPDX-License-Identifier: MIT
/* trunc_procs.c: the stacks cut short, per process (trunc_procs.h). */
#include "trunc_procs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memleak.skel.h"
#include "trunc_reason.h"

int mt_trunc_count_add(struct mt_trunc_count **v, size_t *nv, uint32_t pid,
		       int r, uint64_t n)
{
	struct mt_trunc_count *nw;
	size_t i;

	if (r < 0 || r >= MT_TRUNC__COUNT)
		return 0;
	/* Most adds are for the process of the one before (found last). */
	for (i = *nv; i-- > 0;)
		if ((*v)[i].pid == pid)
			break;
	if (i == (size_t)-1) {
		nw = realloc(*v, (*nv + 1) * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		*v = nw;
		i = (*nv)++;
		memset(&nw[i], 0, sizeof(nw[i]));
		nw[i].pid = pid;
	}
	(*v)[i].n[r] += n;
	return 0;
}

/* The processes harvested (exited), moved out of the map. */
static struct mt_trunc_count *gone;
static size_t ngone;

/* Add VAL's counts (and its name) to PID's in *V. */
static int add_proc(struct mt_trunc_count **v, size_t *n, uint32_t pid,
		    const struct mt_trunc_proc *val)
{
	for (int r = 0; r < MT_TRUNC__COUNT; r++)
		if (val->n[r] && mt_trunc_count_add(v, n, pid, r, val->n[r]))
			return -ENOMEM;
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].pid == pid)
			memcpy((*v)[i].comm, val->comm, sizeof((*v)[i].comm));
	return 0;
}

void mt_trunc_procs_harvest(const struct memleak_bpf *skel, uint32_t pid)
{
	int fd = bpf_map__fd(skel->maps.trunc_procs);
	struct mt_trunc_proc val;

	if (pid == 0 || fd < 0 || bpf_map_lookup_elem(fd, &pid, &val))
		return;
	/* Kept in the map when it cannot be moved (no memory). */
	if (add_proc(&gone, &ngone, pid, &val) == 0)
		bpf_map_delete_elem(fd, &pid);
}

void mt_trunc_procs_free(void)
{
	free(gone);
	gone = NULL;
	ngone = 0;
}

static uint64_t total(const struct mt_trunc_count *c)
{
	uint64_t t = 0;

	for (int r = 0; r < MT_TRUNC__COUNT; r++)
		t += c->n[r];
	return t;
}

static int most_first(const void *a, const void *b)
{
	uint64_t x = total(a), y = total(b);

	return x > y ? -1 : x < y;
}

void mt_trunc_procs_say(const struct memleak_bpf *skel,
			const struct mt_trunc_count *extra, size_t nextra,
			const char *(*name)(void *ctx, uint32_t pid), void *ctx,
			FILE *out)
{
	int fd = bpf_map__fd(skel->maps.trunc_procs);
	struct mt_trunc_count *v = NULL;
	struct mt_trunc_proc val;
	uint32_t key, next, *prev = NULL;
	size_t n = 0;

	while (fd >= 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		if (add_proc(&v, &n, key, &val))
			goto out;
	}
	for (size_t i = 0; i < ngone; i++) {
		struct mt_trunc_proc val_gone;

		memset(&val_gone, 0, sizeof(val_gone));
		memcpy(val_gone.n, gone[i].n, sizeof(val_gone.n));
		memcpy(val_gone.comm, gone[i].comm, sizeof(val_gone.comm));
		if (add_proc(&v, &n, gone[i].pid, &val_gone))
			goto out;
	}
	for (size_t i = 0; i < nextra; i++)
		for (int r = 0; r < MT_TRUNC__COUNT; r++)
			if (extra[i].n[r] &&
			    mt_trunc_count_add(&v, &n, extra[i].pid, r, extra[i].n[r]))
				goto out;
	if (!n)
		goto out;
	qsort(v, n, sizeof(*v), most_first);
	fprintf(out, "memtrace: truncated stacks by process (%zu of them):\n", n);
	for (size_t i = 0; i < n; i++) {
		const char *comm = name ? name(ctx, v[i].pid) : NULL;
		const char *sep = "";

		/* The name it has now (the map's: at its first cut, perhaps
		 * before an exec). */
		v[i].comm[sizeof(v[i].comm) - 1] = '\0';
		if (!comm || !comm[0])
			comm = v[i].comm;
		if (v[i].pid == 0)
			fprintf(out, "memtrace:   other processes:");
		else
			fprintf(out, "memtrace:   pid %u (%s):", v[i].pid,
				comm && comm[0] ? comm : "?");
		for (int r = 0; r < MT_TRUNC__COUNT; r++) {
			if (!v[i].n[r])
				continue;
			fprintf(out, "%s %s %" PRIu64, sep,
				mt_trunc_reason_name(r), v[i].n[r]);
			sep = ",";
		}
		fputc('\n', out);
	}
out:
	free(v);
}
