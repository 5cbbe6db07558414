/* SPDX-License-Identifier: MIT */
/* text_procs.c: per-process totals of the text report. */
#include <errno.h>
#include <stdlib.h>
#include "text_priv.h"

struct proc_total {
	uint32_t pid;
	const char *comm;  /* NULL when the profile has no mt_process for it */
	int64_t v;
};

static int cmp_pid(const void *a, const void *b)
{
	const struct proc_total *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_value(const void *a, const void *b)
{
	const struct proc_total *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return cmp_pid(a, b);
}

/* Totals per distinct pid of P's processes and samples, in *T. */
static int collect(const struct mt_profile *p, enum mt_value m,
		   struct proc_total **t, size_t *n)
{
	size_t cap = p->nprocs + p->nsamples, k = 0;
	struct proc_total *v = calloc(cap ? cap : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nprocs; i++)
		v[k++] = (struct proc_total){ p->procs[i].pid, p->procs[i].comm, 0 };
	for (size_t i = 0; i < p->nsamples; i++)
		v[k++] = (struct proc_total){ p->samples[i].pid, NULL,
					      p->samples[i].v[m] };
	qsort(v, k, sizeof(*v), cmp_pid);
	*n = 0;
	for (size_t i = 0; i < k; i++) {
		struct proc_total *last = *n ? &v[*n - 1] : NULL;

		if (last && last->pid == v[i].pid) {
			last->v += v[i].v;
			if (!last->comm)
				last->comm = v[i].comm;
		} else {
			v[(*n)++] = v[i];
		}
	}
	*t = v;
	return 0;
}

int mt_text_processes(FILE *out, const struct mt_profile *p,
		      const struct mt_text_opts *o)
{
	struct proc_total *t;
	size_t n;
	char buf[MT_TEXT_BUF];
	int err = collect(p, o->metric, &t, &n);

	if (err)
		return err;
	if (n > 1) {
		qsort(t, n, sizeof(*t), cmp_value);
		fprintf(out, "Processes by %s:\n", mt_value_name(o->metric));
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%8s  pid %u (%s)\n",
				mt_text_value(buf, sizeof(buf), t[i].v, o->metric,
					      o->unit),
				t[i].pid, t[i].comm ? t[i].comm : "?");
		fputc('\n', out);
	}
	free(t);
	return 0;
}
