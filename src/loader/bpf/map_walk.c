// SPDX-License-Identifier: MIT
/* map_walk.c: reading a BPF hash map in batches (see map_walk.h). */
#include "map_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

/* Entries read by one bpf_map_lookup_batch() call (more if a bucket of the
 * hash map holds more, which the kernel reports with ENOSPC). */
#define BATCH_ENTRIES 1024U

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void mt_pids_sort(uint32_t *pids, size_t n)
{
	qsort(pids, n, sizeof(*pids), cmp_u32);
}

static bool wanted(const struct mt_pid_filter *f, uint32_t pid)
{
	return f->n == 0 || bsearch(&pid, f->pids, f->n, sizeof(pid), cmp_u32);
}

/* One walk over a map: where it is, what it wants, what it keeps. */
struct walker {
	int fd;
	size_t ksize, vsize;
	const struct mt_pid_filter *f;
	mt_visit_fn visit;
	void *ctx;
	char *del;          /* keys to delete after the walk (f->remove) */
	size_t ndel, delcap;
};

static int resize(char **p, size_t size)
{
	char *np = realloc(*p, size);

	if (!np)
		return -ENOMEM;
	*p = np;
	return 0;
}

/* Visit one entry if its process is wanted; queue its key for deletion. */
static int visit_entry(struct walker *w, const void *key, const void *value)
{
	uint32_t pid;
	int ret;

	memcpy(&pid, key, sizeof(pid));
	if (!wanted(w->f, pid))
		return 0;
	if (w->f->remove) {
		if (w->ndel == w->delcap) {
			w->delcap = w->delcap ? w->delcap * 2 : 256;
			ret = resize(&w->del, w->delcap * w->ksize);
			if (ret)
				return ret;
		}
		memcpy(w->del + w->ksize * w->ndel++, key, w->ksize);
	}
	return w->visit(key, value, w->ctx);
}

/* Read the map in batches of entries, one system call each. */
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

int mt_map_walk(int fd, size_t ksize, size_t vsize,
		const struct mt_pid_filter *f, mt_visit_fn visit, void *ctx)
{
	struct walker w = { fd, ksize, vsize, f, visit, ctx, NULL, 0, 0 };
	int ret = walk_batches(&w);

	/* After a failure the caller has not got everything: keep it all. */
	if (ret == 0)
		delete_queued(&w);
	free(w.del);
	return ret;
}
