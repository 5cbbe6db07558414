/* SPDX-License-Identifier: MIT */
/*
 * trace_reports.h: the reports of a trace: those written while it runs (every
 * -i SECONDS, and on SIGUSR1), each output numbered (heap.pb.gz becomes
 * heap.0001.pb.gz, the text on standard output comes under a
 * "--- HH:MM:SS (+T s)" line), the oldest removed beyond --keep; and the
 * final one, to the outputs' own names.
 */
#ifndef MEMTRACE_TRACE_REPORTS_H
#define MEMTRACE_TRACE_REPORTS_H

#include <stdbool.h>

#include "delta.h"
#include "at_moment.h"
#include "options.h"
#include "write_outputs.h"
#include "symbolize.h"
#include "tracer.h"

struct mt_reports {
	const struct mt_options *o;
	struct mt_tracer *tr;
	unsigned seq;            /* numbered reports written */
	unsigned failed;         /* of them, how many could not be written */
	struct mt_delta delta;   /* --delta: the previous report's totals */
	struct mt_symcache *symbols; /* kept from one report to the next */
	struct mt_keeper keeper;     /* --at: the moment's profile */
	struct mt_keeper ikeeper;    /* --record: each interval's highest */
};

/* The report options of O (EXITED_CHILD: every block left is a leak). */
struct mt_render_opts mt_reports_opts(const struct mt_options *o,
				      bool exited_child);

/*
 * Register, in TR's loop, the interval reports (-i, --count) and the
 * report on SIGUSR1.  Returns 0 or -errno.
 */
int mt_reports_start(struct mt_reports *r, const struct mt_options *o,
		     struct mt_tracer *tr);

/* A numbered report of now (SIGUSR1, or an interval's end). */
void mt_reports_now(struct mt_reports *r);

/*
 * Symbolise RAW (its procs stay the caller's: set to NULL here) and write
 * every output, to the outputs' own names.  RAW is freed.  0, or 1 after
 * a message.
 */
int mt_reports_final(struct mt_reports *r, struct mt_raw_profile *raw,
		     const struct mt_render_opts *ropts);

void mt_reports_free(struct mt_reports *r);

/*
 * When a filter (--comm, report -p) left nothing of P, say so on standard
 * error, once: "memtrace: the report shows nothing: no process ...".
 */
void mt_reports_say_empty(const struct mt_profile *p);

/*
 * PATH with ".NNNN" before its extension ("heap.pb.gz" -> "heap.0001.pb.gz",
 * "out.txt" -> "out.0001.txt", "out" -> "out.0001") into BUF: 4 digits, or
 * those of COUNT (--count, the last number) if more.  0, or -ENAMETOOLONG.
 */
int mt_reports_numbered(const char *path, unsigned seq, unsigned count,
			char *buf, size_t len);

#endif
