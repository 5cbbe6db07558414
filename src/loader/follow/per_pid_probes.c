// SPDX-License-Identifier: MIT
/* per_pid_probes.c: each followed process's own probes (see per_pid_probes.h). */
#include "per_pid_probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "fd_limit.h"

int mt_family_init(struct mt_family *f, const char *allocator,
		   const char *prefix)
{
	memset(f, 0, sizeof(*f));
	f->allocator = allocator;
	f->prefix = prefix;
	/* A few links per process: many processes at once need many files
	 * (CMD was started already, with the limit it had). */
	mt_fd_limit_raise();
	return mt_detacher_start(&f->exited);
}

static struct mt_family_member *find(struct mt_family *f, uint32_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].pid == pid)
			return &f->v[i];
	return NULL;
}

/* A new member PID, with no probes and no files; NULL without memory. */
static struct mt_family_member *add(struct mt_family *f, uint32_t pid)
{
	struct mt_family_member *nv = realloc(f->v, (f->n + 1) * sizeof(*nv));

	if (!nv)
		return NULL;
	f->v = nv;
	memset(&nv[f->n], 0, sizeof(*nv));
	nv[f->n].pid = pid;
	return &nv[f->n++];
}

/* A copy of FROM into TO (empty).  Returns 0 or -ENOMEM. */
static int copy_files(struct mt_objects *to, const struct mt_objects *from)
{
	for (size_t i = 0; i < from->n; i++)
		if (mt_objects_add(to, &from->v[i]))
			return -ENOMEM;
	to->has_exe = from->has_exe;
	return 0;
}

int mt_family_adopt(struct mt_family *f, uint32_t pid,
		    struct mt_probes *probes, const struct mt_objects *files)
{
	struct mt_family_member *m = add(f, pid);

	if (!m)
		return -ENOMEM;
	mt_probes_move(&m->probes, probes);
	m->probes.cache = &f->plans;
	return copy_files(&m->files, files);
}

int mt_family_fork(struct mt_family *f, struct memleak_bpf *skel,
		   uint32_t pid, uint32_t parent)
{
	struct mt_family_member *from = find(f, parent), *m;
	size_t at;
	int ret;

	if (f->detached || !from || find(f, pid))
		return 0;
	at = (size_t)(from - f->v);
	m = add(f, pid); /* may move the array */
	if (!m)
		return -ENOMEM;
	from = &f->v[at];
	ret = mt_probes_attach_like(&m->probes, skel, (pid_t)pid, &from->probes);
	if (!ret)
		ret = copy_files(&m->files, &from->files);
	return ret;
}

int mt_family_exec(struct mt_family *f, struct memleak_bpf *skel,
		   uint32_t pid, const struct mt_objects *files, bool same_task,
		   bool loading)
{
	struct mt_family_member *m = find(f, pid);
	struct mt_allocator alloc;
	struct mt_probes gone;
	enum mt_link_mode mode;
	bool mmap;
	int ret;

	if (f->detached || !m)
		return 0;
	mode = m->probes.mode;
	mmap = m->probes.want_mmap;
	mt_objects_free(&m->files);
	ret = copy_files(&m->files, files);
	/* The allocator asked for, else (a program without it) the usual;
	 * none yet while ld.so loads the image (its hook alone is probed). */
	if (ret == 0 &&
	    mt_allocator_choose(files, f->allocator, f->prefix, &alloc) &&
	    mt_allocator_choose(files, NULL, f->prefix, &alloc)) {
		if (loading)
			alloc = (struct mt_allocator){ (size_t)-1, "none" };
		else
			ret = -ENOENT;
	}
	/* Its links follow the process into its new image: those of the
	 * files it maps still (its libc) stay, no function is probed twice,
	 * and those of the files it left go in the detacher's thread. */
	if (ret == 0) {
		ret = mt_probes_exec(&m->probes, skel, &alloc, f->prefix, files,
				     same_task, &gone);
		mt_detacher_put(&f->exited, &gone);
	}
	if (ret) {
		mt_probes_detach(&m->probes);
		mt_probes_init(&m->probes, (pid_t)pid, mode, mmap);
		m->probes.cache = &f->plans;
	}
	return ret;
}

void mt_family_update(struct mt_family *f, struct memleak_bpf *skel,
		      uint32_t pid, const struct mt_objects *files)
{
	struct mt_family_member *m = f->detached ? NULL : find(f, pid);

	for (size_t i = 0; m && i < files->n; i++) {
		const struct mt_object *o = &files->v[i];
		const char *fam;

		if (mt_objects_has(&m->files, o) || mt_objects_add(&m->files, o))
			continue;
		/* Links of its former image may wait in the detacher: gone
		 * first, so that no function is probed twice. */
		mt_detacher_drain(&f->exited);
		/* A jemalloc or tcmalloc loaded later: its malloc family too. */
		fam = mt_allocator_family(mt_object_name(o));
		if (mt_probes_attach_object(&m->probes, skel, o,
					    fam && strcmp(fam, "glibc") != 0,
					    f->prefix))
			fprintf(stderr, "memtrace: cannot probe %s in pid %u: new/delete there are not traced\n",
				o->shown, pid);
	}
}

const struct mt_probes *mt_family_probes(struct mt_family *f, uint32_t pid)
{
	struct mt_family_member *m = find(f, pid);

	return m ? &m->probes : NULL;
}

void mt_family_release(struct mt_family *f, uint32_t pid)
{
	struct mt_family_member *m = find(f, pid);

	if (!m)
		return;
	mt_detacher_put(&f->exited, &m->probes);
	mt_objects_free(&m->files);
	*m = f->v[--f->n];
}

void mt_family_detach(struct mt_family *f)
{
	for (size_t i = 0; i < f->n; i++)
		mt_probes_detach(&f->v[i].probes);
	f->detached = true;
}

void mt_family_free(struct mt_family *f)
{
	for (size_t i = 0; i < f->n; i++) {
		mt_probes_detach(&f->v[i].probes);
		mt_objects_free(&f->v[i].files);
	}
	mt_detacher_stop(&f->exited);
	mt_plan_cache_free(&f->plans);
	free(f->v);
	memset(f, 0, sizeof(*f));
}
