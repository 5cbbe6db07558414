// SPDX-License-Identifier: MIT
/* tracer.c: one trace's resources, from attach to detach. */
#include "tracer.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf_cost.h"
#include "bpf_load.h"
#include "collect.h"
#include "deferred_unwind.h"
#include "errmsg.h"
#include "follow.h"
#include "kernel_vmas.h"
#include "fd_limit.h"
#include "libs_cache.h"
#include "loop.h"
#include "memleak.skel.h"
#include "mapping_capture.h"
#include "private_text.h"
#include "proc_state.h"
#include "trunc_procs.h"
#include "vma_files.h"

/* ---- attaching ---- */

struct target_attach {
	const struct mt_options *o;
	const struct mt_target *t;
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

/* Load, and attach to the target's allocator and new/delete. */
static int attach_to_target(struct mt_tracer *tr)
{
	const struct mt_options *o = tr->o;
	const struct mt_target *t = tr->t;
	struct target_attach c = { o, t, &tr->probes };
	int err, ret = mt_bpf_load_and_attach(o, tr->kind == MT_TRACER_FAMILY,
					      &tr->skel, attach_target, &c,
					      &err);

	if (ret || err == -EPERM || err == -EACCES)
		return 1;
	if (err && !t->is_child && mt_proc_state(t->pid) != MT_PROC_RUNNING)
		return mt_target_exited_while_attaching(t);
	if (err == -ENOENT)
		return mt_fail("%s defines no %smalloc: nothing to probe",
			       mt_target_alloc_name(t), o->symbol_prefix);
	if (err)
		return mt_fail("cannot attach uprobes to %s: %s",
			       mt_target_alloc_name(t), strerror(-err));
	if (o->mmap && !tr->probes.mmap)
		fprintf(stderr, "memtrace: no libc with mmap found: --mmap traces nothing\n");
	return 0;
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
	if (ret == 0 && c->sys->nprobed)
		ret = mt_system_probe_installed(c->sys, skel, c->probes);
	if (ret) {
		struct mt_images *images = c->sys->images;

		mt_probes_detach(c->probes);
		mt_system_free(c->sys);
		c->sys->prefix = c->o->symbol_prefix;
		c->sys->images = images;
		c->sys->verbose = c->o->verbose;
	}
	return ret;
}

/*
 * memtrace's own allocator code (libc's malloc family, libstdc++'s operator
 * new) moved out of reach of the probes it is about to place on every
 * process's (private_text.h).
 */
static void own_text_private(const struct mt_options *o)
{
	static const char *const names[] = { "malloc", "free", "calloc",
					     "realloc", "_Znwm", "_ZdlPv" };

	if (getenv("MEMTRACE_SELF_PROBED")) /* for comparison */
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *fn = dlsym(RTLD_DEFAULT, names[i]);
		int ret = fn ? mt_private_text(fn) : 0;

		if (ret < 0 && o->verbose)
			fprintf(stderr, "memtrace: the code of %s stays where memtrace's probes reach it: %s\n",
				names[i], strerror(-ret));
	}
}

/* Load, and attach to every allocator any process maps now. */
static int attach_to_system(struct mt_tracer *tr)
{
	struct system_attach c = { tr->o, &tr->sys, &tr->probes };
	int err, ret;

	own_text_private(tr->o);
	ret = mt_bpf_load_and_attach(tr->o, false, &tr->skel, attach_system,
				     &c, &err);

	if (ret || err == -EPERM || err == -EACCES)
		return 1;
	if (err)
		return mt_fail("cannot attach uprobes: %s", strerror(-err));
	if (!tr->sys.nprobed)
		return mt_fail("no process on this machine maps an allocator memtrace can trace");
	return 0;
}

/*
 * Following: the command's probes (for it alone) are the family's first;
 * the processes it starts get theirs as they start, and the command is
 * followed.
 */
static int start_family(struct mt_tracer *tr)
{
	const struct mt_target *t = tr->t;
	int ret;

	ret = mt_family_init(&tr->fam, tr->o->allocator, tr->o->symbol_prefix);
	if (!ret)
		ret = mt_family_adopt(&tr->fam, (uint32_t)t->pid, &tr->probes,
				      &t->objs);
	if (!ret)
		ret = mt_follow_add(tr->skel, (uint32_t)t->pid);
	/* Held at ld.so's hook as it loads, and at each dlopen. */
	if (!ret)
		ret = mt_follow_hold(tr->skel, (uint32_t)t->pid, MT_HOLD_DLOPEN);
	if (!ret)
		ret = mt_follow_attach(tr->skel, true);
	if (!ret) {
		tr->s.wake_fd = mt_system_wake_fd(&tr->sys, tr->skel);
		ret = tr->s.wake_fd < 0 ? tr->s.wake_fd : 0;
	}
	return ret;
}

/* ---- what the loop calls ---- */

/* Every refresh, and when the unwinder asks: the tables to make. */
static void unwinder_tick(void *arg)
{
	struct mt_tracer *tr = arg;

	mt_unwinder_poll(&tr->uw);
	mt_deferred_unwind_poll(false);
}

/* During a scan: the stacks copied meanwhile read (not walked). */
static void read_copies(void *arg)
{
	struct mt_tracer *tr = arg;

	if (tr->uw_on && !tr->stopped)
		mt_unwinder_poll(&tr->uw);
}

/* The target mapped new files: probe new/delete in libraries it loaded. */
static void one_new_files(void *arg)
{
	struct mt_tracer *tr = arg;
	struct mt_target *t = tr->t;
	/* Read just now (the session's refresh) into the registry. */
	const struct mt_image *img = mt_images_of(&tr->images, t->pid);
	struct mt_objects now;
	const char *fam;
	int err;

	if (img ? mt_objects_of_image(t->pid, img, &now)
		: mt_objects_of_pid(t->pid, &now))
		return;
	if (img)
		mt_unwinder_add_image(&tr->uw, t->pid, img);
	else
		mt_unwinder_add_objects(&tr->uw, &now);
	mt_unwinder_forget(&tr->uw, t->pid);
	for (size_t i = 0; i < now.n; i++) {
		if (mt_objects_has(&t->objs, &now.v[i]) ||
		    mt_objects_add(&t->objs, &now.v[i]))
			continue;
		/* Probed ahead (one_standby): named now it is mapped. */
		if (mt_standby_mapped(&tr->standby, &tr->probes, now.v[i].dev,
				      now.v[i].ino, NULL))
			continue;
		/* A jemalloc or tcmalloc loaded later: its malloc family too. */
		fam = mt_allocator_family(mt_object_name(&now.v[i]));
		err = mt_probes_attach_object(&tr->probes, tr->skel, &now.v[i],
					      fam && strcmp(fam, "glibc") != 0,
					      tr->o->symbol_prefix);
		if (err && err != -ENOENT) /* -ENOENT: none there to probe */
			fprintf(stderr, "memtrace: cannot probe %s: new/delete there are not traced\n",
				now.v[i].shown);
	}
	mt_objects_free(&now);
}

/*
 * At the first refresh (not to delay the start): the allocator libraries
 * installed on the machine that the target does not map are probed for
 * it, so that one it loads later (dlopen) is traced from its first call.
 */
static void one_standby(void *arg)
{
	struct mt_tracer *tr = arg;
	int err;

	if (tr->standby_done)
		return;
	tr->standby_done = true;
	err = mt_standby_probe(&tr->standby, &tr->probes, tr->skel,
			       tr->o->symbol_prefix, &tr->t->objs, false);
	if (err && tr->o->verbose)
		fprintf(stderr, "memtrace: installed allocators not probed ahead: %s\n",
			strerror(-err));
}

/* The allocator of the image PID exec'd, for the allocator line. */
static void name_allocator(struct mt_tracer *tr, pid_t pid,
			   const struct mt_objects *objs)
{
	struct mt_allocator a;

	char name[MT_PROC_ALLOC_NAME];

	if (!tr->t ||
	    (mt_allocator_choose(objs, tr->o->allocator, tr->o->symbol_prefix, &a) &&
	     mt_allocator_choose(objs, NULL, tr->o->symbol_prefix, &a)))
		return;
	snprintf(name, sizeof(name), "%s %s", a.kind, objs->v[a.index].shown);
	if (mt_proc_allocs_set(&tr->allocs, (uint32_t)pid, objs->v[a.index].dev,
			       objs->v[a.index].ino, name))
		fprintf(stderr, "memtrace: out of memory naming pid %d's allocator\n",
			(int)pid);
}

/*
 * Process PID's image, read once into the registry for all who look at
 * it: its files for the probes, its mappings for the report, each file's
 * identity as the stack walk knows it (the vma_files iterator) for the
 * unwind tables.  NULL when it is gone.
 */
static const struct mt_image *read_image(struct mt_tracer *tr, pid_t pid)
{
	return mt_images_read_task(&tr->images, tr->skel, pid);
}

/* Whether process PID's root is memtrace's (not in a chroot or container). */
static bool same_root(pid_t pid)
{
	char link[64];
	struct stat a, b;

	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	return stat(link, &a) == 0 && stat("/", &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * The files of the image PID just exec'd, for its probes until ld.so has
 * loaded it: those mapped (the executable and its interpreter, as the
 * process sees them) and, in memtrace's own root, the libraries `ld.so
 * --list` says it will load.  What ld.so really loads (an LD_PRELOAD of
 * the process's, a chroot's libc) is seen at the hold (on_dl_hold).
 */
static int image_files(struct mt_tracer *tr, pid_t pid, const char *exe,
		       struct mt_objects *objs, bool *loading)
{
	struct mt_objects listed;
	/* Its new image replaces the old in the registry: the files only
	 * the old one mapped go now. */
	const struct mt_image *img = read_image(tr, pid);
	int ret = img ? mt_objects_of_image(pid, img, objs) : -ESRCH;

	if (ret)
		return ret;
	*loading = mt_objects_loading(pid, objs);
	if (!same_root(pid) || mt_libs_of_exe(&tr->libs, exe, &listed))
		return 0;
	for (size_t i = 0; i < listed.n && !ret; i++)
		if (!mt_objects_has(objs, &listed.v[i]))
			ret = mt_objects_add(objs, &listed.v[i]);
	mt_objects_free(&listed);
	if (ret)
		mt_objects_free(objs);
	return ret;
}

/*
 * PID, stopped, maps OBJS (or IMG): it stays stopped until their unwind
 * tables are in (table_holds.h), while the loop goes on.
 */
static void hold_for_tables(struct mt_tracer *tr, pid_t pid,
			    const struct mt_objects *objs,
			    const struct mt_image *img,
			    const struct mt_hold_note *note)
{
	if (objs ? mt_table_holds_objects(&tr->holds, &tr->uw, pid, objs, note)
		 : mt_table_holds_image(&tr->holds, &tr->uw, pid, img, note))
		tr->s.keep_stopped = true;
}

/* A table is in: the processes held for theirs. */
static void holds_ready(void *arg, int fd, short revents)
{
	struct mt_tracer *tr = arg;

	(void)fd;
	(void)revents;
	mt_table_holds_check(&tr->holds, &tr->uw);
}

/*
 * A followed process called ld.so's hook once loaded: a dlopen (or a
 * dlclose) is mapping or has mapped libraries.  Held there, before any
 * code of theirs runs, the files it maps now are looked at: the new/delete
 * of a C++ plugin's libstdc++ or a jemalloc get their probes, each new
 * file its unwind table, and its mappings are read for the report.  The
 * allocations the library makes as it starts are traced, whole stacks.
 */
static void dlopen_stop(struct mt_tracer *tr, pid_t pid)
{
	struct mt_objects objs;
	double t0 = mt_loop_now();
	const struct mt_image *img = read_image(tr, pid);

	if (!img || mt_objects_of_image(pid, img, &objs))
		return;
	mt_family_update(&tr->fam, tr->skel, (uint32_t)pid, &objs);
	mt_system_read_image(&tr->sys, (uint32_t)pid, img);
	mt_unwinder_add_image(&tr->uw, pid, img);
	/* Held until its own files' tables are in, not others'. */
	hold_for_tables(tr, pid, NULL, img,
			&(struct mt_hold_note){ .dlopen = true, .t0 = t0 });
	mt_objects_free(&objs);
}

/*
 * A process held at ld.so's hook (follow.h): at the first call ld.so has
 * mapped nothing yet; at the next, every library it loads at start-up
 * (LD_PRELOAD too) is there, and no code of the program has run.  Its
 * probes are planned again for the files it really maps.
 */
static bool on_dl_hold(void *arg, pid_t pid)
{
	struct mt_tracer *tr = arg;
	const struct mt_image *img;
	struct mt_objects objs;
	double t0 = mt_loop_now();
	uint8_t held;

	if (!mt_follow_hold_taken(tr->skel, (uint32_t)pid))
		return false; /* the program's own signal */
	held = mt_follow_held(tr->skel, (uint32_t)pid);
	if (!held)
		return true; /* sent before its hold ended */
	if (held == MT_HOLD_DLOPEN) {
		dlopen_stop(tr, pid);
		return true;
	}
	img = read_image(tr, pid);
	if (!img || mt_objects_of_image(pid, img, &objs)) {
		mt_follow_hold(tr->skel, (uint32_t)pid, 0);
		return true;
	}
	/* Each process's own count: several may exec at once. */
	if (mt_objects_loading(pid, &objs) && held == 1) {
		mt_follow_hold(tr->skel, (uint32_t)pid, 2);
		mt_objects_free(&objs);
		return true;
	}
	/* Following, held at its dlopens from now on. */
	mt_follow_hold(tr->skel, (uint32_t)pid,
		       tr->kind == MT_TRACER_FAMILY ? MT_HOLD_DLOPEN : 0);
	if (tr->kind == MT_TRACER_FAMILY &&
	    mt_family_exec(&tr->fam, tr->skel, (uint32_t)pid, &objs, true, false))
		fprintf(stderr, "memtrace: cannot probe pid %d once ld.so loaded it: not traced\n",
			(int)pid);
	name_allocator(tr, pid, &objs);
	mt_unwinder_add_image(&tr->uw, pid, img);
	hold_for_tables(tr, pid, NULL, img, &(struct mt_hold_note){ .t0 = t0 });
	mt_objects_free(&objs);
	return true;
}

/*
 * The command (or, following, one of its descendants) exec'ed and stops
 * before its new image runs: that image's files get their tables now, as
 * the command's did at the gate.
 */
static void on_exec(void *arg, pid_t pid)
{
	struct mt_tracer *tr = arg;
	const struct mt_target *t = tr->t;
	const struct mt_object *first = t->objs.n ? &t->objs.v[0] : NULL;
	struct mt_objects objs;
	char link[64], exe[PATH_MAX];
	struct stat st;
	double t0 = mt_loop_now(), t1, t2;
	unsigned long former;
	bool loading = false;
	int err;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0 || stat(link, &st))
		return;
	exe[n] = '\0';
	/* The thread that exec'd (the ptrace event's message) took over the
	 * pid's task when it was not the main one: links made for the old
	 * task trace nothing now. */
	if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &former))
		former = 0;
	/* The command's own exec by its main thread: its files were done at
	 * the gate, its probes stay. */
	if (pid == t->pid && first && t->objs.has_exe &&
	    first->dev == st.st_dev && first->ino == st.st_ino &&
	    (tr->kind != MT_TRACER_FAMILY || former == (unsigned long)pid))
		return;
	if (image_files(tr, pid, exe, &objs, &loading))
		return;
	t1 = mt_loop_now();
	/* Following, its probes are for its new image now. */
	if (tr->kind == MT_TRACER_FAMILY &&
	    (err = mt_family_exec(&tr->fam, tr->skel, (uint32_t)pid, &objs,
				  former == (unsigned long)pid, loading)) != 0)
		fprintf(stderr, "memtrace: cannot probe pid %d after its exec of %s: not traced (%s)\n",
			(int)pid, exe, strerror(-err));
	/* Held at ld.so's hook until its libraries are mapped (on_dl_hold). */
	if (tr->kind == MT_TRACER_FAMILY && loading) {
		mt_follow_hold(tr->skel, (uint32_t)pid, 1);
	}
	name_allocator(tr, pid, &objs);
	t2 = mt_loop_now();
	mt_unwinder_add_objects(&tr->uw, &objs);
	hold_for_tables(tr, pid, &objs, NULL,
			&(struct mt_hold_note){ exe, false, t0, t1, t2 });
	mt_objects_free(&objs);
}

/* System-wide, every refresh: new processes, exits, new files. */
static void system_tick(void *arg)
{
	struct mt_tracer *tr = arg;

	mt_system_tick(&tr->sys, tr->skel, &tr->probes);
}

/* Following, the command mapped new files (dlopen): look at them now. */
static void family_new_files(void *arg)
{
	struct mt_tracer *tr = arg;

	/* Read just now (the session's refresh) into the registry. */
	const struct mt_image *img = mt_images_of(&tr->images, tr->t->pid);

	if (!img)
		img = read_image(tr, tr->t->pid);
	/* Their unwind tables, as without following (one_new_files). */
	if (img)
		mt_unwinder_add_image(&tr->uw, tr->t->pid, img);
	mt_system_scan(&tr->sys, tr->skel, &tr->probes);
}

/* A descendant stops at its exit: its mappings, while they are there. */
static void family_exit_stop(void *arg, pid_t pid)
{
	struct mt_tracer *tr = arg;
	const struct mt_image *img = read_image(tr, pid);

	if (img)
		mt_system_read_image(&tr->sys, (uint32_t)pid, img);
}

/* A descendant stops before it first runs: its parent's probes. */
static void family_new_child(void *arg, pid_t pid)
{
	struct mt_tracer *tr = arg;
	uint32_t parent;

	if (!mt_follow_parent(tr->skel, (uint32_t)pid, &parent)) {
		/* A descendant (it stopped for us) the BPF program did not
		 * take: its table of followed processes is full. */
		if (!tr->unfollowed++)
			fprintf(stderr, "memtrace: warning: the table of followed processes is full (%d): pid %d and later children are not traced (counted at the end)\n",
				MT_MAX_PROCS, (int)pid);
		return;
	}
	int err = mt_family_fork(&tr->fam, tr->skel, (uint32_t)pid, parent);

	/* Its parent's image, if read, until its own is. */
	mt_images_fork(&tr->images, (pid_t)parent, pid);
	if (err)
		fprintf(stderr, "memtrace: cannot probe pid %d (forked by %u): not traced (%s)\n",
			(int)pid, parent, strerror(-err));
}

static void family_cxx(struct mt_tracer *tr);

/* A descendant has exited: its probes go. */
static void family_gone(void *arg, pid_t pid)
{
	struct mt_tracer *tr = arg;

	family_cxx(tr); /* what it probed, for the allocator line */
	mt_family_release(&tr->fam, (uint32_t)pid);
	mt_table_holds_gone(&tr->holds, pid);
	mt_images_exit(&tr->images, pid);
	mt_follow_hold(tr->skel, (uint32_t)pid, 0);
}

/*
 * ld.so's hook told of a dlopen by process PID (the unwinder's ring): -p
 * and system-wide, the files it maps now are looked at at once, not at
 * the next refresh (100 ms) or scan (1 s), so that the new/delete or the
 * allocator a library brings is probed about as it is mapped.  (-- CMD
 * holds the process at the hook instead: on_dl_hold.)  True when its
 * unwind tables were asked for here: -p, from the one read of it into
 * the registry that its probes and mappings come from too.
 */
static bool on_dlopen(void *arg, pid_t pid)
{
	struct mt_tracer *tr = arg;
	double t0 = mt_loop_now();
	uint64_t seen = tr->sys.dlopens;
	bool asked = false;

	if (tr->stopped)
		return false;
	if (tr->kind == MT_TRACER_SYSTEM) {
		/* Its image into the registry; its tables are made as
		 * stacks meet its files (system-wide, not every file's). */
		asked = true;
		mt_system_look_at(&tr->sys, tr->skel, &tr->probes, (uint32_t)pid);
	} else if (tr->kind == MT_TRACER_ONE && tr->t && pid == tr->t->pid) {
		const struct mt_image *img;

		/* New files: one_new_files asks for their tables. */
		if (mt_images_refresh_modules(&tr->images, tr->skel, &tr->proc,
					      true) > 0)
			one_new_files(tr);
		else if ((img = mt_images_of(&tr->images, pid)) != NULL)
			mt_unwinder_add_image(&tr->uw, pid, img);
		asked = mt_images_of(&tr->images, pid) != NULL;
	}
	/* System-wide, not the hook's runs as every program loads. */
	if (tr->o->verbose &&
	    (tr->kind != MT_TRACER_SYSTEM || tr->sys.dlopens != seen))
		fprintf(stderr, "memtrace: pid %d dlopen, looked at in %.1f ms\n",
			(int)pid, (mt_loop_now() - t0) * 1e3);
	return asked;
}

/* ---- start, run, collect, stop ---- */

static int init_unwinder(struct mt_tracer *tr)
{
	int ret = mt_unwinder_init(&tr->uw, tr->skel,
				   tr->o->unwind != MT_UNWIND_FP, tr->o->verbose);

	tr->uw_on = true;
	tr->uw.on_dlopen = on_dlopen;
	tr->uw.dlopen_ctx = tr;
	if (!ret)
		ret = mt_deferred_unwind_init(&tr->uw, tr->skel, tr->o->unwind);
	mt_collect_set_resolved(mt_deferred_unwind_resolved);
	if (ret)
		return mt_fail("cannot map the unwind tables: %s", strerror(-ret));
	tr->s.on_tick = unwinder_tick;
	tr->s.tick_ctx = tr;
	tr->s.tick_fd = mt_unwinder_fd(&tr->uw);
	return 0;
}

/* Unwind tables kept on disk, unless --no-unwind-cache. */
static void use_unwind_cache(struct mt_tracer *tr)
{
	if (!tr->o->no_unwind_cache)
		mt_unwinder_use_cache(&tr->uw, NULL, tr->o->unwind_cache_max);
}

/*
 * System-wide, a process harvested: named by the mappings the kernel told
 * of if /proc never showed it any, and then those go (kernel_vmas.h).
 */
static void system_harvested(void *ctx, struct mt_process *p)
{
	(void)ctx;
	mt_kvmas_modules(p);
	mt_deferred_unwind_forget(p->pid);
}

static int start_system(struct mt_tracer *tr)
{
	int ret = attach_to_system(tr);

	/* System-wide, a table is made when a stack first needs it (making
	 * every file's now would take seconds, and fill the rows with files
	 * no stack may cross); but first, the tables in the cache of the
	 * files running processes map are loaded, in well under a ms each. */
	if (!ret)
		ret = init_unwinder(tr);
	if (!ret) {
		use_unwind_cache(tr);
		for (size_t i = 0; i < tr->sys.nprocs; i++)
			if (!tr->sys.gone[i])
				mt_unwinder_preload_process(&tr->uw,
							    (pid_t)tr->sys.procs[i].pid);
	}
	if (!ret && (ret = mt_follow_attach(tr->skel, false)) != 0)
		ret = mt_fail("cannot follow exec: %s", strerror(-ret));
	if (ret)
		return ret;
	tr->s.on_new_files = system_tick;
	tr->s.ctx = tr;
	tr->sys.on_harvested = system_harvested;
	mt_collect_start(tr->skel); /* every probe is in place */
	tr->s.wake_fd = mt_system_wake_fd(&tr->sys, tr->skel);
	return 0;
}

static int start_target(struct mt_tracer *tr)
{
	struct mt_target *t = tr->t;
	int ret = mt_unwinder_start(&tr->uw, tr->o->unwind != MT_UNWIND_FP,
				    tr->o->verbose);

	if (ret)
		return mt_fail("cannot start making unwind tables: %s",
			       strerror(-ret));
	tr->uw_on = true;
	use_unwind_cache(tr);
	/* Before the command runs (or as soon as attached): every file it
	 * maps, or will, gets its table, made while the BPF programs load. */
	mt_unwinder_add_objects(&tr->uw, &t->objs);
	ret = attach_to_target(tr);
	if (!ret)
		ret = init_unwinder(tr);
	if (ret)
		return ret;
	/* -p: its files as the stack walk will know them (overlayfs). */
	if (!t->is_child)
		mt_unwinder_add_process(&tr->uw, t->pid);
	mt_unwinder_wait(&tr->uw);
	if (tr->kind == MT_TRACER_FAMILY) {
		ret = start_family(tr);
		if (ret)
			return mt_fail("cannot follow the processes '%s' starts: %s",
				       tr->o->cmd[0], strerror(-ret));
		tr->s.tick = system_tick;
		tr->s.on_new_files = family_new_files;
		tr->s.on_exit_stop = family_exit_stop;
		tr->s.on_new_child = family_new_child;
		tr->s.on_gone = family_gone;
		tr->s.follow = true;
	} else {
		ret = mt_follow_attach(tr->skel, false);
		if (ret)
			return mt_fail("cannot follow exec: %s", strerror(-ret));
		tr->s.on_new_files = one_new_files;
		tr->s.tick = one_standby;
	}
	tr->s.on_exec = on_exec;
	tr->s.on_dl_hold = on_dl_hold;
	tr->holds.verbose = tr->o->verbose;
	ret = mt_loop_add_fd(&tr->s.loop, mt_unwinder_ready_fd(&tr->uw),
			     holds_ready, tr);
	if (ret)
		return mt_fail("cannot watch the unwind tables: %s",
			       strerror(-ret));
	tr->s.images = &tr->images;
	tr->s.skel = tr->skel;
	tr->s.ctx = tr;
	mt_collect_start(tr->skel); /* every probe is in place */
	if (!t->is_child) {
		mt_images_refresh_modules(&tr->images, tr->skel, &tr->proc,
					  true);
		return 0;
	}
	ret = mt_child_release(&t->child);
	if (ret) {
		mt_fail("cannot run '%s': %s", tr->o->cmd[0], strerror(-ret));
		mt_session_reap(&tr->s);
		return 127;
	}
	return 0;
}

int mt_tracer_start(struct mt_tracer *tr, const struct mt_options *o,
		    struct mt_target *t, int sigfd)
{
	int ret;

	memset(tr, 0, sizeof(*tr));
	tr->o = o;
	tr->cost_fd = o->verbose ? mt_bpf_cost_begin() : -1;
	tr->t = t;
	tr->kind = !t ? MT_TRACER_SYSTEM
		      : mt_target_follows(o) ? MT_TRACER_FAMILY : MT_TRACER_ONE;
	tr->sys.prefix = o->symbol_prefix;
	tr->sys.family = tr->kind == MT_TRACER_FAMILY ? &tr->fam : NULL;
	/* Every mode reads processes into the one registry; system-wide it
	 * holds a descriptor per file mapped executable on the machine. */
	tr->sys.images = &tr->images;
	tr->sys.verbose = o->verbose;
	if (tr->kind == MT_TRACER_SYSTEM)
		mt_fd_limit_raise();
	tr->sys.between = read_copies;
	tr->sys.between_ctx = tr;
	tr->s.duration = o->duration;
	tr->s.sigfd = sigfd;
	tr->s.wake_fd = -1;
	tr->s.tick_fd = -1;
	if (t) {
		tr->proc.pid = (uint32_t)t->pid;
		snprintf(tr->proc.comm, sizeof(tr->proc.comm), "%s", t->comm);
		tr->s.proc = &tr->proc;
		tr->s.is_child = t->is_child;
		tr->s.ptraced = t->child.ptraced;
	}
	ret = t ? start_target(tr) : start_system(tr);
	if (!ret && (ret = mt_snapshot_init(&tr->snap, tr->skel)) != 0)
		ret = mt_fail("cannot open the snapshot journal: %s",
			      strerror(-ret));
	tr->snap_on = !ret;
	if (!ret && (ret = mt_session_prepare(&tr->s)) != 0)
		ret = mt_fail("cannot watch the target: %s", strerror(-ret));
	/* Recording has started: the timeline's times count from now.  Its
	 * failure (said, in tl.error) fails the run at its end. */
	if (!ret && mt_timeline_init(&tr->tl, tr->skel, o, tr->s.start) == 0 && tr->tl.on &&
	    (ret = mt_loop_add_timer(&tr->s.loop, o->timeline_interval,
				     o->timeline_interval, mt_timeline_timer,
				     &tr->tl)) != 0)
		ret = mt_fail("cannot sample the timeline: %s", strerror(-ret));
	return ret;
}

void mt_tracer_run(struct mt_tracer *tr)
{
	mt_session_run(&tr->s);
}

const struct mt_probes *mt_tracer_probes(struct mt_tracer *tr)
{
	const struct mt_probes *p = tr->t ? mt_family_probes(&tr->fam, (uint32_t)tr->t->pid)
					  : NULL;

	if (tr->stopped || tr->kind == MT_TRACER_SYSTEM)
		return NULL;
	return p ? p : &tr->probes;
}

/* Whether the list LIST ("a, b, c") holds the N bytes at ITEM. */
static bool listed(const char *list, const char *item, size_t n)
{
	while (*list) {
		size_t k = strcspn(list, ",");

		if (k == n && !strncmp(list, item, n))
			return true;
		list += k;
		list += strspn(list, ", ");
	}
	return false;
}

/* Add to tr->cxx the files whose new/delete each process of the family
 * has probed (those of processes gone were added as they went). */
static void family_cxx(struct mt_tracer *tr)
{
	for (size_t i = 0; i < tr->fam.n; i++) {
		const char *c = tr->fam.v[i].probes.cxx;

		while (*c) {
			size_t n = strcspn(c, ","), have = strlen(tr->cxx);

			if (!listed(tr->cxx, c, n))
				snprintf(tr->cxx + have, sizeof(tr->cxx) - have,
					 "%s%.*s", have ? ", " : "", (int)n, c);
			c += n;
			c += strspn(c, ", ");
		}
	}
}

/* Where new/delete are probed for the target (following, in any of its
 * processes). */
static const char *probed_cxx(struct mt_tracer *tr)
{
	const struct mt_probes *p = mt_tracer_probes(tr);

	if (tr->stopped)
		return tr->cxx;
	if (tr->kind == MT_TRACER_FAMILY) {
		family_cxx(tr);
		return tr->cxx;
	}
	return p ? p->cxx : tr->probes.cxx;
}

void mt_tracer_stop(struct mt_tracer *tr)
{
	const char *cxx;

	if (tr->stopped)
		return;
	/* The maps keep this instant, whatever the probes see while they
	 * are detached. */
	mt_collect_stop(tr->skel);
	mt_table_holds_free(&tr->holds); /* none is held any more */
	if (tr->s.stop == MT_STOP_ERROR)
		fprintf(stderr, "memtrace: stopped early, waiting failed: %s\n",
			strerror(tr->s.error));
	cxx = probed_cxx(tr);
	if (cxx != tr->cxx)
		snprintf(tr->cxx, sizeof(tr->cxx), "%s", cxx);
	if (mt_tracer_probes(tr))
		tr->nstepped = mt_probes_stepped(mt_tracer_probes(tr),
						 &tr->nprobed);
	mt_family_detach(&tr->fam); /* and no more probes for them */
	if (tr->kind != MT_TRACER_ONE) /* last mappings; harvest exits */
		mt_system_scan(&tr->sys, tr->skel, &tr->probes);
	/* The totals of that instant, at the end of the duration. */
	mt_timeline_finish(&tr->tl, tr->s.start + tr->s.elapsed);
	mt_probes_detach(&tr->probes);
	if (tr->cost_fd >= 0)
		mt_bpf_cost_say(tr->skel, stderr);
	tr->stopped = true;
}

/* Append copies (COPY) or the very stacks and blocks (else) of FROM to TO. */
static int append_raw(struct mt_raw_profile *to, struct mt_raw_profile *from,
		      bool copy)
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
	/* FROM's arrays are NULL while nothing has exited: memcpy's are not
	 * allowed to be, even for 0 bytes. */
	if (from->nstacks)
		memcpy(st + to->nstacks, from->stacks, from->nstacks * sizeof(*st));
	if (from->nblocks)
		memcpy(bl + to->nblocks, from->blocks, from->nblocks * sizeof(*bl));
	for (size_t i = 0; copy && i < from->nstacks; i++) {
		struct mt_raw_stack *s = &st[to->nstacks + i];
		uint64_t *ips = s->nips ? malloc(s->nips * sizeof(*ips)) : NULL;

		if (s->nips && !ips) {
			for (size_t j = 0; j < i; j++)
				free(st[to->nstacks + j].ips);
			return -ENOMEM;
		}
		if (ips)
			memcpy(ips, s->ips, s->nips * sizeof(*ips));
		s->ips = ips;
	}
	to->nstacks += from->nstacks;
	to->nblocks += from->nblocks;
	if (copy)
		return 0;
	free(from->stacks);
	free(from->blocks);
	from->stacks = NULL;
	from->blocks = NULL;
	from->nstacks = from->nblocks = 0;
	return 0;
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

static const char *comm_of_pid(void *arg, uint32_t pid)
{
	return family_comm(arg, (pid_t)pid, "?");
}

/* The header's target and allocator lines. */
static void describe(struct mt_tracer *tr, struct mt_summary *sum)
{
	const struct mt_target *t = tr->t;
	const char *cxx = probed_cxx(tr);

	if (tr->kind == MT_TRACER_SYSTEM) {
		snprintf(sum->target, sizeof(sum->target),
			 "system-wide, %zu processes", tr->sys.nprocs);
		snprintf(sum->allocator, sizeof(sum->allocator), "%s",
			 tr->sys.probed);
		return;
	}
	if (tr->kind == MT_TRACER_FAMILY && tr->sys.nprocs > 1)
		snprintf(sum->target, sizeof(sum->target),
			 "pid %d (%s) and %zu process%s it started", (int)t->pid,
			 family_comm(&tr->sys, t->pid, t->comm),
			 tr->sys.nprocs - 1, tr->sys.nprocs > 2 ? "es" : "");
	else if (tr->kind == MT_TRACER_FAMILY)
		snprintf(sum->target, sizeof(sum->target), "pid %d (%s)",
			 (int)t->pid, family_comm(&tr->sys, t->pid, t->comm));
	else
		snprintf(sum->target, sizeof(sum->target), "pid %d (%s)",
			 (int)t->pid, tr->proc.comm);
	if (tr->allocs.n) { /* what each exec'd image uses */
		char line[sizeof(sum->allocator) - 1100];

		const struct mt_object *ao = mt_allocator_object(&t->alloc, &t->objs);

		if (!mt_proc_allocs_of(&tr->allocs, (uint32_t)t->pid)) {
			snprintf(line, sizeof(line), "%s %s", t->alloc.kind,
				 mt_target_alloc_name(t));
			(void)mt_proc_allocs_set(&tr->allocs, (uint32_t)t->pid,
						 ao ? ao->dev : 0, ao ? ao->ino : 0,
						 line);
		}
		mt_proc_allocs_line(&tr->allocs, (uint32_t)t->pid, comm_of_pid,
				    &tr->sys, line, sizeof(line));
		snprintf(sum->allocator, sizeof(sum->allocator), "%s%s%s",
			 line, cxx[0] ? "; C++ new/delete in " : "", cxx);
	} else
		snprintf(sum->allocator, sizeof(sum->allocator), "%s %s%s%s",
			 t->alloc.kind, mt_target_alloc_name(t),
			 cxx[0] ? "; C++ new/delete in " : "", cxx);
	if (!tr->stopped && mt_tracer_probes(tr))
		tr->nstepped = mt_probes_stepped(mt_tracer_probes(tr),
						 &tr->nprobed);
	sum->probes = (uint32_t)tr->nprobed;
	sum->probes_stepped = (uint32_t)tr->nstepped;
}

/* Following, once the probes are gone: the command's own mappings, and
 * those a process had from its parent until its exec. */
static int family_mappings(struct mt_tracer *tr)
{
	int ret = 0;

	if (tr->stopped && tr->proc.nmods)
		ret = mt_system_adopt(&tr->sys, &tr->proc);
	if (!ret)
		ret = mt_system_inherit(&tr->sys, tr->skel);
	return ret;
}

/* The name process PID has now, for -v (NULL: not known). */
static const char *name_of_pid(void *arg, uint32_t pid)
{
	struct mt_tracer *tr = arg;

	if (tr->kind == MT_TRACER_ONE)
		return pid == tr->proc.pid ? tr->proc.comm : NULL;
	for (size_t i = tr->sys.nprocs; i-- > 0;)
		if (tr->sys.procs[i].pid == pid)
			return tr->sys.procs[i].comm;
	return NULL;
}

int mt_tracer_collect(struct mt_tracer *tr, struct mt_raw_profile *raw)
{
	bool live = !tr->stopped;
	double now = mt_loop_now();
	uint64_t segs = 0, unreached = 0;
	int ret;

	/* The stacks copied for the loader to unwind: unwound now, those
	 * whose tables are there (all of them at the end). */
	if (tr->uw_on)
		mt_unwinder_poll(&tr->uw);
	mt_deferred_unwind_poll(!live);
	ret = live ? mt_snapshot_take(&tr->snap, tr->skel, raw)
		   : mt_collect(tr->skel, raw);

	/* What exited processes left: copied while tracing, moved at the end. */
	if (!ret && tr->kind != MT_TRACER_ONE)
		ret = append_raw(raw, &tr->sys.dead, live);
	if (!ret && tr->kind == MT_TRACER_FAMILY)
		ret = family_mappings(tr);
	if (!ret && !live && tr->o->verbose && tr->uw_on)
		mt_deferred_unwind_segments(raw, &segs, &unreached);
	if (!ret)
		ret = mt_deferred_unwind_apply(raw);
	if (ret)
		return ret;
	if (!live && tr->o->verbose && tr->uw_on) {
		uint64_t done, waiting, cut;

		mt_deferred_unwind_stats(&done, &waiting, &cut);
		fprintf(stderr, "memtrace: deferred stacks: %" PRIu64 " copies, %" PRIu64 " unwound (%" PRIu64 " cut short), %" PRIu64 " never unwound, %" PRIu64 " lost; read ahead of the loader: %" PRIu64 " KiB at most\n",
			raw->sum.counters[MT_CNT_DEFER_COPIES], done, cut,
			waiting, raw->sum.counters[MT_CNT_DEFER_LOST],
			mt_deferred_unwind_queued_most() >> 10);
		if (tr->kind == MT_TRACER_SYSTEM)
			fprintf(stderr, "memtrace: registry: %zu process images, %zu files open (%" PRIu64 " opened in all); %" PRIu64 " images dropped at exit, %" PRIu64 " files closed; dlopens told by ld.so's hook (in %zu files): %" PRIu64 "; scans of /proc: %" PRIu64 " (%.1f ms each), finds no event had told of: %" PRIu64 "; mappings left out for want of a descriptor: %" PRIu64 "\n",
				tr->images.nprocs, tr->images.nfiles,
				tr->images.opened, tr->images.dropped,
				tr->images.closed, tr->sys.dl_hooks,
				tr->sys.dlopens, tr->sys.scans,
				tr->sys.scans ? tr->sys.scan_ns / 1e6 / (double)tr->sys.scans : 0.0,
				tr->sys.scan_finds, tr->images.no_fd);
		mt_kvmas_stats(&done, &waiting);
		if (done)
			fprintf(stderr, "memtrace: files the kernel named (mappings of processes that may be gone): %" PRIu64 ", %" PRIu64 " could not be opened; processes whose mappings are kept: %zu\n",
				done, waiting, mt_kvmas_nprocs());
		mt_deferred_unwind_depth(&done, &waiting, &cut);
		if (done)
			fprintf(stderr, "memtrace: deferred stacks unwound whole from their first frame: %" PRIu64 ", %" PRIu64 " bytes deep on average, %" PRIu64 " at most\n",
				done, waiting, cut);
		fprintf(stderr, "memtrace: stack segments in the map: %" PRIu64 ", %" PRIu64 " reached by no stack\n",
			segs, unreached);
	}
	if (!live && tr->o->verbose && tr->uw_on) {
		size_t n;
		struct mt_trunc_count *cuts = mt_deferred_unwind_cuts(&n);

		mt_trunc_procs_say(tr->skel, cuts, n, name_of_pid, tr, stderr);
		free(cuts);
	}
	mt_collect_count_frees(raw);
	if (tr->kind == MT_TRACER_ONE) {
		/* The name it has now, if it exec'd. */
		mt_follow_comm(tr->skel, tr->proc.pid, tr->proc.comm,
			       sizeof(tr->proc.comm));
		raw->procs = &tr->proc;
		raw->nprocs = 1;
	} else {
		/* Processes gone before /proc could be read (or read
		 * again after a dlopen): their mappings as the kernel
		 * told them. */
		for (size_t i = 0; i < tr->sys.nprocs; i++)
			mt_kvmas_modules(&tr->sys.procs[i]);
		raw->procs = tr->sys.procs;
		raw->nprocs = tr->sys.nprocs;
	}
	describe(tr, &raw->sum);
	raw->sum.duration_s = live ? now - tr->s.start : tr->s.elapsed;
	raw->sum.stop_ns = live ? (uint64_t)(now * 1e9) : tr->s.stop_ns;
	raw->sum.mmap_traced = tr->o->mmap;
	raw->sum.sample_bytes = tr->o->sample_bytes;
	mt_timeline_names(&tr->tl, raw->procs, raw->nprocs);
	mt_timeline_summary(&tr->tl, &raw->sum);
	return 0;
}

void mt_tracer_procs(struct mt_tracer *tr, struct mt_process **procs,
		     size_t *n)
{
	if (tr->kind == MT_TRACER_ONE) {
		*procs = &tr->proc;
		*n = 1;
	} else {
		*procs = tr->sys.procs;
		*n = tr->sys.nprocs;
	}
}

void mt_tracer_free(struct mt_tracer *tr)
{
	mt_table_holds_free(&tr->holds);
	mt_probes_detach(&tr->probes);
	mt_standby_free(&tr->standby);
	mt_family_free(&tr->fam);
	/* Before the unwinder and the maps: its reader thread uses both. */
	mt_deferred_unwind_free();
	mt_trunc_procs_free();
	if (tr->uw_on)
		mt_unwinder_free(&tr->uw);
	if (tr->skel)
		memleak_bpf__destroy(tr->skel);
	mt_collect_forget_stacks();
	if (tr->snap_on)
		mt_snapshot_free(&tr->snap);
	mt_timeline_free(&tr->tl);
	tr->snap_on = false;
	mt_process_free_mods(&tr->proc);
	mt_system_free(&tr->sys);
	mt_libs_cache_free(&tr->libs);
	mt_proc_allocs_free(&tr->allocs);
	mt_images_free(&tr->images);
	mt_bpf_cost_end(tr->cost_fd);
	tr->cost_fd = -1;
	tr->skel = NULL;
	tr->uw_on = false;
}
