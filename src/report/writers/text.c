/* SPDX-License-Identifier: MIT */
/* text.c: the text report (see text.h): header, then each section. */
#include "text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "text_priv.h"
#include "timeline_text.h"
#include "trunc_reason.h"

#ifndef MEMTRACE_VERSION
#error "MEMTRACE_VERSION must be defined by the build (see Makefile)"
#endif

static void write_amount(FILE *out, const char *what, int64_t bytes,
			 int64_t objects, enum mt_unit unit)
{
	char buf[MT_TEXT_BUF];

	fprintf(out, "%s: %" PRId64 " bytes in %" PRId64 " objects (%s)\n", what,
		bytes, objects, mt_format_bytes(buf, sizeof(buf), bytes, unit));
}

void mt_write_header(FILE *out, const struct mt_summary *s,
		     enum mt_unit unit, const char *title)
{
	const uint64_t *c = s->counters;
	uint64_t drops = 0;

	for (int i = MT_CNT_DROP_ALLOCS_FULL; i <= MT_CNT_DROP_READ_ERRORS; i++)
		drops += c[i];
	fprintf(out, "memtrace %s %s\n", MEMTRACE_VERSION, title);
	fprintf(out, "target: %s\n", s->target);
	if (s->shown[0])
		fprintf(out, "shown: %s\n", s->shown);
	/* A saved profile may lack these: say so rather than print 0. */
	if (s->missing & MT_FACT_ALLOCATOR)
		fputs("allocator: not recorded\n", out);
	else
		fprintf(out, "allocator: %s\n", s->allocator);
	if (s->probes)
		fprintf(out, "probes: %" PRIu32 " functions, %" PRIu32
			" single-stepped (a second trap each call)\n",
			s->probes, s->probes_stepped);
	if (s->missing & MT_FACT_DURATION)
		fputs("duration: not recorded\n", out);
	else
		fprintf(out, "duration: %.2f s\n", s->duration_s);
	if (s->at == MT_AT_PEAK)
		fprintf(out, "moment: the highest in use the timeline saw, at %.2f s (--at peak)\n",
			s->at_s);
	else if (s->at == MT_AT_TIME)
		fprintf(out, "moment: %.2f s (--at)\n", s->at_s);
	if (s->view[0])
		fprintf(out, "view: %s\n", s->view);
	if (s->delta)
		fprintf(out, "alloc figures: since %.2f s (--delta); totals below: whole trace\n",
			s->delta_since_s);
	if (s->sample_bytes) {
		fprintf(out, "sampling: one allocation per %" PRIu64
			" bytes on average (Poisson); ", s->sample_bytes);
		if (c[MT_CNT_SAMPLES])
			fprintf(out, "%" PRIu64 " allocations sampled; ",
				c[MT_CNT_SAMPLES]);
		fputs("figures are estimates\n", out);
	}
	write_amount(out, "in use",
		     (int64_t)(c[MT_CNT_ALLOC_BYTES] - c[MT_CNT_FREE_BYTES]),
		     (int64_t)(c[MT_CNT_ALLOC_OBJECTS] - c[MT_CNT_FREE_OBJECTS]),
		     unit);
	write_amount(out, "allocated", (int64_t)c[MT_CNT_ALLOC_BYTES],
		     (int64_t)c[MT_CNT_ALLOC_OBJECTS], unit);
	write_amount(out, "freed", (int64_t)c[MT_CNT_FREE_BYTES],
		     (int64_t)c[MT_CNT_FREE_OBJECTS], unit);
	if (s->mmap_traced) {
		write_amount(out, "mmap in use",
			     (int64_t)(c[MT_CNT_MMAP_BYTES] - c[MT_CNT_MUNMAP_BYTES]),
			     (int64_t)(c[MT_CNT_MMAP_OBJECTS] - c[MT_CNT_MUNMAP_OBJECTS]),
			     unit);
		write_amount(out, "mmapped", (int64_t)c[MT_CNT_MMAP_BYTES],
			     (int64_t)c[MT_CNT_MMAP_OBJECTS], unit);
	}
	mt_tl_write_header(out, s, unit);
	if (s->missing & MT_FACT_COUNTERS) {
		fputs("events: not recorded\n", out);
		if (!s->sample_bytes)
			fputs("untracked frees: not recorded\n", out);
		fputs("drops: not recorded\n", out);
		fputs("truncated stacks: not recorded\n", out);
		return;
	}
	fprintf(out, "events: %" PRIu64 " allocator calls, %" PRIu64 " failed\n",
		c[MT_CNT_EVENTS], c[MT_CNT_FAILED_ALLOCS]);
	/* Sampling, a free of an unsampled block is the rule, not news. */
	if (!s->sample_bytes)
		fprintf(out, "untracked frees: %" PRIu64 "\n",
			c[MT_CNT_UNTRACKED_FREES]);
	fprintf(out,
		"drops: %" PRIu64 " (allocs map full %" PRIu64
		", stack map full %" PRIu64 ", stack errors %" PRIu64
		", stats map full %" PRIu64 ", thread state unavailable %" PRIu64
		", read errors %" PRIu64 ")\n",
		drops, c[MT_CNT_DROP_ALLOCS_FULL], c[MT_CNT_DROP_STACKS_FULL],
		c[MT_CNT_DROP_STACK_ERRORS], c[MT_CNT_DROP_STATS_FULL],
		c[MT_CNT_DROP_THREADS_FULL], c[MT_CNT_DROP_READ_ERRORS]);
	/* Kept, but cut short where the walk met a frame it could not
	 * follow: how many, then how many for each reason met. */
	fprintf(out, "truncated stacks: %" PRIu64, c[MT_CNT_STACKS_TRUNCATED]);
	for (int r = 0, first = 1; r < MT_TRUNC__COUNT; r++) {
		if (!c[MT_CNT_TRUNC + r])
			continue;
		fprintf(out, "%s%s %" PRIu64, first ? " (" : ", ",
			mt_trunc_reason_name(r), c[MT_CNT_TRUNC + r]);
		first = 0;
	}
	for (int r = 0; r < MT_TRUNC__COUNT; r++)
		if (c[MT_CNT_TRUNC + r]) {
			fputc(')', out);
			break;
		}
	fputc('\n', out);
	/* A report taken while tracing, whose journal overflowed. */
	if (c[MT_CNT_SNAPSHOT_SKEW])
		fprintf(out, "snapshot skew: %" PRIu64 " events not placed at the report's instant (journal full)\n",
			c[MT_CNT_SNAPSHOT_SKEW]);
}

int mt_write_text(FILE *out, const struct mt_profile *p,
		  const struct mt_text_opts *o)
{
	static const struct mt_text_opts defaults = {
		.metric = MT_INUSE_SPACE,
		.top_n = 20,
		.unit = MT_UNIT_AUTO,
	};
	int err;

	if (!o)
		o = &defaults;
	if (!out || !p || (unsigned)o->metric >= MT_NVALUES)
		return -EINVAL;
	mt_write_header(out, &p->sum, o->unit, "heap profile");
	fputc('\n', out);
	err = mt_text_processes(out, p, o);
	if (!err)
		mt_tl_write_procs(out, &p->sum, o->unit);
	if (!err)
		err = mt_text_functions(out, p, o);
	if (!err) {
		fputc('\n', out);
		err = mt_text_stacks(out, p, o);
	}
	if (!err) {
		fputc('\n', out);
		err = mt_text_sizes(out, p, o);
	}
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
