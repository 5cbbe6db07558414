// SPDX-License-Identifier: MIT
/*
 * main.c: memtrace's entry point.  Finds the target and its allocator,
 * loads and attaches the BPF program, waits, then hands the collected maps
 * to the reporter.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "allocator.h"
#include "bpf_log.h"
#include "child.h"
#include "collect.h"
#include "follow.h"
#include "keys.h"
#include "memleak.skel.h"
#include "modules.h"
#include "options.h"
#include "privs.h"
#include "probes.h"
#include "proc_state.h"
#include "report_growth.h"
#include "runas.h"
#include "sampling_tables.h"
#include "session.h"
#include "blocks.h"
#include "filter.h"
#include "outfile.h"
#include "pprof_read.h"
#include "diff.h"
#include "profile_read.h"
#include "render.h"
#include "symbolize.h"
#include "system.h"
#include "unwinder.h"

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("memtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	f = fopen(name, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The thread-group id of PID (memtrace -p accepts a thread id too). */
static pid_t tgid_of(pid_t pid)
{
	char name[64], line[256];
	pid_t tgid = pid;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

struct target {
	pid_t pid;
	struct mt_child child;
	bool is_child;
	struct mt_objects objs;   /* executable and libraries */
	struct mt_allocator alloc;
	char comm[64];
};

/* -- CMD --follow traces the processes CMD starts too. */
static bool follows(const struct mt_options *o)
{
	return o->cmd && o->follow;
}

/* Open and load the BPF object for links of MODE.  -errno. */
static int load_bpf(const struct mt_options *o, enum mt_link_mode mode,
		    struct memleak_bpf **out)
{
	struct memleak_bpf *skel = memleak_bpf__open();
	long page = sysconf(_SC_PAGESIZE);
	int err;

	*out = NULL;
	if (!skel)
		return -errno;
	skel->rodata->page_size = page > 0 ? (__u64)page : 4096;
	skel->rodata->probe_only = o->probe_only;
	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->follow_only = follows(o);
	bpf_map__set_max_entries(skel->maps.allocs, o->max_allocs);
	bpf_map__set_max_entries(skel->maps.stats, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stacks, o->max_stacks);
	skel->rodata->sample_bytes = o->sample_bytes;
	skel->rodata->unwind_mode = o->unwind;
	mt_unwinder_size(skel, o->unwind != MT_UNWIND_FP, o->max_unwind_rows);
	mt_sampling_tables((__u32 *)skel->rodata->log2_tab,
			   (__u32 *)skel->rodata->g_tab);
	if (mode != MT_LINK_PERF) {
		bpf_program__set_expected_attach_type(skel->progs.uprobe_entry,
						      MT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.uprobe_return,
						      MT_BPF_TRACE_UPROBE_MULTI);
	}
	/* The session program calls a kfunc older kernels lack. */
	if (mode == MT_LINK_SESSION)
		bpf_program__set_expected_attach_type(skel->progs.uprobe_session,
						      MT_BPF_TRACE_UPROBE_SESSION);
	else
		bpf_program__set_autoload(skel->progs.uprobe_session, false);
	err = memleak_bpf__load(skel);
	if (err) {
		memleak_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

static const char *alloc_name(const struct target *t)
{
	const struct mt_object *o = mt_allocator_object(&t->alloc, &t->objs);

	return o ? o->shown : "the allocator";
}

/* Attaches the probes to a loaded program; undoes a partial attach itself. */
typedef int (*attach_fn)(struct memleak_bpf *skel, enum mt_link_mode mode,
			 void *ctx);

/*
 * Load and attach: when sampling, with uprobe sessions where the kernel
 * has them (unsampled calls then skip their return probes); else with
 * uprobe_multi links (one link per object and program: quick to attach
 * and to remove); else with one perf-event uprobe per function.  Returns
 * 0, or -errno after a message for a failed load; an ATTACH error is
 * returned for its caller.
 */
/*
 * The best link mode to try first.  MEMTRACE_LINKS=perf|multi caps it, so
 * that the tests and benchmarks can run the fallbacks on a new kernel.
 */
static int first_link_mode(const struct mt_options *o)
{
	const char *cap = getenv("MEMTRACE_LINKS");
	int mode = o->sample_bytes ? MT_LINK_SESSION : MT_LINK_MULTI;

	if (cap && strcmp(cap, "perf") == 0)
		return MT_LINK_PERF;
	if (cap && strcmp(cap, "multi") == 0)
		return MT_LINK_MULTI;
	return mode;
}

static int load_and_attach(const struct mt_options *o, struct memleak_bpf **skel,
			   attach_fn attach, void *ctx, int *attach_err)
{
	int ret = -EOPNOTSUPP;
	int mode = first_link_mode(o);

	*attach_err = 0;
	for (; mode >= MT_LINK_PERF && ret == -EOPNOTSUPP; mode--) {
		/* libbpf's warnings about an attempt that fails are dropped:
		 * memtrace falls back, or says what failed itself. */
		mt_bpf_log_hold();
		ret = load_bpf(o, (enum mt_link_mode)mode, skel);
		if (ret)
			mt_bpf_log_release(false);
		if (ret && mode != MT_LINK_PERF) {
			ret = -EOPNOTSUPP;
			continue;
		}
		if (ret == -EPERM || ret == -EACCES)
			return fail("not allowed to load BPF programs: need %s",
				    MT_CAPS_NEEDED);
		if (ret == -E2BIG)
			return fail("cannot load the BPF program: a map is too large for this kernel (--max-allocs %u, --max-stacks %u): try smaller values",
				    o->max_allocs, o->max_stacks);
		if (ret)
			return fail("cannot load the BPF program: %s (needs a kernel with BPF, BTF and uprobes; -v shows details)",
				    strerror(-ret));
		ret = attach(*skel, (enum mt_link_mode)mode, ctx);
		mt_bpf_log_release(ret == 0);
		if (ret) {
			memleak_bpf__destroy(*skel);
			*skel = NULL;
		}
	}
	*attach_err = ret;
	if (ret == -EPERM || ret == -EACCES)
		return fail("not allowed to attach uprobes: need %s", MT_CAPS_NEEDED);
	return 0;
}

struct target_attach {
	const struct mt_options *o;
	const struct target *t;
	struct mt_probes *probes;
};

static int attach_target(struct memleak_bpf *skel, enum mt_link_mode mode,
			 void *arg)
{
	struct target_attach *c = arg;
	int ret = mt_probes_attach(c->probes, skel, c->t->pid, &c->t->alloc,
				   c->o->symbol_prefix, &c->t->objs, mode,
				   c->o->mmap);

	if (ret)
		mt_probes_detach(c->probes);
	return ret;
}

static int exited_while_attaching(const struct target *t)
{
	return fail("pid %d (%s) exited while memtrace was attaching: nothing traced",
		    (int)t->pid, t->comm);
}

/* Load, and attach to the target's allocator and new/delete. */
static int start_target(const struct mt_options *o, const struct target *t,
			struct memleak_bpf **skel, struct mt_probes *probes)
{
	struct target_attach c = { o, t, probes };
	int err, ret = load_and_attach(o, skel, attach_target, &c, &err);

	if (ret || err == -EPERM || err == -EACCES)
		return 1;
	if (err && !t->is_child && mt_proc_state(t->pid) != MT_PROC_RUNNING)
		return exited_while_attaching(t);
	if (err == -ENOENT)
		return fail("%s defines no %smalloc: nothing to probe",
			    alloc_name(t), o->symbol_prefix);
	if (err)
		return fail("cannot attach uprobes to %s: %s", alloc_name(t),
			    strerror(-err));
	if (o->mmap && !probes->mmap)
		fprintf(stderr, "memtrace: no libc with mmap found: --mmap traces nothing\n");
	return 0;
}

/* Choose the allocator among the target's objects; a message if none. */
static int choose_allocator(const struct mt_options *o, struct target *t)
{
	if (mt_allocator_choose(&t->objs, o->allocator, o->symbol_prefix,
				&t->alloc) == 0)
		return 0;
	if (t->pid > 0 && mt_proc_state(t->pid) != MT_PROC_RUNNING)
		return exited_while_attaching(t);
	if (o->allocator)
		return fail("no allocator '%s' with %smalloc in %s", o->allocator,
			    o->symbol_prefix, t->comm);
	return fail("%s: nothing to probe: no %smalloc in its executable, libc, jemalloc or tcmalloc",
		    t->comm, o->symbol_prefix);
}


static int find_pid_target(const struct mt_options *o, struct target *t)
{
	enum mt_proc_state state;
	int ret;

	t->pid = tgid_of(o->pid);
	if (t->pid <= 0 || (kill(t->pid, 0) && errno == ESRCH))
		return fail("no such process: %d", (int)o->pid);
	if (t->pid == getpid())
		return fail("memtrace cannot trace itself");
	read_comm(t->pid, t->comm, sizeof(t->comm));
	state = mt_proc_state(t->pid);
	if (state == MT_PROC_KTHREAD)
		return fail("pid %d (%s) is a kernel thread: it has no user-space allocator to trace",
			    (int)t->pid, t->comm);
	if (state == MT_PROC_ZOMBIE)
		return fail("pid %d (%s) has exited (a zombie its parent has not reaped): nothing to trace",
			    (int)t->pid, t->comm);
	ret = mt_objects_of_pid(t->pid, &t->objs);
	if (ret == -ESRCH && state == MT_PROC_RUNNING)
		return exited_while_attaching(t);
	if (ret == -ESRCH)
		return fail("no such process: %d", (int)o->pid);
	if (ret)
		return fail("cannot read the mappings of process %d: %s",
			    (int)t->pid, strerror(-ret));
	return choose_allocator(o, t);
}

static int start_cmd_target(const struct mt_options *o, struct target *t)
{
	char exe[PATH_MAX];
	const char *base;
	int ret = mt_child_resolve(o->cmd[0], exe, sizeof(exe));

	if (ret == -EACCES || ret == -EISDIR)
		return fail("cannot run '%s': %s", o->cmd[0],
			    ret == -EISDIR ? "it is a directory" : "it is not an executable file");
	if (ret)
		return fail("cannot run '%s': %s", o->cmd[0], strerror(-ret));
	/* The name the kernel will give it: the basename, cut to 15 bytes. */
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	memcpy(t->comm, base, strnlen(base, 15));
	t->comm[strnlen(base, 15)] = '\0';
	ret = mt_objects_of_exe(exe, &t->objs);
	if (ret)
		return fail("cannot read '%s': %s", exe, strerror(-ret));
	if (choose_allocator(o, t))
		return 1;
	t->child.follow = follows(o);
	ret = mt_child_spawn(exe, o->cmd, &t->child);
	if (ret)
		return fail("cannot start '%s': %s", exe, strerror(-ret));
	t->is_child = true;
	t->pid = t->child.pid;
	return 0;
}

static struct mt_render_opts render_opts(const struct mt_options *o,
					 bool exited_child)
{
	struct mt_render_opts r = {
		.text = { .metric = o->metric, .top_n = o->top_n, .cum = o->cum,
			  .unit = o->unit },
		.leaks = { .min_age_ns = o->min_age_ns, .top_n = o->top_n,
			   .unit = o->unit },
	};

	/* A command that has exited leaked whatever it did not free. */
	if (exited_child)
		r.leaks.min_age_ns = 0;
	return r;
}

/* Symbolise RAW (whose procs stay the caller's) and write every output. */
static int render_raw(const struct mt_options *o, struct mt_raw_profile *raw,
		      const struct mt_render_opts *ropts)
{
	struct mt_profile prof = { 0 };
	int ret;

	mt_raw_profile_filter(raw, o->comm);
	ret = mt_symbolize(raw, &prof);
	if (!ret)
		ret = mt_profile_add_blocks(&prof, raw);
	if (!ret) /* the header's totals, for the processes kept */
		ret = mt_profile_filter(&prof, 0, o->comm);
	if (ret)
		fail("cannot symbolise the profile: %s", strerror(-ret));
	else
		ret = mt_render(o->outputs, o->noutputs, &prof, raw, ropts) ? 1 : 0;
	raw->procs = NULL;
	raw->nprocs = 0;
	mt_raw_profile_free(raw);
	mt_profile_free(&prof);
	return ret ? 1 : 0;
}

/* What the "tracing ..." line says about stopping. */
static const char *stop_hint(const struct mt_options *o)
{
	return o->duration > 0 ? "stops after the duration or Ctrl-C"
			       : "Ctrl-C to stop";
}

/*
 * Trace until a stop condition, then stop recording: the maps keep that
 * instant, whatever the probes see while they are detached.
 */
static void trace_until_stopped(struct mt_session *s, struct memleak_bpf *skel)
{
	mt_session_run(s);
	mt_collect_stop(skel);
	if (s->stop == MT_STOP_ERROR)
		fprintf(stderr, "memtrace: stopped early, waiting failed: %s\n",
			strerror(s->error));
}

/* The header facts of a run: how long it lasted, when it stopped, what
 * was traced. */
static void run_summary(struct mt_summary *sum, const struct mt_options *o,
			const struct mt_session *s)
{
	sum->duration_s = s->elapsed;
	sum->stop_ns = s->stop_ns;
	sum->mmap_traced = o->mmap;
	sum->sample_bytes = o->sample_bytes;
}

/* The allocator line of a command's or a process's report. */
static void target_allocator(struct mt_summary *sum, const struct target *t,
			     const char *cxx)
{
	snprintf(sum->allocator, sizeof(sum->allocator), "%s %s%s%s",
		 t->alloc.kind, alloc_name(t),
		 cxx[0] ? "; C++ new/delete in " : "", cxx);
}

static int report(const struct mt_options *o, struct memleak_bpf *skel,
		  struct mt_process *proc, const struct target *t,
		  const char *cxx, const struct mt_session *s)
{
	struct mt_raw_profile raw = { 0 };
	struct mt_render_opts ropts = render_opts(o, t->is_child && s->exited);
	int ret = mt_collect(skel, &raw);

	if (ret) {
		mt_raw_profile_free(&raw);
		return fail("cannot read the BPF maps: %s", strerror(-ret));
	}
	mt_collect_count_frees(&raw);
	/* The name it has now, if it exec'd. */
	mt_follow_comm(skel, proc->pid, proc->comm, sizeof(proc->comm));
	raw.procs = proc;
	raw.nprocs = 1;
	snprintf(raw.sum.target, sizeof(raw.sum.target), "pid %d (%s)",
		 (int)t->pid, proc->comm);
	target_allocator(&raw.sum, t, cxx);
	run_summary(&raw.sum, o, s);
	return render_raw(o, &raw, &ropts);
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
		return fail("%s: %s", o->base, err);
	}
	ret = mt_profile_subtract(prof, &base, o->base);
	mt_profile_free(&base);
	return ret ? fail("--base: %s", strerror(-ret)) : 0;
}

/* memtrace report FILE: render a saved profile, no tracing. */
static int report_file(const struct mt_options *o)
{
	struct mt_profile prof = { 0 };
	struct mt_render_opts ropts = render_opts(o, false);
	struct mt_pprof_limits lim = { MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO,
				       MT_PPROF_MAX_MEMORY, o->max_memory };
	char err[512];
	int ret;

	if (o->growth)
		return mt_report_growth(o, &lim, &ropts);
	ret = mt_profile_read(o->input, &lim, &prof, err, sizeof(err));
	if (ret) {
		mt_profile_free(&prof);
		return fail("%s: %s", o->input, err);
	}
	if (o->base) {
		ret = subtract_base(o, &lim, &prof);
		if (ret) {
			mt_profile_free(&prof);
			return 1;
		}
	}
	ret = mt_profile_filter(&prof, (uint32_t)o->only_pid, o->comm);
	if (ret) {
		mt_profile_free(&prof);
		return fail("%s", strerror(-ret));
	}
	ret = mt_render(o->outputs, o->noutputs, &prof, NULL, &ropts);
	mt_profile_free(&prof);
	return ret ? 1 : 0;
}

static void free_process(struct mt_process *proc)
{
	for (size_t i = 0; i < proc->nmods; i++) {
		free(proc->mods[i].path);
		if (proc->mods[i].fd >= 0)
			close(proc->mods[i].fd);
	}
	free(proc->mods);
	proc->mods = NULL;
	proc->nmods = 0;
}

struct dlopen_ctx {
	struct target *t;
	struct mt_probes *probes;
	struct memleak_bpf *skel;
	const char *prefix;
	struct mt_unwinder *uw;
};

/* The target mapped new files: probe new/delete in libraries it loaded. */
static void on_new_files(void *arg)
{
	struct dlopen_ctx *c = arg;
	struct mt_objects now;
	const char *fam;

	if (mt_objects_of_pid(c->t->pid, &now))
		return;
	mt_unwinder_add_objects(c->uw, &now);
	mt_unwinder_forget(c->uw, c->t->pid);
	for (size_t i = 0; i < now.n; i++) {
		if (mt_objects_has(&c->t->objs, &now.v[i]) ||
		    mt_objects_add(&c->t->objs, &now.v[i]))
			continue;
		/* A jemalloc or tcmalloc loaded later: its malloc family too. */
		fam = mt_allocator_family(mt_object_name(&now.v[i]));
		if (mt_probes_attach_object(c->probes, c->skel, &now.v[i],
					    fam && strcmp(fam, "glibc") != 0,
					    c->prefix))
			fprintf(stderr, "memtrace: cannot probe %s: new/delete there are not traced\n",
				now.v[i].shown);
	}
	mt_objects_free(&now);
}

/* Every turn of the session loop: the unwind tables asked for. */
static void unwinder_tick(void *arg)
{
	mt_unwinder_poll(arg);
}

/*
 * The command exec'ed (a script its interpreter, a wrapper its program):
 * the new image's files get their tables before it runs, as the first
 * image's did at the gate.
 */
static void on_child_exec(void *arg, pid_t pid)
{
	struct dlopen_ctx *c = arg;
	const struct mt_object *first = c->t->objs.n ? &c->t->objs.v[0] : NULL;
	struct mt_objects objs;
	char link[64], exe[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0 || stat(link, &st))
		return;
	exe[n] = '\0';
	/* The command's own exec: its files were done at the gate. */
	if (first && c->t->objs.has_exe && first->dev == st.st_dev &&
	    first->ino == st.st_ino)
		return;
	if (mt_objects_of_exe(exe, &objs))
		return;
	mt_unwinder_add_objects(c->uw, &objs);
	mt_unwinder_wait(c->uw);
	mt_objects_free(&objs);
}

static int trace(const struct mt_options *o, struct target *t, int sigfd)
{
	struct mt_process proc = { .pid = (uint32_t)t->pid };
	struct mt_session s = {
		.proc = &proc, .is_child = t->is_child,
		.ptraced = t->child.ptraced, .duration = o->duration,
		.sigfd = sigfd, .wake_fd = -1,
	};
	struct mt_probes probes = { 0 };
	struct memleak_bpf *skel = NULL;
	char cxx[sizeof(probes.cxx)];
	struct mt_unwinder uw;
	struct dlopen_ctx dl = { t, &probes, NULL, o->symbol_prefix, &uw };
	int ret;

	if (start_target(o, t, &skel, &probes))
		return 1;
	ret = mt_unwinder_init(&uw, skel, o->unwind != MT_UNWIND_FP, o->verbose);
	if (ret) {
		fail("cannot map the unwind tables: %s", strerror(-ret));
		if (t->is_child)
			mt_session_reap(&s);
		mt_probes_detach(&probes);
		memleak_bpf__destroy(skel);
		return 1;
	}
	/* Before the command runs (or as soon as attached): every file it
	 * maps, or will, gets its unwind table. */
	mt_unwinder_add_objects(&uw, &t->objs);
	mt_unwinder_wait(&uw);
	ret = mt_follow_attach(skel, false);
	if (ret) {
		fail("cannot follow exec: %s", strerror(-ret));
		if (t->is_child)
			mt_session_reap(&s);
		mt_unwinder_free(&uw);
		mt_probes_detach(&probes);
		memleak_bpf__destroy(skel);
		return 1;
	}
	mt_collect_start(skel); /* every probe is in place */
	dl.skel = skel;
	s.on_new_files = on_new_files;
	s.ctx = &dl;
	s.on_tick = unwinder_tick;
	s.tick_ctx = &uw;
	s.tick_fd = mt_unwinder_fd(&uw);
	s.on_exec = on_child_exec;
	snprintf(proc.comm, sizeof(proc.comm), "%s", t->comm);
	if (t->is_child) {
		ret = mt_child_release(&t->child);
		if (ret) {
			fail("cannot run '%s': %s", o->cmd[0], strerror(-ret));
			mt_session_reap(&s);
			mt_probes_detach(&probes);
			mt_unwinder_free(&uw);
			memleak_bpf__destroy(skel);
			return 127;
		}
	} else {
		mt_modules_refresh(&proc, true);
	}
	fprintf(stderr, "memtrace: tracing pid %d (%s), %zu functions in %s; %s\n",
		(int)t->pid, t->comm, probes.nfuncs, alloc_name(t),
		stop_hint(o));
	trace_until_stopped(&s, skel);
	snprintf(cxx, sizeof(cxx), "%s", probes.cxx);
	mt_probes_detach(&probes);
	if (s.stop == MT_STOP_EXIT && !t->is_child)
		fprintf(stderr, "memtrace: pid %d exited\n", (int)t->pid);
	ret = report(o, skel, &proc, t, cxx, &s);
	mt_unwinder_free(&uw);
	memleak_bpf__destroy(skel);
	free_process(&proc);
	if (ret)
		return ret;
	mt_session_reap(&s);
	if (t->is_child && !s.exited)
		fprintf(stderr, "memtrace: pid %d (%s) left running\n",
			(int)t->pid, t->comm);
	return t->is_child && s.exited ? s.exit_code : 0;
}

/* Append (moving) the stacks and blocks of FROM to TO. */
static int move_raw(struct mt_raw_profile *to, struct mt_raw_profile *from)
{
	struct mt_raw_stack *st = realloc(to->stacks, (to->nstacks + from->nstacks + 1) * sizeof(*st));
	struct mt_raw_block *bl;

	if (!st)
		return -ENOMEM;
	to->stacks = st;
	bl = realloc(to->blocks, (to->nblocks + from->nblocks + 1) * sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	to->blocks = bl;
	memcpy(st + to->nstacks, from->stacks, from->nstacks * sizeof(*st));
	memcpy(bl + to->nblocks, from->blocks, from->nblocks * sizeof(*bl));
	to->nstacks += from->nstacks;
	to->nblocks += from->nblocks;
	free(from->stacks);
	free(from->blocks);
	from->stacks = NULL;
	from->blocks = NULL;
	from->nstacks = from->nblocks = 0;
	return 0;
}

struct system_ctx {
	struct mt_system *sys;
	struct memleak_bpf *skel;
	struct mt_probes *probes;
	struct mt_unwinder *uw;
	pid_t cmd_pid;          /* following -- CMD: its pid; 0 system-wide */
};

static void system_tick(void *arg)
{
	struct system_ctx *c = arg;

	mt_system_tick(c->sys, c->skel, c->probes);
	mt_unwinder_poll(c->uw);
}

struct system_attach {
	const struct mt_options *o;
	struct mt_system *sys;
	struct mt_probes *probes;
};

static int attach_system(struct memleak_bpf *skel, enum mt_link_mode mode,
			 void *arg)
{
	struct system_attach *c = arg;
	int ret;

	mt_probes_init(c->probes, -1, mode, c->o->mmap);
	ret = mt_system_scan(c->sys, skel, c->probes);
	if (ret) {
		mt_probes_detach(c->probes);
		mt_system_free(c->sys);
		c->sys->prefix = c->o->symbol_prefix;
	}
	return ret;
}

/* Load, and attach to every allocator any process maps now. */
static int start_system(const struct mt_options *o, struct mt_system *sys,
			struct memleak_bpf **skel, struct mt_probes *probes)
{
	struct system_attach c = { o, sys, probes };
	int err, ret = load_and_attach(o, skel, attach_system, &c, &err);

	if (ret || err == -EPERM || err == -EACCES)
		return 1;
	if (err)
		return fail("cannot attach uprobes: %s", strerror(-err));
	if (!sys->nprobed) {
		memleak_bpf__destroy(*skel);
		*skel = NULL;
		return fail("no process on this machine maps an allocator memtrace can trace");
	}
	return 0;
}

static int trace_system(const struct mt_options *o, int sigfd)
{
	struct mt_system sys = { .prefix = o->symbol_prefix };
	struct mt_probes probes = { 0 };
	struct memleak_bpf *skel = NULL;
	struct mt_unwinder uw;
	struct system_ctx ctx = { &sys, NULL, &probes, &uw, 0 };
	struct mt_session s = { .duration = o->duration, .sigfd = sigfd,
				.on_new_files = system_tick, .ctx = &ctx,
				.wake_fd = -1 };
	struct mt_raw_profile raw = { 0 };
	struct mt_render_opts ropts = render_opts(o, false);
	int ret;

	if (start_system(o, &sys, &skel, &probes))
		return 1;
	/* System-wide, a table is made when a stack first needs it: making
	 * every file's now would take seconds. */
	ret = mt_unwinder_init(&uw, skel, o->unwind != MT_UNWIND_FP, o->verbose);
	if (ret) {
		fail("cannot map the unwind tables: %s", strerror(-ret));
		mt_probes_detach(&probes);
		memleak_bpf__destroy(skel);
		mt_system_free(&sys);
		return 1;
	}
	ret = mt_follow_attach(skel, false);
	if (ret) {
		fail("cannot follow exec: %s", strerror(-ret));
		mt_unwinder_free(&uw);
		mt_probes_detach(&probes);
		memleak_bpf__destroy(skel);
		mt_system_free(&sys);
		return 1;
	}
	mt_collect_start(skel); /* every probe is in place */
	ctx.skel = skel;
	s.wake_fd = mt_system_wake_fd(&sys, skel);
	fprintf(stderr, "memtrace: tracing every process (%zu now) using %s; %s\n",
		sys.nprocs, sys.probed,
		stop_hint(o));
	trace_until_stopped(&s, skel);
	mt_system_scan(&sys, skel, &probes); /* last mappings; harvest exits */
	mt_probes_detach(&probes);
	ret = mt_collect(skel, &raw);
	if (!ret)
		ret = move_raw(&raw, &sys.dead);
	if (ret) {
		fail("cannot read the BPF maps: %s", strerror(-ret));
	} else {
		mt_collect_count_frees(&raw);
		raw.procs = sys.procs;
		raw.nprocs = sys.nprocs;
		snprintf(raw.sum.target, sizeof(raw.sum.target),
			 "system-wide, %zu processes", sys.nprocs);
		snprintf(raw.sum.allocator, sizeof(raw.sum.allocator), "%s",
			 sys.probed);
		run_summary(&raw.sum, o, &s);
		ret = render_raw(o, &raw, &ropts);
	}
	mt_raw_profile_free(&raw);
	mt_unwinder_free(&uw);
	memleak_bpf__destroy(skel);
	mt_system_free(&sys);
	return ret ? 1 : 0;
}

/* The name process PID has among SYS's (the last entry for it). */
static const char *family_comm(const struct mt_system *sys, pid_t pid,
			       const char *dflt)
{
	for (size_t i = sys->nprocs; i-- > 0;)
		if (sys->procs[i].pid == (uint32_t)pid)
			return sys->procs[i].comm;
	return dflt;
}

/* Collect and render what the command and its descendants did. */
static int report_family(const struct mt_options *o, struct memleak_bpf *skel,
			 struct mt_system *sys, const struct target *t,
			 const char *cxx, const struct mt_session *s)
{
	struct mt_raw_profile raw = { 0 };
	struct mt_render_opts ropts = render_opts(o, s->exited);
	int ret = mt_collect(skel, &raw);

	if (!ret)
		ret = move_raw(&raw, &sys->dead);
	if (ret) {
		mt_raw_profile_free(&raw);
		return fail("cannot read the BPF maps: %s", strerror(-ret));
	}
	mt_collect_count_frees(&raw);
	raw.procs = sys->procs;
	raw.nprocs = sys->nprocs;
	if (sys->nprocs > 1)
		snprintf(raw.sum.target, sizeof(raw.sum.target),
			 "pid %d (%s) and %zu process%s it started", (int)t->pid,
			 family_comm(sys, t->pid, t->comm), sys->nprocs - 1,
			 sys->nprocs > 2 ? "es" : "");
	else
		snprintf(raw.sum.target, sizeof(raw.sum.target), "pid %d (%s)",
			 (int)t->pid, family_comm(sys, t->pid, t->comm));
	target_allocator(&raw.sum, t, cxx);
	run_summary(&raw.sum, o, s);
	ret = render_raw(o, &raw, &ropts);
	/* render_raw left the procs alone: they are SYS's. */
	return ret;
}

/* The command mapped new files (dlopen): look at them now. */
static void family_new_files(void *arg)
{
	struct system_ctx *c = arg;
	struct mt_objects now;

	/* Their unwind tables, as without following (on_new_files). */
	if (mt_objects_of_pid(c->cmd_pid, &now) == 0) {
		mt_unwinder_add_objects(c->uw, &now);
		mt_unwinder_forget(c->uw, c->cmd_pid);
		mt_objects_free(&now);
	}
	mt_system_scan(c->sys, c->skel, c->probes);
}

/* Every turn of the session loop: new processes, exits, new files. */
static void family_tick(void *arg)
{
	struct system_ctx *c = arg;

	mt_system_tick(c->sys, c->skel, c->probes);
}

/*
 * The command or one of its descendants exec'ed, and stops before its new
 * image runs: that image's files get their unwind tables now, as the
 * command's did at the gate.
 */
static void family_exec(void *arg, pid_t pid)
{
	struct system_ctx *c = arg;
	struct mt_objects objs;
	char link[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	if (mt_objects_of_exe(exe, &objs))
		return;
	mt_unwinder_add_objects(c->uw, &objs);
	mt_unwinder_wait(c->uw);
	mt_objects_free(&objs);
}

/* A descendant stops at its exit: its mappings, while they are there. */
static void family_exit_stop(void *arg, pid_t pid)
{
	struct system_ctx *c = arg;

	mt_system_read_maps(c->sys, (uint32_t)pid);
}

/*
 * Set up following: the command's files are probed for every process
 * (the BPF program picks the followed ones), and it is followed.
 */
static int start_family(const struct mt_options *o, struct mt_system *sys,
			struct memleak_bpf *skel, const struct target *t,
			struct mt_probes *probes, int *wake_fd)
{
	enum mt_link_mode mode = probes->mode;
	int ret;

	mt_probes_detach(probes);
	ret = mt_probes_attach(probes, skel, -1, &t->alloc, o->symbol_prefix,
			       &t->objs, mode, o->mmap);
	if (!ret)
		ret = mt_system_mark_seen(sys, &t->objs);
	if (!ret)
		ret = mt_follow_add(skel, (uint32_t)t->pid);
	if (!ret)
		ret = mt_follow_attach(skel, true);
	if (!ret) {
		*wake_fd = mt_system_wake_fd(sys, skel);
		ret = *wake_fd < 0 ? *wake_fd : 0;
	}
	return ret;
}

/*
 * -- CMD following the processes it starts (fork, vfork, clone, and their
 * execs): the probes are on every process and the BPF program records
 * only CMD and its descendants; the system-wide machinery reads their
 * mappings, probes allocator files they bring, and keeps what those that
 * exit leave.  The report lists them as system-wide does.
 */
static int trace_family(const struct mt_options *o, struct target *t,
			int sigfd)
{
	struct mt_process proc = { .pid = (uint32_t)t->pid };
	struct mt_system sys = { .prefix = o->symbol_prefix,
				 .only_followed = true };
	struct mt_probes probes = { 0 };
	struct memleak_bpf *skel = NULL;
	struct mt_unwinder uw;
	struct system_ctx ctx = { &sys, NULL, &probes, &uw, t->pid };
	struct mt_session s = {
		.proc = &proc, .is_child = true, .ptraced = t->child.ptraced,
		.duration = o->duration, .sigfd = sigfd, .tick = family_tick,
		.on_new_files = family_new_files, .ctx = &ctx, .wake_fd = -1,
		.on_exit_stop = family_exit_stop, .follow = true,
		.on_exec = family_exec, .on_tick = unwinder_tick, .tick_ctx = &uw,
	};
	char cxx[sizeof(probes.cxx)];
	int ret;

	if (start_target(o, t, &skel, &probes))
		return 1;
	ctx.skel = skel;
	snprintf(proc.comm, sizeof(proc.comm), "%s", t->comm);
	ret = mt_unwinder_init(&uw, skel, o->unwind != MT_UNWIND_FP, o->verbose);
	if (ret) {
		ret = fail("cannot map the unwind tables: %s", strerror(-ret));
	} else {
		/* Every file the command maps, or will, before it runs; while
		 * the probes are still the command's alone (on every process,
		 * memtrace's own allocations making the tables would trap). */
		mt_unwinder_add_objects(&uw, &t->objs);
		mt_unwinder_wait(&uw);
		s.tick_fd = mt_unwinder_fd(&uw);
		ret = start_family(o, &sys, skel, t, &probes, &s.wake_fd);
		if (ret)
			ret = fail("cannot follow the processes '%s' starts: %s",
				   o->cmd[0], strerror(-ret));
	}
	if (ret) {
		mt_session_reap(&s);
	} else {
		mt_collect_start(skel); /* every probe is in place */
		ret = mt_child_release(&t->child);
		if (ret) {
			fail("cannot run '%s': %s", o->cmd[0], strerror(-ret));
			mt_session_reap(&s);
			ret = 127;
		}
	}
	if (!ret) {
		fprintf(stderr, "memtrace: tracing pid %d (%s), %zu functions in %s, and the processes it starts; %s\n",
			(int)t->pid, t->comm, probes.nfuncs, alloc_name(t),
			stop_hint(o));
		trace_until_stopped(&s, skel);
		mt_system_scan(&sys, skel, &probes); /* last mappings; harvest exits */
		snprintf(cxx, sizeof(cxx), "%s", probes.cxx);
		mt_probes_detach(&probes);
		ret = mt_system_adopt(&sys, &proc);
		if (!ret)
			ret = mt_system_inherit(&sys, skel);
		ret = ret ? fail("%s", strerror(-ret))
			  : report_family(o, skel, &sys, t, cxx, &s);
		if (!ret) {
			mt_session_reap(&s);
			if (!s.exited)
				fprintf(stderr, "memtrace: pid %d (%s) left running\n",
					(int)t->pid, t->comm);
			ret = s.exited ? s.exit_code : 0;
		}
	}
	mt_probes_detach(&probes);
	mt_unwinder_free(&uw);
	memleak_bpf__destroy(skel);
	free_process(&proc);
	mt_system_free(&sys);
	return ret;
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
			return fail("cannot write '%s': %s", path,
				    mt_outfile_strerror(err));
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mt_options o;
	struct target t = { .child = { .gate_fd = -1, .err_fd = -1 } };
	static struct mt_runas runas; /* lives as long as the process */
	struct mt_keys keys = { 0 };
	int sigfd, ret = mt_options_parse(argc, argv, &o);

	if (ret)
		return ret > 0 ? 0 : 2;
	signal(SIGPIPE, SIG_IGN);
	if (mt_runas_init(&runas))
		return 2;
	/* Under sudo, CMD and the files written are the invoking user's. */
	if (runas.sudo)
		mt_outfile_owner(runas.uid, runas.gid);
	t.child.runas = o.as_root ? NULL : &runas;
	if (check_outputs(&o))
		return 1;
	if (o.report_mode)
		return report_file(&o);
	mt_bpf_log_init(stderr, o.verbose);
	if (!mt_privileged())
		return fail("not enough privilege: tracing needs %s", MT_CAPS_NEEDED);
	sigfd = mt_session_signals();
	if (sigfd < 0)
		return fail("cannot set up signal handling: %s", strerror(-sigfd));
	/* A terminal is CMD's to read; with -p or system-wide, q stops. */
	if ((o.pid || o.system_wide) && mt_keys_start(&keys))
		fprintf(stderr, "memtrace: press q or Enter to stop tracing (Ctrl-C also stops the rest of a pipeline)\n");
	if (o.system_wide) {
		ret = trace_system(&o, sigfd);
		mt_keys_stop(&keys);
		close(sigfd);
		return ret;
	}
	ret = o.pid ? find_pid_target(&o, &t) : start_cmd_target(&o, &t);
	if (!ret)
		ret = follows(&o) ? trace_family(&o, &t, sigfd)
				  : trace(&o, &t, sigfd);
	mt_keys_stop(&keys);
	mt_objects_free(&t.objs);
	if (ret && t.is_child && t.child.gate_fd >= 0)
		mt_child_abort(&t.child);
	close(sigfd);
	return ret;
}
