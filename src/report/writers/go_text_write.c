// SPDX-License-Identifier: MIT
/* go_text_write.c: Go's legacy text heap profile (go_text_write.h). */
#include "go_text_write.h"

#include <errno.h>
#include <inttypes.h>

static bool empty(const struct mt_sample *s)
{
	return !s->v[0] && !s->v[1] && !s->v[2] && !s->v[3];
}

/* The record line of S: values, then its stack's return addresses (one
 * per machine frame: the last of a run of inlined frames). */
static void record(FILE *out, const struct mt_profile *p,
		   const struct mt_sample *s)
{
	fprintf(out, "%" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @",
		s->v[MT_INUSE_OBJECTS], s->v[MT_INUSE_SPACE],
		s->v[MT_ALLOC_OBJECTS], s->v[MT_ALLOC_SPACE]);
	for (size_t j = 0; j < s->nframes; j++) {
		const struct mt_frame *f = &p->frames[s->frames[j]];

		if (!f->inlined && f->addr)
			fprintf(out, " 0x%" PRIx64, f->addr);
	}
	fputc('\n', out);
	for (size_t j = 0; j < s->nframes; j++) {
		const struct mt_frame *f = &p->frames[s->frames[j]];
		uint64_t pc = f->addr ? f->addr - 1 : 0;

		if (f->unresolved || !f->function) {
			fprintf(out, "#\t0x%" PRIx64 "\n", pc);
			continue;
		}
		fprintf(out, "#\t0x%" PRIx64 "\t%s", pc, f->function);
		if (f->file)
			fprintf(out, "\t%s:%d", f->file, f->line > 0 ? f->line : 0);
		fputc('\n', out);
	}
	fputc('\n', out);
}

int mt_go_text_write(FILE *out, const struct mt_profile *p)
{
	int64_t t[MT_NVALUES] = { 0 };

	for (size_t i = 0; i < p->nsamples; i++)
		for (int v = 0; v < MT_NVALUES; v++)
			t[v] += p->samples[i].v[v];
	fprintf(out, "heap profile: %" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @ heap/2\n",
		t[MT_INUSE_OBJECTS], t[MT_INUSE_SPACE], t[MT_ALLOC_OBJECTS],
		t[MT_ALLOC_SPACE]);
	for (size_t i = 0; i < p->nsamples; i++)
		if (!empty(&p->samples[i]))
			record(out, p, &p->samples[i]);
	return ferror(out) ? -EIO : 0;
}
