// SPDX-License-Identifier: MIT
/* table_holds.c: processes stopped until their files' unwind tables are
 * in (table_holds.h). */
#include "table_holds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "images.h"
#include "loop.h"
#include "proc_files.h"
#include "unwinder.h"

static void say(const struct mt_table_holds *h, const struct mt_table_hold *e)
{
	const struct mt_hold_note *o = &e->note;
	double now = mt_loop_now();

	if (!h->verbose)
		return;
	if (o->exe)
		fprintf(stderr, "memtrace: exec of %s by pid %d held it %.1f ms: its files %.1f ms, probes %.1f ms, unwind tables %.1f ms\n",
			o->exe, (int)e->pid, (now - o->t0) * 1e3,
			(o->t1 - o->t0) * 1e3, (o->t2 - o->t1) * 1e3,
			(now - o->t2) * 1e3);
	else
		fprintf(stderr, "memtrace: pid %d held at ld.so's hook%s %.1f ms: %zu files\n",
			(int)e->pid, o->dlopen ? " after its start" : "",
			(now - o->t0) * 1e3, e->n);
}

/* Drop entry E's own memory. */
static void release(struct mt_table_hold *e)
{
	free(e->keys);
	free((char *)e->note.exe);
	e->keys = NULL;
	e->note.exe = NULL;
}

/* Keep PID (its files KEYS, N, taken) unless their tables are in. */
static bool keep(struct mt_table_holds *h, struct mt_unwinder *u, pid_t pid,
		 struct mt_file_key *keys, size_t n,
		 const struct mt_hold_note *note)
{
	struct mt_table_hold e = { pid, keys, n, *note }, *nv;

	e.note.exe = note->exe ? strdup(note->exe) : NULL;
	if (mt_unwinder_ready(u, keys, n) || (note->exe && !e.note.exe) ||
	    !(nv = realloc(h->v, (h->n + 1) * sizeof(*nv)))) {
		say(h, &e);
		release(&e);
		return false;
	}
	h->v = nv;
	h->v[h->n++] = e;
	return true;
}

bool mt_table_holds_objects(struct mt_table_holds *h, struct mt_unwinder *u,
			    pid_t pid, const struct mt_objects *objs,
			    const struct mt_hold_note *note)
{
	struct mt_file_key *keys = calloc(objs->n ? objs->n : 1, sizeof(*keys));

	if (!keys)
		return false;
	for (size_t i = 0; i < objs->n; i++)
		mt_unwinder_key_of(&objs->v[i], &keys[i]);
	return keep(h, u, pid, keys, objs->n, note);
}

bool mt_table_holds_image(struct mt_table_holds *h, struct mt_unwinder *u,
			  pid_t pid, const struct mt_image *img,
			  const struct mt_hold_note *note)
{
	struct mt_file_key *keys = calloc(img->n ? img->n : 1, sizeof(*keys));
	size_t n = 0;

	if (!keys)
		return false;
	for (size_t i = 0; i < img->n; i++)
		if (img->v[i].exec)
			keys[n++] = img->v[i].file->key;
	return keep(h, u, pid, keys, n, note);
}

/* Drop entry I (resumed or gone). */
static void drop(struct mt_table_holds *h, size_t i)
{
	release(&h->v[i]);
	if (i != --h->n)
		h->v[i] = h->v[h->n];
}

void mt_table_holds_check(struct mt_table_holds *h, struct mt_unwinder *u)
{
	mt_unwinder_ready_ack(u);
	size_t k = 0;

	for (size_t i = 0; i < h->n; i++) {
		struct mt_table_hold e = h->v[i];

		if (!mt_unwinder_ready(u, e.keys, e.n)) {
			h->v[k++] = e; /* still held */
			continue;
		}
		say(h, &e);
		ptrace(PTRACE_CONT, e.pid, NULL, NULL);
		release(&e);
	}
	h->n = k;
}

void mt_table_holds_gone(struct mt_table_holds *h, pid_t pid)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].pid == pid) {
			drop(h, i);
			return;
		}
}

void mt_table_holds_free(struct mt_table_holds *h)
{
	while (h->n) {
		ptrace(PTRACE_CONT, h->v[h->n - 1].pid, NULL, NULL);
		drop(h, h->n - 1);
	}
	free(h->v);
	h->v = NULL;
}
