/* SPDX-License-Identifier: MIT */
/*
 * http_metrics.h: /metrics, in the Prometheus text exposition format
 * (version 0.0.4).  Per traced process (labels pid and comm), from the
 * timeline's last sample (every --timeline-interval): heap bytes and
 * objects in use and its peak (gauges), allocated and freed (counters).
 * For the whole trace, from the kernel counters read now: allocator calls,
 * failed allocations, untracked frees, truncated stacks, and each kind of
 * drop (memtrace_drops_total{reason=...}); the seconds traced.
 * System-wide, the image registry's processes and files, and what the
 * scan of /proc found that no event had told of.
 */
#ifndef MEMTRACE_HTTP_METRICS_H
#define MEMTRACE_HTTP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "memleak.h"
#include "timeline_data.h"

struct mt_http_metrics {
	uint64_t counters[MT_CNT__COUNT];  /* summed over CPUs */
	const struct mt_tl_data *data;     /* NULL: no timeline, no process */
	double elapsed_s;                  /* seconds traced */
	/* System-wide: the image registry now, and the scan's finds. */
	bool system;
	size_t images, files;
	uint64_t scan_finds;
};

/* Write M to OUT.  0, or -EIO when OUT has an error. */
int mt_http_write_metrics(FILE *out, const struct mt_http_metrics *m);

/* The content type of that text. */
#define MT_METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
