/* SPDX-License-Identifier: MIT */
/*
 * text_stacks.c: the heaviest stacks of the text report.  Samples with the
 * same frames are merged (whatever their process); frames are listed leaf
 * first with the location of each (its call site for callers).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"
#include "stacks.h"
#include "text_priv.h"

/* At most this many values of a series are shown, evenly spaced. */
#define MAX_POINTS 8

/* "; in each profile: 1000B -> 2000B -> 3000B" (--growth). */
static void write_series(FILE *out, const struct mt_profile *p,
			 const struct mt_stack_group *g,
			 const struct mt_text_opts *o)
{
	const struct mt_text_series *se = o->series;
	const int64_t *v = se && se->npoints ?
		se->of(se->ctx, &p->samples[g->sample]) : NULL;
	size_t n = se ? se->npoints : 0, shown = n < MAX_POINTS ? n : MAX_POINTS;
	char buf[MT_TEXT_BUF];

	if (!v)
		return;
	fputs("; in each profile:", out);
	for (size_t k = 0; k < shown; k++) {
		/* The first and the last, and evenly between. */
		size_t i = shown > 1 ? (k * (n - 1) + (shown - 1) / 2) / (shown - 1)
				     : 0;

		fprintf(out, "%s%s", k ? " -> " : " ",
			mt_text_value(buf, sizeof(buf), v[i], o->metric,
				      o->unit));
	}
	if (shown < n)
		fprintf(out, " (%zu of %zu profiles)", shown, n);
}

static void write_heading(FILE *out, const struct mt_profile *p, size_t rank,
			  const struct mt_stack_group *g,
			  const struct mt_text_opts *o)
{
	enum mt_value other = mt_text_counterpart(o->metric);
	char a[MT_TEXT_BUF], b[MT_TEXT_BUF];

	if (mt_value_is_bytes(o->metric))
		fprintf(out, "#%zu %s in %s objects", rank,
			mt_text_value(a, sizeof(a), g->v[o->metric], o->metric,
				      o->unit),
			mt_text_value(b, sizeof(b), g->v[other], other, o->unit));
	else
		fprintf(out, "#%zu %s objects (%s)", rank,
			mt_text_value(a, sizeof(a), g->v[o->metric], o->metric,
				      o->unit),
			mt_text_value(b, sizeof(b), g->v[other], other, o->unit));
	write_series(out, p, g, o);
	fputc('\n', out);
}

void mt_write_frames(FILE *out, const struct mt_profile *p,
		     const struct mt_sample *s)
{
	int width = 0;

	for (size_t k = 0; k < s->nframes; k++) {
		size_t len = strlen(mt_text_function(&p->frames[s->frames[k]]));

		if (len > (size_t)width)
			width = len > 200 ? 200 : (int)len;
	}
	for (size_t k = 0; k < s->nframes; k++) {
		const struct mt_frame *f = &p->frames[s->frames[k]];

		if (f->file) {
			fprintf(out, "    %-*s", width, mt_text_function(f));
			mt_text_location(out, "  ", f->file, f->line);
		} else if (f->module) {
			fprintf(out, "    %-*s  [%s]", width, mt_text_function(f),
				mt_path_basename(f->module));
		} else {
			fprintf(out, "    %s", mt_text_function(f));
		}
		fputs(f->inlined ? " (inlined)\n" : "\n", out);
	}
}

int mt_text_stacks(FILE *out, const struct mt_profile *p,
		   const struct mt_text_opts *o)
{
	struct mt_stack_group *g;
	size_t ng, n = 0;
	int err = mt_stacks_group(p, false, &g, &ng, NULL);

	if (err)
		return err;
	for (size_t i = 0; i < ng; i++) {
		if (g[i].v[o->metric] != 0)
			g[n++] = g[i];
	}
	mt_stacks_sort(g, n, o->metric);
	if (o->top_n > 0 && (size_t)o->top_n < n)
		n = (size_t)o->top_n;
	fprintf(out, "Top %zu stacks by %s:\n", n, mt_value_name(o->metric));
	for (size_t i = 0; i < n; i++) {
		write_heading(out, p, i + 1, &g[i], o);
		mt_write_frames(out, p, &p->samples[g[i].sample]);
	}
	free(g);
	return 0;
}
