// SPDX-License-Identifier: MIT
/*
 * main.c: memtrace's entry point.  Parses the command line, then either
 * renders a saved profile (memtrace report) or finds the target, traces it
 * (tracer.h) with reports while it runs and at its end (trace_reports.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf_log.h"
#include "diff.h"
#include "errmsg.h"
#include "growth_command.h"
#include "filter.h"
#include "http_listen.h"
#include "http_server.h"
#include "keys.h"
#include "options.h"
#include "outfile.h"
#include "pprof_read.h"
#include "privs.h"
#include "profile_read.h"
#include "write_outputs.h"
#include "record.h"
#include "trace_reports.h"
#include "runas.h"
#include "session.h"
#include "startup_clock.h"
#include "target.h"
#include "timeline.h"
#include "top.h"
#include "tracer.h"

/* q or Enter on the terminal stops tracing (mt_keys_start succeeded). */
static bool keys_on;

/* memtrace top draws on the terminal and reads its keys itself. */
static bool top_draws(const struct mt_options *o)
{
	return o->top && !o->top_batch && isatty(STDOUT_FILENO);
}

/*
 * What the "tracing ..." line says about stopping: one way that works.
 * The key when memtrace reads the terminal; else Ctrl-C, unless standard
 * output is a pipe: Ctrl-C would stop its reader too, before the report
 * reaches it, so a SIGINT to memtrace alone is the way.
 */
static const char *stop_hint(const struct mt_options *o, char *buf,
			     size_t len)
{
	struct stat st;
	bool pipe = fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
	const char *d = o->duration > 0 ? "stops after the duration, or " : "";

	if (top_draws(o))
		snprintf(buf, len, "%sq quits the view", d);
	else if (keys_on)
		snprintf(buf, len, "%spress q or Enter to stop", d);
	else if (pipe)
		snprintf(buf, len, "%skill -INT %d to stop (Ctrl-C would stop the whole pipeline)",
			 d, (int)getpid());
	else
		snprintf(buf, len, "%sCtrl-C to stop", d);
	return buf;
}

static void say_tracing(struct mt_tracer *tr)
{
	const struct mt_target *t = tr->t;
	char hint[128];

	if (tr->o->verbose)
		mt_startup_say(stderr);
	if (tr->kind == MT_TRACER_SYSTEM)
		fprintf(stderr, "memtrace: tracing every process (%zu now) using %s; %s\n",
			tr->sys.nprocs, tr->sys.probed,
			stop_hint(tr->o, hint, sizeof(hint)));
	else
		fprintf(stderr, "memtrace: tracing pid %d (%s), %zu functions in %s%s; %s\n",
			(int)t->pid, t->comm, tr->probes.nfuncs,
			mt_target_alloc_name(t),
			tr->kind == MT_TRACER_FAMILY ? ", and the processes it starts" : "",
			stop_hint(tr->o, hint, sizeof(hint)));
	if (tr->o->verbose && mt_tracer_probes(tr))
		mt_probes_describe(mt_tracer_probes(tr), stderr);
}

/* This thread's CPU time in ms (-v's account of the final report). */
static double thread_cpu_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Trace T (NULL: every process) and report.  Returns the exit status. */
static int trace(const struct mt_options *o, struct mt_target *t, int sigfd)
{
	struct mt_tracer tr;
	struct mt_reports reports = { 0 };
	struct mt_raw_profile raw = { 0 };
	struct mt_render_opts ropts;
	struct mt_http *http = NULL;
	struct mt_top top = { 0 };
	size_t nblocks, nstacks;
	double t0, t1, cpu0;
	int ret = mt_tracer_start(&tr, o, t, sigfd);

	if (!ret && (ret = mt_reports_start(&reports, o, &tr)) != 0)
		ret = mt_fail("cannot set up the interval reports: %s",
			      strerror(-ret));
	if (!ret && o->http)
		ret = mt_http_start(&http, o, &tr, reports.symbols);
	if (ret) {
		mt_reports_free(&reports);
		mt_tracer_free(&tr);
		return ret;
	}
	say_tracing(&tr);
	if (o->top && mt_top_start(&top, o, &tr, reports.symbols)) {
		mt_top_end(&top);
		mt_http_stop(http);
		mt_reports_free(&reports);
		mt_tracer_free(&tr);
		return 1;
	}
	mt_tracer_run(&tr);
	mt_top_end(&top); /* the terminal back before any report */
	mt_http_stop(http); /* before the maps are read for the last time */
	mt_tracer_stop(&tr);
	if (tr.unfollowed)
		fprintf(stderr, "memtrace: %u processes CMD started were not traced: the table of followed processes was full\n",
			tr.unfollowed);
	if (tr.s.stop == MT_STOP_EXIT && t && !t->is_child)
		fprintf(stderr, "memtrace: pid %d exited\n", (int)t->pid);
	ropts = mt_reports_opts(o, t && t->is_child && tr.s.exited);
	t0 = mt_loop_now();
	cpu0 = thread_cpu_ms();
	ret = mt_tracer_collect(&tr, &raw);
	if (ret) {
		raw.procs = NULL;
		mt_raw_profile_free(&raw);
		ret = mt_fail("cannot read the BPF maps: %s", strerror(-ret));
	} else {
		t1 = mt_loop_now();
		nblocks = raw.nblocks;
		nstacks = raw.nstacks;
		mt_keeper_take(&reports.keeper, &raw);
		ret = mt_reports_final(&reports, &raw, &ropts);
		if (o->verbose)
			fprintf(stderr, "memtrace: final report: %zu blocks and %zu stacks read in %.1f ms, written in %.1f ms; %.1f ms of CPU in all\n",
				nblocks, nstacks, (t1 - t0) * 1e3,
				(mt_loop_now() - t1) * 1e3,
				thread_cpu_ms() - cpu0);
	}
	if (!ret && (reports.failed || tr.tl.error))
		ret = 1; /* said when it failed */
	mt_reports_free(&reports);
	if (!ret && t && t->is_child) {
		mt_session_reap(&tr.s);
		if (!tr.s.exited)
			fprintf(stderr, "memtrace: pid %d (%s) left running\n",
				(int)t->pid, t->comm);
		ret = tr.s.exited ? tr.s.exit_code : 0;
	}
	mt_tracer_free(&tr);
	return ret;
}

/* report --base: PROF less the profile o->base. */
static int subtract_base(const struct mt_options *o,
			 const struct mt_pprof_limits *lim, struct mt_profile *prof)
{
	struct mt_profile base = { 0 };
	char err[512];
	int ret = mt_profile_read(o->base, lim, &base, err, sizeof(err));

	if (ret) {
		mt_profile_free(&base);
		return mt_fail("%s: %s", o->base, err);
	}
	ret = mt_profile_subtract(prof, &base, o->base);
	mt_profile_free(&base);
	return ret ? mt_fail("--base: %s", strerror(-ret)) : 0;
}

/* memtrace report FILE: render a saved profile, no tracing. */
static int report_file(const struct mt_options *o)
{
	struct mt_profile prof = { 0 };
	struct mt_render_opts ropts = mt_reports_opts(o, false);
	struct mt_pprof_limits lim = { MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO,
				       MT_PPROF_MAX_MEMORY, o->max_memory };
	const char *input = o->input;
	char err[512], picked[4096];
	struct stat st;
	int ret;

	if (o->growth)
		return mt_report_growth(o, &lim, &ropts);
	/* A recording (--record DIR): the profile of the moment asked for. */
	if (stat(input, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (mt_record_pick(o, input, picked, sizeof(picked)))
			return 1;
		input = picked;
	} else if (o->at_peak || o->at_s >= 0) {
		return mt_fail("--at with report is for a recording (a directory made by --record), not for %s",
			       input);
	}
	ret = mt_profile_read(input, &lim, &prof, err, sizeof(err));
	if (ret) {
		mt_profile_free(&prof);
		return mt_fail("%s: %s", input, err);
	}
	/* A recording's interval profile is its interval's highest: the
	 * moment is what --at asked for (peak, or the interval of a time). */
	if (input == picked && (o->at_peak || o->at_s >= 0)) {
		if (prof.sum.at == MT_AT_END) /* the final one: its end */
			prof.sum.at_s = prof.sum.duration_s;
		prof.sum.at = o->at_peak ? MT_AT_PEAK : MT_AT_TIME;
	}
	if (o->base) {
		ropts.diff = true; /* --svg: the flame graph of the difference */
		ret = subtract_base(o, &lim, &prof);
		if (ret) {
			mt_profile_free(&prof);
			return 1;
		}
	}
	ret = mt_profile_filter(&prof, (uint32_t)o->only_pid, o->comm);
	if (!ret) /* pprof's views: --focus, --hide, ... */
		ret = mt_profile_view(&prof, &o->view);
	if (ret) {
		mt_profile_free(&prof);
		return mt_fail("%s", strerror(-ret));
	}
	mt_reports_say_empty(&prof);
	ret = mt_render(o->outputs, o->noutputs, &prof, NULL, &ropts);
	mt_profile_free(&prof);
	return ret ? 1 : 0;
}

/*
 * Fail now, not after a long trace, when a report file cannot be written;
 * nothing is created until the report is (outfile.h).
 */
static int check_outputs(const struct mt_options *o)
{
	for (size_t i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;
		int err = path ? mt_outfile_check(path) : 0;

		if (err)
			return mt_fail("cannot write '%s': %s", path,
				       mt_outfile_strerror(err));
	}
	return mt_timeline_check(o);
}

int main(int argc, char **argv)
{
	struct mt_options o;
	struct mt_target t = { .child = { .gate_fd = -1, .err_fd = -1 } };
	static struct mt_runas runas; /* lives as long as the process */
	struct mt_keys keys = { 0 };
	int sigfd, ret;

	mt_startup_begin();
	ret = mt_options_parse(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	signal(SIGPIPE, SIG_IGN);
	if (mt_runas_init(&runas))
		return 2;
	/* Under sudo, CMD and the files written are the invoking user's. */
	if (runas.sudo)
		mt_outfile_owner(runas.uid, runas.gid, runas.groups, runas.ngroups);
	t.child.runas = o.as_root ? NULL : &runas;
	/* The view's keys are memtrace's: CMD does not read the terminal. */
	t.child.null_stdin = top_draws(&o) && isatty(STDIN_FILENO);
	if (o.record && mt_record_prepare(&o))
		return 1;
	if (check_outputs(&o))
		return 1;
	if (o.report_mode)
		return report_file(&o);
	mt_bpf_log_init(stderr, o.verbose);
	if (!mt_privileged())
		return mt_fail("not enough privilege: tracing needs %s",
			       MT_CAPS_NEEDED);
	/* --http's socket before CMD starts: a port in use stops us here. */
	if (mt_http_listen(&o, runas.sudo ? runas.uid : (uid_t)-1,
			   runas.sudo ? runas.gid : (gid_t)-1))
		return 1;
	sigfd = mt_session_signals();
	if (sigfd < 0)
		return mt_fail("cannot set up signal handling: %s",
			       strerror(-sigfd));
	/* A terminal is CMD's to read; with -p or system-wide, q stops. */
	keys_on = (o.pid || o.system_wide) && !top_draws(&o) &&
		  mt_keys_start(&keys);
	if (o.system_wide)
		ret = trace(&o, NULL, sigfd);
	else if ((ret = o.pid ? mt_target_find(&o, &t)
			      : mt_target_spawn(&o, &t)) == 0)
		ret = trace(&o, &t, sigfd);
	mt_keys_stop(&keys);
	mt_objects_free(&t.objs);
	if (ret && t.is_child && t.child.gate_fd >= 0)
		mt_child_abort(&t.child);
	close(sigfd);
	return ret;
}
