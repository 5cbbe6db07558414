/* SPDX-License-Identifier: MIT */
/* proc_allocators.c: each exec'd image's allocator, for the allocator line. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc_allocators.h"

/* Processes named per allocator on the line; more are counted. */
#define SHOWN_PIDS 4

int mt_proc_allocs_set(struct mt_proc_allocs *a, uint32_t pid, uint64_t dev,
		       uint64_t ino, const char *name)
{
	struct mt_proc_alloc *e = NULL;

	for (size_t i = 0; i < a->n && !e; i++)
		if (a->v[i].pid == pid)
			e = &a->v[i];
	if (!e) {
		if (a->n == a->cap) {
			size_t cap = a->cap ? a->cap * 2 : 8;
			struct mt_proc_alloc *v = reallocarray(a->v, cap, sizeof(*v));

			if (!v)
				return -ENOMEM;
			a->v = v;
			a->cap = cap;
		}
		e = &a->v[a->n++];
		e->pid = pid;
	}
	e->dev = dev;
	e->ino = ino;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return 0;
}

const char *mt_proc_allocs_of(const struct mt_proc_allocs *a, uint32_t pid)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].pid == pid)
			return a->v[i].name;
	return NULL;
}

/* Append to OUT at *LEN, truncating at N. */
static void put(char *out, size_t n, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *out, size_t n, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*len + 1 >= n)
		return;
	va_start(ap, fmt);
	w = vsnprintf(out + *len, n - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = *len + (size_t)w < n ? *len + (size_t)w : n - 1;
}

/* Whether two entries name the same allocator: its file, and its kind. */
static bool same(const struct mt_proc_alloc *x, const struct mt_proc_alloc *y)
{
	size_t kx = strcspn(x->name, " "), ky = strcspn(y->name, " ");

	if (kx != ky || memcmp(x->name, y->name, kx) != 0)
		return false;
	if (x->dev || x->ino || y->dev || y->ino)
		return x->dev == y->dev && x->ino == y->ino;
	return !strcmp(x->name, y->name);
}

/* Whether entry ORD[K] is the first of its allocator in the order ORD. */
static bool first_of_name(const struct mt_proc_allocs *a, const size_t *ord,
			  size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (same(&a->v[ord[j]], &a->v[ord[k]]))
			return false;
	return true;
}

size_t mt_proc_allocs_line(const struct mt_proc_allocs *a, uint32_t main_pid,
			   mt_proc_comm_fn comm, void *arg, char *out, size_t n)
{
	size_t *ord, k = 0, groups = 0, len = 0;

	if (n)
		out[0] = '\0';
	if (!a->n || !n)
		return 0;
	ord = calloc(a->n, sizeof(*ord));
	if (!ord)
		return 0;
	/* MAIN's entry first, then the others in the order they were named. */
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].pid == main_pid)
			ord[k++] = i;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].pid != main_pid)
			ord[k++] = i;
	for (size_t i = 0; i < k; i++)
		groups += first_of_name(a, ord, i);
	for (size_t i = 0; i < k; i++) {
		const struct mt_proc_alloc *g = &a->v[ord[i]];
		size_t shown = 0, more = 0;

		if (!first_of_name(a, ord, i))
			continue;
		put(out, n, &len, "%s%s", len ? "; " : "", g->name);
		if (groups < 2)
			break;
		for (size_t j = i; j < k; j++) {
			const struct mt_proc_alloc *e = &a->v[ord[j]];

			if (!same(e, g))
				continue;
			if (shown == SHOWN_PIDS) {
				more++;
				continue;
			}
			put(out, n, &len, "%spid %u %s", shown ? ", " : " (",
			    e->pid, comm ? comm(arg, e->pid) : "?");
			shown++;
		}
		if (more)
			put(out, n, &len, " and %zu more", more);
		put(out, n, &len, ")");
	}
	free(ord);
	return groups;
}

void mt_proc_allocs_free(struct mt_proc_allocs *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}
