// SPDX-License-Identifier: MIT
/* http_metrics.c: the Prometheus text of /metrics (http_metrics.h). */
#include "http_metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include "trunc_reason.h"

/* A label value: backslash, double quote and newline escaped. */
static void put_label(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++) {
		if (s[i] == '\\' || s[i] == '"')
			fprintf(out, "\\%c", s[i]);
		else if (s[i] == '\n')
			fputs("\\n", out);
		else
			fputc(s[i], out);
	}
}

static void head(FILE *out, const char *name, const char *type,
		 const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Which value of a process a metric shows. */
enum pv { PV_INUSE_B, PV_INUSE_O, PV_PEAK_B, PV_ALLOC_B, PV_ALLOC_O,
	  PV_FREE_B, PV_FREE_O };

static uint64_t value_of(const struct mt_tl_series *s, enum pv v)
{
	switch (v) {
	case PV_INUSE_B: return s->last.inuse_bytes;
	case PV_INUSE_O: return s->last.inuse_objects;
	case PV_PEAK_B:  return s->peak;
	case PV_ALLOC_B: return s->last.alloc_bytes;
	case PV_ALLOC_O: return s->last.alloc_objects;
	case PV_FREE_B:  return s->last.free_bytes;
	case PV_FREE_O:  return s->last.free_objects;
	}
	return 0;
}

static void per_process(FILE *out, const struct mt_tl_data *d,
			const char *name, const char *type, const char *help,
			enum pv v)
{
	head(out, name, type, help);
	for (size_t i = 0; d && i < d->n; i++) {
		const struct mt_tl_series *s = &d->series[i];

		if (s->gone)
			continue;
		fprintf(out, "%s{pid=\"%" PRIu32 "\",comm=\"", name, s->pid);
		put_label(out, s->comm, sizeof(s->comm));
		fprintf(out, "\"} %" PRIu64 "\n", value_of(s, v));
	}
}

static void total(FILE *out, const char *name, const char *help,
		  uint64_t value)
{
	head(out, name, "counter", help);
	fprintf(out, "%s %" PRIu64 "\n", name, value);
}

static const struct { enum mt_counter c; const char *reason; } drops[] = {
	{ MT_CNT_DROP_ALLOCS_FULL, "allocs_map_full" },
	{ MT_CNT_DROP_STACKS_FULL, "stacks_map_full" },
	{ MT_CNT_DROP_STACK_ERRORS, "stack_errors" },
	{ MT_CNT_DROP_STATS_FULL, "stats_map_full" },
	{ MT_CNT_DROP_THREADS_FULL, "threads_full" },
	{ MT_CNT_DROP_READ_ERRORS, "read_errors" },
	{ MT_CNT_TIMELINE_FULL, "timeline_full" },
};

/* The per-process series, in the order written. */
static const struct {
	const char *name, *type, *help;
	enum pv v;
} series[] = {
	{ "memtrace_heap_inuse_bytes", "gauge",
	  "Heap bytes in use (allocated, not yet freed) by the process.", PV_INUSE_B },
	{ "memtrace_heap_inuse_objects", "gauge",
	  "Heap blocks in use by the process.", PV_INUSE_O },
	{ "memtrace_heap_peak_inuse_bytes", "gauge",
	  "The most heap bytes the process had in use at once since tracing began.",
	  PV_PEAK_B },
	{ "memtrace_heap_allocated_bytes_total", "counter",
	  "Heap bytes the process allocated since tracing began.", PV_ALLOC_B },
	{ "memtrace_heap_allocated_objects_total", "counter",
	  "Heap blocks the process allocated since tracing began.", PV_ALLOC_O },
	{ "memtrace_heap_freed_bytes_total", "counter",
	  "Heap bytes the process freed since tracing began (of blocks allocated since).",
	  PV_FREE_B },
	{ "memtrace_heap_freed_objects_total", "counter",
	  "Heap blocks the process freed since tracing began (of blocks allocated since).",
	  PV_FREE_O },
};

int mt_http_write_metrics(FILE *out, const struct mt_http_metrics *m)
{
	const struct mt_tl_data *d = m->data;
	const uint64_t *c = m->counters;

	for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++)
		per_process(out, d, series[i].name, series[i].type,
			    series[i].help, series[i].v);
	total(out, "memtrace_allocator_calls_total",
	      "Allocator calls seen, every traced process.", c[MT_CNT_EVENTS]);
	total(out, "memtrace_failed_allocations_total",
	      "Allocations that returned no memory.", c[MT_CNT_FAILED_ALLOCS]);
	total(out, "memtrace_untracked_frees_total",
	      "Frees of blocks allocated before tracing began.",
	      c[MT_CNT_UNTRACKED_FREES]);
	head(out, "memtrace_truncated_stacks_total", "counter",
	     "Stacks kept but cut short where the unwinder could not go on, by reason.");
	for (int r = 0; r < MT_TRUNC__COUNT; r++)
		fprintf(out, "memtrace_truncated_stacks_total{reason=\"%s\"} %" PRIu64 "\n",
			mt_trunc_reason_label(r), c[MT_CNT_TRUNC + r]);
	total(out, "memtrace_snapshot_skew_total",
	      "Events a snapshot could not account for (its journal was full).",
	      c[MT_CNT_SNAPSHOT_SKEW]);
	head(out, "memtrace_drops_total", "counter",
	     "Records that could not be kept, by reason.");
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		fprintf(out, "memtrace_drops_total{reason=\"%s\"} %" PRIu64 "\n",
			drops[i].reason, c[drops[i].c]);
	head(out, "memtrace_traced_seconds", "gauge",
	     "Seconds since tracing began.");
	fprintf(out, "memtrace_traced_seconds %.3f\n", m->elapsed_s);
	head(out, "memtrace_processes", "gauge", "Processes traced now.");
	{
		size_t live = 0;

		for (size_t i = 0; d && i < d->n; i++)
			live += !d->series[i].gone;
		fprintf(out, "memtrace_processes %zu\n", live);
	}
	if (m->system) {
		head(out, "memtrace_registry_images", "gauge",
		     "Processes whose image the registry keeps now.");
		fprintf(out, "memtrace_registry_images %zu\n", m->images);
		head(out, "memtrace_registry_files", "gauge",
		     "Files the registry keeps open now.");
		fprintf(out, "memtrace_registry_files %zu\n", m->files);
		total(out, "memtrace_scan_finds_total",
		      "What the scan of /proc found that no event had told of.",
		      m->scan_finds);
	}
	head(out, "memtrace_build_info", "gauge",
	     "Always 1: the memtrace that serves these metrics.");
	fprintf(out, "memtrace_build_info{version=\"%s\"} 1\n", MEMTRACE_VERSION);
	return ferror(out) ? -EIO : 0;
}
