// SPDX-License-Identifier: MIT
/* standby_probes.c: probes on installed allocators no process maps yet. */
#include "standby_probes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "installed_allocators.h"

static int add(struct mt_standby *sb, const struct mt_object *o, bool cxx)
{
	size_t n = sb->files.n;
	bool *c = realloc(sb->cxx, (n + 1) * sizeof(*c)), *m;

	if (!c)
		return -ENOMEM;
	sb->cxx = c;
	m = realloc(sb->named, (n + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	sb->named = m;
	if (mt_objects_add(&sb->files, o))
		return -ENOMEM;
	c[n] = cxx;
	m[n] = false;
	return 0;
}

int mt_standby_probe(struct mt_standby *sb, struct mt_probes *p,
		     struct memleak_bpf *skel, const char *prefix,
		     const struct mt_objects *skip, bool libc_family)
{
	struct mt_objects objs;
	int ret;

	/* With a perf event per probe (no uprobe_multi), each costs the
	 * kernel a grace period to detach: some 200 of them made a 1.5 s
	 * trace end 35 s later.  Not probed ahead then. */
	if (p->mode == MT_LINK_PERF)
		return 0;
	ret = mt_installed_allocators(NULL, &objs);

	for (size_t i = 0; i < objs.n && ret == 0; i++) {
		const struct mt_object *o = &objs.v[i];
		const char *fam = mt_allocator_family(mt_object_name(o));
		bool cxx;

		if (mt_objects_has(skip, o) || mt_standby_has(sb, o))
			continue;
		ret = mt_probes_attach_standby(p, skel, o,
					       fam && (libc_family ||
						       strcmp(fam, "glibc") != 0),
					       prefix, &cxx);
		if (ret == -EOPNOTSUPP || ret == -ENOMEM)
			break;
		/* Not probed (nothing there, or it failed): left to the
		 * look at a process that maps it. */
		ret = ret ? 0 : add(sb, o, cxx);
	}
	mt_objects_free(&objs);
	return ret;
}

bool mt_standby_has(const struct mt_standby *sb, const struct mt_object *o)
{
	return mt_objects_has(&sb->files, o);
}

const struct mt_object *mt_standby_mapped(struct mt_standby *sb,
					  struct mt_probes *p, dev_t dev,
					  ino_t ino, const char *path)
{
	for (size_t i = 0; i < sb->files.n; i++) {
		const struct mt_object *o = &sb->files.v[i];

		if (sb->named[i] ||
		    (dev ? o->dev != dev || o->ino != ino
			 : strcmp(o->path, path) != 0))
			continue;
		sb->named[i] = true;
		if (sb->cxx[i])
			mt_probes_note_cxx(p, o);
		return o;
	}
	return NULL;
}

void mt_standby_free(struct mt_standby *sb)
{
	mt_objects_free(&sb->files);
	free(sb->cxx);
	free(sb->named);
	memset(sb, 0, sizeof(*sb));
}
