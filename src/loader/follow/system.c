// SPDX-License-Identifier: MIT
/* system.c: scanning /proc for allocators and the processes that use them. */
#include "system.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "allocator.h"
#include "collect.h"
#include "elf_syms.h"
#include "per_pid_probes.h"
#include "follow.h"
#include "standby_probes.h"
#include "trunc_procs.h"
#include "memleak.skel.h"
#include "images.h"
#include "mapping_capture.h"
#include "proc_state.h"
#include "loop.h"
#include "vma_files.h"

#define SCAN_INTERVAL_NS 1000000000ULL
/* Processes looked at between two calls of sys->between. */
#define SCAN_SLICE 8

static bool name_starts(const struct mt_object *o, const char *prefix)
{
	return strncmp(mt_object_name(o), prefix, strlen(prefix)) == 0;
}

/* Does O hold an allocator (its malloc family) or C++ new/delete? */
static bool is_allocator(const struct mt_object *o, bool exe, bool *family,
			 const char *prefix)
{
	char name[64];
	uint64_t off;

	*family = mt_allocator_family(mt_object_name(o)) != NULL;
	if (*family)
		return true;
	snprintf(name, sizeof(name), "%smalloc", prefix);
	if (exe && mt_elf_func_offset(o->path, name, &off) == 0) {
		*family = true; /* a static executable, or its own allocator */
		return true;
	}
	return name_starts(o, "libstdc++");
}

static void note_probed(struct mt_system *sys, const struct mt_object *o)
{
	size_t len = strlen(sys->probed);

	snprintf(sys->probed + len, sizeof(sys->probed) - len, "%s%s",
		 len ? ", " : "", o->shown);
	sys->nprobed++;
}

/*
 * A process maps the file DEV/INO (or, DEV 0, PATH): if it was probed on
 * standby (mt_system_probe_installed), it is named now.
 */
static void note_standby(struct mt_system *sys, dev_t dev, ino_t ino,
			 const char *path)
{
	const struct mt_object *o;

	if (!sys->standby.files.n)
		return;
	o = mt_standby_mapped(&sys->standby, sys->standby_probes, dev, ino, path);
	if (o)
		note_probed(sys, o);
}

/* The standby files that process P maps, named (note_standby). */
static void note_standby_of(struct mt_system *sys, const struct mt_process *p)
{
	for (size_t k = 0; k < p->nmods && sys->standby.files.n; k++)
		note_standby(sys, 0, 0, p->mods[k].path);
}

/*
 * A scan found what no event had told of (mt_system.scan_finds): counted,
 * and said with -v.
 */
static void scan_found(struct mt_system *sys, uint32_t pid, const char *what,
		       const char *path)
{
	char comm[16] = "?";

	sys->scan_finds++;
	if (!sys->verbose)
		return;
	mt_proc_comm((pid_t)pid, comm, sizeof(comm));
	fprintf(stderr, "memtrace: the scan found pid %u (%s): %s %s, which no event had told of\n",
		pid, comm, what, path);
}

/* Probe the new allocator files among OBJS; *USES: one of OBJS is probed.
 * SCAN: looked at by a scan after the first, for PID. */
static int probe_new_files(struct mt_system *sys, struct memleak_bpf *skel,
			   struct mt_probes *probes,
			   const struct mt_objects *objs, bool *uses,
			   bool scan, uint32_t pid)
{
	*uses = false;
	for (size_t i = 0; i < objs->n; i++) {
		const struct mt_object *o = &objs->v[i];
		struct mt_object mark = *o;
		bool family, probe;
		int ret;

		if (mt_objects_has(&sys->seen, o)) {
			note_standby(sys, o->dev, o->ino, NULL);
			continue;
		}
		probe = is_allocator(o, objs->has_exe && i == 0, &family,
				     sys->prefix);
		/* ld.so: its hook tells of every dlopen (not named: it
		 * allocates nothing of the program's). */
		if (!probe && !sys->family) {
			ret = mt_probes_attach_dl_hook(probes, skel, o);
			if (ret == -EOPNOTSUPP)
				return ret;
			if (ret == 0)
				sys->dl_hooks++;
			else if (ret != -EINVAL && sys->verbose)
				fprintf(stderr, "memtrace: no dlopen events from %s: %s\n",
					o->shown, strerror(-ret));
		}
		if (probe) {
			ret = mt_probes_attach_object(probes, skel, o, family,
						      sys->prefix);
			if (ret == -EOPNOTSUPP)
				return ret;
			if (ret)
				fprintf(stderr, "memtrace: cannot probe %s: %s\n",
					o->shown, strerror(-ret));
			else
				note_probed(sys, o);
			probe = ret == 0;
			if (probe && scan)
				scan_found(sys, pid, "allocator file", o->shown);
		}
		/* Remembered either way; an empty name marks "not probed". */
		if (!probe)
			mark.shown = (char *)"";
		if (mt_objects_add(&sys->seen, &mark))
			return -ENOMEM;
	}
	for (size_t i = 0; i < objs->n && !*uses; i++)
		for (size_t k = 0; k < sys->seen.n && !*uses; k++)
			*uses = sys->seen.v[k].dev == objs->v[i].dev &&
				sys->seen.v[k].ino == objs->v[i].ino &&
				sys->seen.v[k].shown[0];
	return 0;
}

static ssize_t find_proc(const struct mt_system *sys, uint32_t pid)
{
	for (size_t i = 0; i < sys->nprocs; i++)
		if (sys->procs[i].pid == pid && !sys->gone[i])
			return (ssize_t)i;
	return -1;
}

static int add_proc(struct mt_system *sys, uint32_t pid)
{
	struct mt_process *np = realloc(sys->procs, (sys->nprocs + 1) * sizeof(*np));
	bool *ng;

	if (!np)
		return -ENOMEM;
	sys->procs = np;
	ng = realloc(sys->gone, (sys->nprocs + 1) * sizeof(*ng));
	if (!ng)
		return -ENOMEM;
	sys->gone = ng;
	ng = realloc(sys->alive, (sys->nprocs + 1) * sizeof(*ng));
	if (!ng)
		return -ENOMEM;
	sys->alive = ng;
	ng[sys->nprocs] = false;
	memset(&np[sys->nprocs], 0, sizeof(*np));
	np[sys->nprocs].pid = pid;
	sys->gone[sys->nprocs] = false;
	mt_proc_comm((pid_t)pid, np[sys->nprocs].comm, sizeof(np->comm));
	sys->nprocs++;
	return 0;
}

/* Take the name the BPF program knows process I by (it follows exec). */
static void sync_comm(struct mt_system *sys, struct memleak_bpf *skel,
		      size_t i)
{
	if (skel)
		mt_follow_comm(skel, sys->procs[i].pid, sys->procs[i].comm,
			       sizeof(sys->procs[i].comm));
}

/*
 * Processes that allocated but were never seen in /proc (they lived less
 * than a scan): known by the name the BPF program kept, without mappings.
 * FD is the map of names (comms), or of the processes that exec'd.
 */
static int add_unseen(struct mt_system *sys, struct memleak_bpf *skel, int fd)
{
	uint32_t key, next, *prev = NULL;
	int ret = 0;

	while (ret == 0 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		size_t i = sys->nprocs;

		key = next;
		prev = &key;
		if (find_proc(sys, key) >= 0)
			continue;
		ret = add_proc(sys, key);
		if (ret == 0) {
			sync_comm(sys, skel, i);
			sys->alive[i] = kill((pid_t)key, 0) == 0 || errno != ESRCH;
			if (sys->alive[i]) {
				mt_images_refresh_modules(sys->images, skel,
							  &sys->procs[i], false);
				note_standby_of(sys, &sys->procs[i]);
			}
		}
	}
	return ret;
}

/* Move what the processes that exited left in the maps into sys->dead. */
static int harvest(struct mt_system *sys, struct memleak_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.comms);
	uint32_t *pids;
	size_t n = 0;
	int ret = add_unseen(sys, skel, fd);

	if (!ret)
		ret = add_unseen(sys, skel, bpf_map__fd(skel->maps.execs));
	pids = malloc((sys->nprocs ? sys->nprocs : 1) * sizeof(*pids));
	if (ret || !pids) {
		free(pids);
		return ret ? ret : -ENOMEM;
	}
	for (size_t i = 0; i < sys->nprocs; i++) {
		sync_comm(sys, skel, i);
		if (!sys->gone[i] && !sys->alive[i])
			pids[n++] = sys->procs[i].pid;
	}
	ret = mt_collect_remove(skel, pids, n, &sys->dead);
	/* Only what was collected is forgotten: after a failure, the next
	 * scan tries again. */
	for (size_t i = 0; i < sys->nprocs && ret == 0; i++) {
		if (!sys->gone[i] && !sys->alive[i]) {
			sys->gone[i] = true;
			bpf_map_delete_elem(fd, &sys->procs[i].pid);
			mt_trunc_procs_harvest(skel, sys->procs[i].pid);
			if (sys->on_harvested)
				sys->on_harvested(sys->harvest_ctx,
						  &sys->procs[i]);
		}
	}
	free(pids);
	return ret;
}

/* Is PID one of the processes looked at? */
static bool followed(const struct mt_system *sys, struct memleak_bpf *skel,
		     uint32_t pid)
{
	struct mt_follow v; /* the map's whole value: the kernel writes it */

	return !sys->family ||
	       bpf_map_lookup_elem(bpf_map__fd(skel->maps.followed), &pid, &v) == 0;
}

/* Has process PID allocated since it started, or exec'd (an event told
 * of it)? */
static bool told(struct memleak_bpf *skel, uint32_t pid)
{
	struct mt_comm c;

	return skel &&
	       bpf_map_lookup_elem(bpf_map__fd(skel->maps.comms), &pid, &c) == 0;
}

/*
 * Process PID now: probe the allocator files it maps that are new, and
 * (when it uses one, or following) keep its mappings.  SCAN: by a scan
 * after the first (what it finds, events missed).  0, or -errno when
 * probing failed.
 */
static int look_at(struct mt_system *sys, struct memleak_bpf *skel,
		   struct mt_probes *probes, uint32_t pid, bool scan)
{
	const struct mt_image *img = NULL;
	struct mt_objects objs;
	bool uses = false;
	ssize_t i;
	int ret = 0;

	if (pid == (uint32_t)getpid() || !followed(sys, skel, pid))
		return 0; /* memtrace */
	/* Read once, for its probes and its mappings. */
	if (sys->images &&
	    (!(img = mt_images_read_task(sys->images, skel, (pid_t)pid)) ||
	     mt_objects_of_image((pid_t)pid, img, &objs)))
		return 0; /* gone */
	if (!img && mt_objects_of_pid((pid_t)pid, &objs))
		return 0; /* gone */
	scan = scan && !sys->family;
	/* Files mapped since an event had this process read: an mmap of
	 * code without dlopen, or an exec whose first allocation's event
	 * was lost. */
	if (img && scan && sys->images->grew && told(skel, pid))
		for (size_t k = 0; k < sys->images->grew; k++)
			scan_found(sys, pid, "newly mapped",
				   k < MT_IMAGES_GREW_MAX
					   ? sys->images->grew_files[k]->path
					   : "(and more)");
	if (sys->family)
		mt_family_update(sys->family, skel, pid, &objs);
	else
		ret = probe_new_files(sys, skel, probes, &objs, &uses, scan,
				      pid);
	mt_objects_free(&objs);
	if (ret || !(sys->family || uses))
		return ret;
	i = find_proc(sys, pid);
	if (i < 0) {
		ret = add_proc(sys, pid);
		i = (ssize_t)sys->nprocs - 1;
	}
	if (ret == 0) {
		if (img)
			mt_modules_from_image(&sys->procs[i], img, false);
		else
			mt_modules_refresh(&sys->procs[i], false);
		sys->alive[i] = true;
	}
	return ret;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* System-wide: the images of processes this scan did not find (LIVE,
 * NLIVE of them: every process of /proc) go, and the files only they
 * mapped are closed. */
static void drop_exited(struct mt_system *sys, uint32_t *live, size_t nlive)
{
	if (sys->family || !sys->images || !live)
		return;
	qsort(live, nlive, sizeof(*live), cmp_pid);
	mt_images_keep_only(sys->images, live, nlive);
}

int mt_system_scan(struct mt_system *sys, struct memleak_bpf *skel,
		   struct mt_probes *probes)
{
	DIR *d = opendir("/proc");
	bool later = sys->scans > 0;
	uint32_t *live = NULL;
	size_t nlive = 0, cap = 0;
	struct dirent *e;
	size_t n = 0;
	int ret = 0;

	sys->last_scan_ns = mt_loop_now_ns();
	if (!d)
		return -errno;
	sys->scans++;
	for (size_t i = 0; i < sys->nprocs; i++)
		sys->alive[i] = false;
	while (ret == 0 && (e = readdir(d)) != NULL) {
		char *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);

		if (*end || pid == 0)
			continue; /* not a process */
		if (nlive == cap) {
			uint32_t *nv = realloc(live, (cap ? cap * 2 : 512) *
						     sizeof(*nv));

			if (!nv) {
				free(live);
				live = NULL; /* none dropped this time */
				cap = SIZE_MAX;
			} else {
				live = nv;
				cap = cap ? cap * 2 : 512;
			}
		}
		if (live)
			live[nlive++] = (uint32_t)pid;
		ret = look_at(sys, skel, probes, (uint32_t)pid, later);
		if (sys->between && ++n % SCAN_SLICE == 0)
			sys->between(sys->between_ctx);
	}
	closedir(d);
	if (ret == 0)
		drop_exited(sys, live, nlive);
	free(live);
	sys->scan_ns += mt_loop_now_ns() - sys->last_scan_ns;
	return ret ? ret : harvest(sys, skel);
}

int mt_system_probe_installed(struct mt_system *sys, struct memleak_bpf *skel,
			      struct mt_probes *probes)
{
	size_t before = sys->standby.files.n;
	int ret;

	sys->standby_probes = probes;
	ret = mt_standby_probe(&sys->standby, probes, skel, sys->prefix,
			       &sys->seen, true);
	/* Seen: a scan does not probe them again. */
	for (size_t i = before; i < sys->standby.files.n && ret == 0; i++)
		ret = mt_objects_add(&sys->seen, &sys->standby.files.v[i]);
	return ret;
}

int mt_system_look_at(struct mt_system *sys, struct memleak_bpf *skel,
		      struct mt_probes *probes, uint32_t pid)
{
	/* The hook runs as a program loads too: its first allocation's
	 * event reads it then. */
	if (!sys->family && !told(skel, pid))
		return 0;
	sys->dlopens++;
	return look_at(sys, skel, probes, pid, false);
}

static int on_new_pid(void *ctx, void *data, size_t size)
{
	struct mt_system *sys = ctx;
	uint32_t pid;
	ssize_t i;

	if (size < sizeof(pid))
		return 0;
	memcpy(&pid, data, sizeof(pid));
	i = find_proc(sys, pid);
	if (i < 0) {
		if (add_proc(sys, pid))
			return 0;
		i = (ssize_t)sys->nprocs - 1;
	}
	mt_images_refresh_modules(sys->images, sys->skel, &sys->procs[i], false);
	note_standby_of(sys, &sys->procs[i]);
	sync_comm(sys, sys->skel, (size_t)i); /* new, or it exec'd */
	sys->alive[i] = true;
	return 0;
}

/* PID's entry (added if new), or -1. */
static ssize_t proc_of(struct mt_system *sys, uint32_t pid)
{
	ssize_t i = find_proc(sys, pid);

	if (i < 0) {
		if (add_proc(sys, pid))
			return -1;
		i = (ssize_t)sys->nprocs - 1;
	}
	sys->alive[i] = true;
	return i;
}

void mt_system_read_image(struct mt_system *sys, uint32_t pid,
			  const struct mt_image *img)
{
	ssize_t i = proc_of(sys, pid);

	if (i >= 0) {
		mt_modules_from_image(&sys->procs[i], img, false);
		note_standby_of(sys, &sys->procs[i]);
	}
}

int mt_system_wake_fd(struct mt_system *sys, struct memleak_bpf *skel)
{
	sys->skel = skel;
	sys->new_pids = ring_buffer__new(bpf_map__fd(skel->maps.new_pids),
					 on_new_pid, sys, NULL);
	if (!sys->new_pids)
		return -errno;
	return ring_buffer__epoll_fd(sys->new_pids);
}

void mt_system_tick(struct mt_system *sys, struct memleak_bpf *skel,
		    struct mt_probes *probes)
{
	if (sys->new_pids)
		ring_buffer__consume(sys->new_pids);
	if (mt_loop_now_ns() - sys->last_scan_ns >= SCAN_INTERVAL_NS)
		mt_system_scan(sys, skel, probes);
}

int mt_system_adopt(struct mt_system *sys, struct mt_process *proc)
{
	struct mt_process *p = NULL;
	int ret;

	for (size_t i = sys->nprocs; i-- > 0 && !p;)
		if (sys->procs[i].pid == proc->pid)
			p = &sys->procs[i];
	if (!p) {
		ret = add_proc(sys, proc->pid);
		if (ret)
			return ret;
		p = &sys->procs[sys->nprocs - 1];
		snprintf(p->comm, sizeof(p->comm), "%s", proc->comm);
	}
	mt_process_free_mods(p);
	p->mods = proc->mods;
	p->nmods = proc->nmods;
	proc->mods = NULL;
	proc->nmods = 0;
	return 0;
}

/* The last entry of process PID, or NULL. */
static struct mt_process *last_of(struct mt_system *sys, uint32_t pid)
{
	for (size_t i = sys->nprocs; i-- > 0;)
		if (sys->procs[i].pid == pid)
			return &sys->procs[i];
	return NULL;
}

/* Does module M overlap one of P's? */
static bool overlaps(const struct mt_process *p, const struct mt_module *m)
{
	for (size_t i = 0; i < p->nmods; i++)
		if (m->start < p->mods[i].end && p->mods[i].start < m->end)
			return true;
	return false;
}

/* Add to TO FROM's mappings that overlap none of TO's. */
static int merge_mods(struct mt_process *to, const struct mt_process *from)
{
	struct mt_module *nv = realloc(to->mods, (to->nmods + from->nmods) *
					       sizeof(*nv));
	size_t own = to->nmods;

	if (!nv)
		return -ENOMEM;
	to->mods = nv;
	for (size_t m = 0; m < from->nmods; m++) {
		struct mt_module d = from->mods[m];
		struct mt_process mine = { .mods = to->mods, .nmods = own };

		if (overlaps(&mine, &d))
			continue;
		d.path = strdup(d.path);
		if (!d.path)
			return -ENOMEM;
		d.fd = d.fd >= 0 ? dup(d.fd) : -1;
		to->mods[to->nmods++] = d;
	}
	return 0;
}

int mt_system_inherit(struct mt_system *sys, struct memleak_bpf *skel)
{
	int ret = 0;

	for (size_t i = 0; i < sys->nprocs && ret == 0; i++) {
		struct mt_process *p = &sys->procs[i], *from = NULL;
		uint32_t pid = p->pid, parent;

		/* Up the line of forks, to the first process whose mappings
		 * were read (bounded: a fork cannot make a cycle, but pids
		 * are reused). */
		for (int up = 0; up < 64 && !from &&
				 mt_follow_parent(skel, pid, &parent); up++) {
			from = last_of(sys, parent);
			if (from && !from->nmods)
				from = NULL;
			pid = parent;
		}
		if (from)
			ret = merge_mods(p, from);
	}
	return ret;
}

void mt_system_free(struct mt_system *sys)
{
	for (size_t i = 0; i < sys->nprocs; i++)
		mt_process_free_mods(&sys->procs[i]);
	free(sys->procs);
	if (sys->new_pids)
		ring_buffer__free(sys->new_pids);
	free(sys->gone);
	free(sys->alive);
	mt_objects_free(&sys->seen);
	mt_standby_free(&sys->standby);
	mt_raw_profile_free(&sys->dead);
	memset(sys, 0, sizeof(*sys));
}
