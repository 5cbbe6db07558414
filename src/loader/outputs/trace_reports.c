// SPDX-License-Identifier: MIT
/* trace_reports.c: interval, on-demand and final reports of a trace. */
#include "trace_reports.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "errmsg.h"
#include "outfile.h"
#include "record.h"
#include "blocks.h"
#include "filter.h"
#include "view.h"

struct mt_render_opts mt_reports_opts(const struct mt_options *o,
				      bool exited_child)
{
	struct mt_render_opts r = {
		.text = { .metric = o->metric, .top_n = o->top_n, .cum = o->cum,
			  .unit = o->unit },
		.leaks = { .min_age_ns = o->min_age_ns, .top_n = o->top_n,
			   .unit = o->unit },
		.list = o->list,
	};

	/* A command that has exited leaked whatever it did not free. */
	if (exited_child)
		r.leaks.min_age_ns = 0;
	return r;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int mt_reports_numbered(const char *path, unsigned seq, unsigned count,
			char *buf, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *ext = strrchr(base, '.');
	int n, width = 4;

	/* As many digits as the last number has: the names list in order. */
	for (unsigned c = count; c > 9999; c /= 10)
		width++;

	/* "x.pb.gz", "x.txt.gz": the number goes before both suffixes. */
	if (ext && ext != base && ends_with(base, ".gz")) {
		const char *p = ext;

		while (p > base + 1 && p[-1] != '.')
			p--;
		if (p > base + 1)
			ext = p - 1;
	}
	if (!ext || ext == base) /* no extension, or a dot file */
		ext = path + strlen(path);
	n = snprintf(buf, len, "%.*s.%0*u%s", (int)(ext - path), path, width,
		     seq, ext);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void mt_reports_say_empty(const struct mt_profile *p)
{
	static bool said;

	/* Once: interval reports (-i) would say it again and again. */
	if (said || !p->sum.shown[0] || mt_profile_nprocs(p))
		return;
	said = true;
	fprintf(stderr, "memtrace: the report shows %s\n", p->sum.shown);
}

/* Symbolise RAW and write it to OUTS; RAW is freed, its procs left. */
static int render(const struct mt_options *o, struct mt_raw_profile *raw,
		  const struct mt_render_opts *ropts, struct mt_reports *r,
		  const struct mt_output *outs, size_t nouts)
{
	struct mt_delta *delta = r && o->delta ? &r->delta : NULL;
	struct mt_profile prof = { 0 };
	int ret;

	mt_raw_profile_filter(raw, o->comm);
	ret = mt_symbolize_cached(raw, &prof, r ? r->symbols : NULL);
	if (!ret && delta)
		ret = mt_delta_apply(delta, raw, &prof);
	if (!ret)
		ret = mt_profile_add_blocks(&prof, raw);
	if (!ret) /* the header's totals, for the processes kept */
		ret = mt_profile_filter(&prof, 0, o->comm);
	if (!ret) /* pprof's views: --focus, --hide, ... */
		ret = mt_profile_view(&prof, &o->view);
	if (ret)
		mt_fail("cannot symbolise the profile: %s", strerror(-ret));
	else
		mt_reports_say_empty(&prof);
	if (!ret)
		ret = mt_render(outs, nouts, &prof, raw, ropts) ? 1 : 0;
	raw->procs = NULL;
	raw->nprocs = 0;
	mt_raw_profile_free(raw);
	mt_profile_free(&prof);
	return ret ? 1 : 0;
}

/* Does any output go to standard output? */
static bool to_stdout(const struct mt_options *o)
{
	for (size_t i = 0; i < o->noutputs; i++)
		if (!o->outputs[i].path)
			return true;
	return false;
}

/* "--- 14:03:07 (+12.5 s)" before a report on standard output. */
static void separator(const struct mt_raw_profile *raw)
{
	char when[16] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("--- %s (+%.1f s)\n", when, raw->sum.duration_s);
	fflush(stdout);
}

/* An output that is not a file to number: a device, FIFO or socket
 * (-o /dev/null, a pipe) gets every report itself, no PATH.NNNN beside. */
static bool numbered(const char *path)
{
	struct stat st;

	return path && (stat(path, &st) || S_ISREG(st.st_mode));
}

/* Remove report number SEQ's files (beyond --keep). */
static void remove_numbered(const struct mt_options *o, unsigned seq)
{
	char path[4096];

	for (size_t i = 0; i < o->noutputs; i++)
		if (numbered(o->outputs[i].path) &&
		    mt_reports_numbered(o->outputs[i].path, seq, o->count,
					path, sizeof(path)) == 0)
			mt_outfile_unlink(path);
}

/* Heap bytes in use in RAW's header. */
/* This thread's CPU time in seconds (a read's own cost, whatever else
 * the machine runs meanwhile). */
static double thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This thread's system (kernel) CPU time in seconds: the BPF map reads'
 * share of a read. */
static double thread_sys(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static uint64_t inuse_of(const struct mt_raw_profile *raw)
{
	const uint64_t *c = raw->sum.counters;

	return c[MT_CNT_ALLOC_BYTES] - c[MT_CNT_FREE_BYTES];
}

void mt_reports_now(struct mt_reports *r)
{
	const struct mt_options *o = r->o;
	struct mt_output outs[MT_MAX_OUTPUTS];
	char paths[MT_MAX_OUTPUTS][4096];
	struct mt_render_opts ropts = mt_reports_opts(o, false);
	struct mt_raw_profile raw = { 0 };
	unsigned seq = r->seq + 1;
	struct mt_process *procs;
	size_t nblocks, nstacks, nprocs;
	uint64_t inuse;
	bool kept;
	double t0, t1, cpu0, sys0, at;
	uint64_t stacks0 = mt_collect_stacks_read();
	int ret;

	for (size_t i = 0; i < o->noutputs; i++) {
		outs[i] = o->outputs[i];
		if (numbered(outs[i].path) &&
		    mt_reports_numbered(outs[i].path, seq, o->count,
					paths[i], sizeof(paths[i])) == 0)
			outs[i].path = paths[i];
	}
	t0 = mt_loop_now();
	cpu0 = thread_cpu();
	sys0 = thread_sys();
	mt_tracer_procs(r->tr, &procs, &nprocs);
	/* --record: the interval's highest sample, if one was kept. */
	kept = o->record &&
	       mt_keeper_take_kept(&r->ikeeper, &raw, procs, nprocs);
	ret = kept ? 0 : mt_tracer_collect(r->tr, &raw);
	t1 = mt_loop_now();
	cpu0 = thread_cpu() - cpu0;
	sys0 = thread_sys() - sys0;
	if (ret) {
		raw.procs = NULL;
		mt_raw_profile_free(&raw);
		mt_fail("report %u: cannot read the BPF maps: %s", seq,
			strerror(-ret));
		r->failed++;
		return;
	}
	r->seq = seq;
	if (to_stdout(o))
		separator(&raw);
	at = kept ? raw.sum.at_s : raw.sum.duration_s;
	inuse = inuse_of(&raw);
	nblocks = raw.nblocks;
	nstacks = raw.nstacks;
	/* --record: a line in the index only for a profile written. */
	if (render(o, &raw, &ropts, r, outs, o->noutputs) ||
	    mt_record_index(o, seq, t1 - r->tr->s.start, at, inuse))
		r->failed++;
	if (o->verbose)
		fprintf(stderr, "memtrace: report %u: %zu blocks and %zu stacks read in %.1f ms, written in %.1f ms; the read took %.1f ms of CPU (%.1f in the kernel), %" PRIu64 " new stacks from the kernel\n",
			seq, nblocks, nstacks, (t1 - t0) * 1e3,
			(mt_loop_now() - t1) * 1e3, cpu0 * 1e3, sys0 * 1e3,
			mt_collect_stacks_read() - stacks0);
	fflush(stdout);
	if (o->keep && seq > o->keep)
		remove_numbered(o, seq - o->keep);
}

int mt_reports_final(struct mt_reports *r, struct mt_raw_profile *raw,
		     const struct mt_render_opts *ropts)
{
	double at = raw->sum.at ? raw->sum.at_s : raw->sum.duration_s;
	uint64_t inuse = inuse_of(raw);

	if (r->seq && to_stdout(r->o))
		separator(raw);
	if (render(r->o, raw, ropts, r, r->o->outputs, r->o->noutputs))
		return 1;
	return mt_record_index(r->o, 0, r->tr->s.elapsed, at, inuse) ? 1 : 0;
}

static void on_interval(void *arg, double now)
{
	struct mt_reports *r = arg;

	(void)now;
	/* --count N: the Nth report is the final one; stop, as -d would. */
	if (r->o->count && r->seq + 1 >= r->o->count) {
		r->tr->s.stop = MT_STOP_DURATION;
		mt_loop_stop(&r->tr->s.loop);
		return;
	}
	mt_reports_now(r);
}

static void on_report(void *arg)
{
	mt_reports_now(arg);
}

/* The timeline sampled: perhaps the moment --at wants. */
static void on_timeline(void *arg, double t, uint64_t inuse)
{
	struct mt_reports *r = arg;

	mt_keeper_sample(&r->keeper, r->tr, t, inuse);
	if (r->o->record)
		mt_keeper_sample(&r->ikeeper, r->tr, t, inuse);
}

int mt_reports_start(struct mt_reports *r, const struct mt_options *o,
		     struct mt_tracer *tr)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->tr = tr;
	/* Only worth keeping when there will be several reports; NULL
	 * (out of memory) symbolises without. */
	r->symbols = mt_symcache_new();
	mt_keeper_init(&r->keeper, o);
	mt_keeper_init_peak(&r->ikeeper);
	if (r->keeper.on || o->record) {
		tr->tl.on_sample = on_timeline;
		tr->tl.on_sample_ctx = r;
	}
	tr->s.on_report = on_report;
	tr->s.report_ctx = r;
	if (o->interval > 0)
		return mt_loop_add_timer(&tr->s.loop, o->interval, 0,
					 on_interval, r);
	return 0;
}

void mt_reports_free(struct mt_reports *r)
{
	mt_delta_free(&r->delta);
	mt_symcache_free(r->symbols);
	r->symbols = NULL;
	mt_keeper_free(&r->keeper);
	mt_keeper_free(&r->ikeeper);
}
