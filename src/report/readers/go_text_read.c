/* SPDX-License-Identifier: MIT */
/* go_text_read.c: Go's debug=1 heap profile (see go_text_read.h). */
#include "go_text_read.h"

#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"
#include "heap_text.h"
#include "itab.h"

#define MAGIC "heap profile:"

bool mt_go_text_is(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	size_t n = nl ? (size_t)(nl - text) : len;

	return len >= strlen(MAGIC) && strncmp(text, MAGIC, strlen(MAGIC)) == 0 &&
	       memmem(text, n, "@ heap/", 7) != NULL;
}

struct go_reader {
	struct mt_profile *p;
	struct mt_frame_vec frames;
	struct mt_itab frameidx;
	size_t samplecap;
	uint64_t period;
	uint32_t *stack;         /* frames of the current record */
	size_t nstack, stackcap;
	int64_t v[MT_NVALUES];   /* values of the current record */
	bool in_record;
};

struct frame_key {
	const struct mt_frame_vec *fv;
	const struct mt_frame *f;
};

static bool frame_eq(const void *ctx, uint32_t idx)
{
	const struct frame_key *k = ctx;

	return mt_frame_same(&k->fv->v[idx], k->f);
}

/* Intern F (taking its strings) and append it to the current stack. */
static int push_frame(struct go_reader *g, struct mt_frame *f)
{
	struct frame_key k = { &g->frames, f };
	uint64_t h = mt_frame_hash(f);
	uint32_t idx;

	if (g->nstack == g->stackcap) {
		size_t cap = g->stackcap ? g->stackcap * 2 : 16;
		uint32_t *v = reallocarray(g->stack, cap, sizeof(*v));

		if (!v) {
			mt_frame_clear(f);
			return -ENOMEM;
		}
		g->stack = v;
		g->stackcap = cap;
	}
	if (mt_itab_find(&g->frameidx, h, frame_eq, &k, &idx)) {
		mt_frame_clear(f);
	} else {
		if (g->frames.n >= UINT32_MAX - 1 || mt_frame_vec_push(&g->frames, f))
			return -ENOMEM;
		idx = (uint32_t)(g->frames.n - 1);
		if (mt_itab_add(&g->frameidx, h, idx))
			return -ENOMEM;
	}
	g->stack[g->nstack++] = idx;
	return 0;
}

/* "#\t0x4b420b\tmain.allocLarge+0x2b\t./main.go:47" */
static int frame_line(struct go_reader *g, struct mt_line l)
{
	struct mt_frame f = { 0 };
	const char *name, *file, *colon;
	size_t nlen, flen;
	uint64_t pc, ln = 0;

	if (!mt_line_hex(&l, false, &pc) || pc == UINT64_MAX ||
	    (l.p < l.end && *l.p != '\t' && *l.p != ' ' && *l.p != '\r'))
		return -EINVAL;
	mt_line_skip_blanks(&l);
	while (l.p < l.end && *l.p == '\r')
		l.p++;
	/* "#\t0x4b420b" alone: code without a name (Go's, and memtrace's). */
	if (l.p == l.end) {
		f.unresolved = true;
		f.addr = pc + 1;
		if (asprintf(&f.function, "[unknown]+0x%" PRIx64, pc) < 0) {
			f.function = NULL;
			return -ENOMEM;
		}
		return push_frame(g, &f);
	}
	/* The name ends at a tab: C++'s have spaces. */
	name = l.p;
	while (l.p < l.end && *l.p != '\t' && *l.p != '\r')
		l.p++;
	nlen = (size_t)(l.p - name);
	while (nlen && name[nlen - 1] == ' ')
		nlen--;
	if (!nlen || memchr(name, '\0', nlen))
		return -EINVAL;
	/* "func+0xOFF": the offset is not part of the name. */
	for (size_t i = nlen; i > 1; i--) {
		if (name[i - 1] == '+' && nlen - i >= 2 && name[i] == '0' &&
		    name[i + 1] == 'x') {
			nlen = i - 1;
			break;
		}
	}
	mt_line_skip_blanks(&l);
	file = l.p;
	flen = (size_t)(l.end - l.p);
	if (memchr(file, '\0', flen))
		return -EINVAL;
	colon = flen ? memrchr(file, ':', flen) : NULL;
	if (colon) {
		struct mt_line n = { colon + 1, l.end };

		if (!mt_line_u64(&n, INT32_MAX, &ln))
			ln = 0;
		flen = (size_t)(colon - file);
	}
	f.function = strndup(name, nlen);
	f.file = flen ? strndup(file, flen) : NULL;
	f.line = (int)ln;
	f.addr = pc + 1;  /* the return address, as frames keep it */
	if (!f.function || (flen && !f.file)) {
		mt_frame_clear(&f);
		return -ENOMEM;
	}
	return push_frame(g, &f);
}

/* Close the current record: its sample. */
static int end_record(struct go_reader *g)
{
	struct mt_profile *p = g->p;
	struct mt_sample *s;

	if (!g->in_record)
		return 0;
	g->in_record = false;
	if (!g->v[0] && !g->v[1] && !g->v[2] && !g->v[3])
		return 0;
	if (p->nsamples == g->samplecap) {
		size_t cap = g->samplecap ? g->samplecap * 2 : 64;
		struct mt_sample *v = reallocarray(p->samples, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->samples = v;
		g->samplecap = cap;
	}
	s = &p->samples[p->nsamples];
	memset(s, 0, sizeof(*s));
	s->frames = calloc(g->nstack ? g->nstack : 1, sizeof(*s->frames));
	if (!s->frames)
		return -ENOMEM;
	if (g->nstack)
		memcpy(s->frames, g->stack, g->nstack * sizeof(*s->frames));
	s->nframes = g->nstack;
	memcpy(s->v, g->v, sizeof(s->v));
	p->nsamples++;
	p->sum.counters[MT_CNT_ALLOC_OBJECTS] += (uint64_t)s->v[MT_ALLOC_OBJECTS];
	p->sum.counters[MT_CNT_ALLOC_BYTES] += (uint64_t)s->v[MT_ALLOC_SPACE];
	p->sum.counters[MT_CNT_FREE_OBJECTS] +=
		(uint64_t)(s->v[MT_ALLOC_OBJECTS] - s->v[MT_INUSE_OBJECTS]);
	p->sum.counters[MT_CNT_FREE_BYTES] +=
		(uint64_t)(s->v[MT_ALLOC_SPACE] - s->v[MT_INUSE_SPACE]);
	return 0;
}

/* "C: B [AC: AB] @ 0x..." starts a record (its addresses are those of
 * the frame lines that follow). */
static int record_line(struct go_reader *g, struct mt_line l)
{
	struct mt_heap_record r = { 0 };
	int64_t io, ib, ao, ab;
	int err = end_record(g);

	if (err)
		return err;
	if (!mt_heap_text_figures(&l, &r) || !mt_line_lit(&l, "@"))
		return -EINVAL;
	io = r.inuse_objects, ib = r.inuse_bytes;
	ao = r.alloc_objects, ab = r.alloc_bytes;
	if (io < 0 || ib < 0 || ao < io || ab < ib || (io == 0 && ib) ||
	    (ao == 0 && ab))
		return -EINVAL;
	if (!mt_heap_unbias(&io, &ib, g->period) ||
	    !mt_heap_unbias(&ao, &ab, g->period))
		return -ERANGE;
	g->v[MT_INUSE_OBJECTS] = io;
	g->v[MT_INUSE_SPACE] = ib;
	g->v[MT_ALLOC_OBJECTS] = ao > io ? ao : io;
	g->v[MT_ALLOC_SPACE] = ab > ib ? ab : ib;
	g->nstack = 0;
	g->in_record = true;
	return 0;
}

static int one_line(struct go_reader *g, struct mt_line l)
{
	if (mt_line_blank(&l))
		return end_record(g);
	if (mt_line_starts(&l, "#\t"))
		return g->in_record ? frame_line(g, l) : -EINVAL;
	if (l.p[0] == '#')  /* "# runtime.MemStats" and what follows */
		return end_record(g);
	return record_line(g, l);
}

/* The header's "@ heap/N": N, 2 x MemProfileRate, from 1 to 2^63-1. */
static bool header(struct mt_line l, uint64_t *rate)
{
	const char *at = memmem(l.p, (size_t)(l.end - l.p), "@ heap/", 7);

	if (!at)
		return false;
	l.p = at + 7;
	return mt_line_u64(&l, INT64_MAX, rate) && *rate > 0 && mt_line_blank(&l);
}

int mt_go_text_parse(const char *text, size_t len, struct mt_profile *p,
		     char *err, size_t errlen)
{
	struct go_reader g = { .p = p };
	struct mt_line l;
	uint64_t rate = 0;
	size_t pos = 0, lineno = 1;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	if (!mt_line_next(text, len, &pos, &l) || !header(l, &rate)) {
		snprintf(err, errlen, "line 1: \"@ heap/N\" expected (N from 1 to 2^63-1)");
		return -EINVAL;
	}
	g.period = rate / 2;  /* Go writes 2 x MemProfileRate */
	p->sum.sample_bytes = g.period > 1 ? g.period : 0;
	while (!ret && mt_line_next(text, len, &pos, &l)) {
		lineno++;
		ret = one_line(&g, l);
	}
	if (!ret)
		ret = end_record(&g);
	if (ret)
		mt_heap_text_error(ret, lineno, "malformed line", err, errlen);
	if (!ret) {
		p->procs = calloc(1, sizeof(*p->procs));
		ret = p->procs ? 0 : -ENOMEM;
		p->nprocs = p->procs ? 1 : 0;
	}
	p->frames = g.frames.v;
	p->nframes = g.frames.n;
	memset(&g.frames, 0, sizeof(g.frames));
	mt_itab_free(&g.frameidx);
	free(g.stack);
	return ret;
}
