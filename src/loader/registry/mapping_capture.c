// SPDX-License-Identifier: MIT
/* mapping_capture.c: executable file mappings of a process, captured while it runs. */
#include "mapping_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_id.h"
#include "elf_syms.h"
#include "images.h"
#include "proc_maps.h"

static bool known(const struct mt_process *proc, const char *path,
		  uint64_t start)
{
	for (size_t i = 0; i < proc->nmods; i++)
		if (proc->mods[i].start == start &&
		    strcmp(proc->mods[i].path, path) == 0)
			return true;
	return false;
}

/* Open the mapped file itself: map_files survives deletion and containers. */
static int open_mapped(pid_t pid, const struct mt_mapping *m)
{
	char name[4200];
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/map_files/%lx-%lx", (int)pid,
		 (unsigned long)m->start, (unsigned long)m->end);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(name, sizeof(name), "/proc/%d/root%s", (int)pid, m->path);
	return open(name, O_RDONLY | O_CLOEXEC);
}

static int add_module(struct mt_process *proc, const struct mt_maps *maps,
		      size_t first, bool keep_fd)
{
	const struct mt_mapping *m = &maps->v[first];
	struct mt_module mod = { .fd = -1, .start = m->start, .end = m->end };
	struct mt_module *nv;
	bool exec = false;

	/* The file's extent: every later mapping of the same path. */
	for (size_t i = first; i < maps->n; i++) {
		const struct mt_mapping *o = &maps->v[i];

		if (!o->path || strcmp(o->path, m->path) != 0)
			continue;
		if (o->exec && !exec) {
			mod.text_start = o->start;
			mod.text_end = o->end;
			mod.text_offset = o->offset;
		}
		exec |= o->exec;
		if (o->end > mod.end)
			mod.end = o->end;
	}
	if (!exec)
		return 0;
	mod.fd = open_mapped((pid_t)proc->pid, m);
	if (mod.fd < 0 ||
	    mt_elf_load_bias(mod.fd, m->start, m->offset, &mod.bias) != 0) {
		if (mod.fd >= 0)
			close(mod.fd);
		return 0; /* not an ELF file we can read: leave unresolved */
	}
	/* From the descriptor: the file the process mapped, wherever it is. */
	mt_build_id_hex(mod.fd, mod.build_id, sizeof(mod.build_id));
	mt_module_set_id(&mod, mod.fd);
	if (!keep_fd) {
		close(mod.fd);
		mod.fd = -1;
	}
	mod.path = strdup(m->path);
	nv = mod.path ? realloc(proc->mods, (proc->nmods + 1) * sizeof(*nv))
		      : NULL;
	if (!nv) {
		free(mod.path);
		if (mod.fd >= 0)
			close(mod.fd);
		return -ENOMEM;
	}
	proc->mods = nv;
	proc->mods[proc->nmods++] = mod;
	return 1;
}

int mt_modules_refresh(struct mt_process *proc, bool keep_fds)
{
	struct mt_maps maps;
	int added = 0, ret = mt_maps_read((pid_t)proc->pid, &maps);

	if (ret)
		return ret;
	for (size_t i = 0; i < maps.n && ret >= 0; i++) {
		const struct mt_mapping *m = &maps.v[i];
		bool first = true;

		if (!m->path)
			continue;
		/* Only the file's first mapping starts a module. */
		for (size_t j = 0; j < i && first; j++)
			if (maps.v[j].path && strcmp(maps.v[j].path, m->path) == 0)
				first = false;
		if (first && !known(proc, m->path, m->start)) {
			ret = add_module(proc, &maps, i, keep_fds);
			added += ret > 0;
		}
	}
	mt_maps_free(&maps);
	return ret < 0 ? ret : added;
}

/* The module of IMG's file F, whose first mapping is IMG->v[FIRST]. */
static int add_image_module(struct mt_process *proc, const struct mt_image *img,
			    size_t first, bool keep_fd)
{
	const struct mt_image_map *m = &img->v[first];
	const struct mt_image_file *f = m->file;
	struct mt_module mod = { .fd = -1, .start = m->start, .end = m->end };
	char shown[4200];
	struct mt_module *nv;
	bool exec = false;

	mt_image_file_shown(f, shown, sizeof(shown));
	if (known(proc, shown, m->start))
		return 0;
	/* The file's extent: every later mapping of it. */
	for (size_t i = first; i < img->n; i++) {
		const struct mt_image_map *o = &img->v[i];

		if (o->file != f)
			continue;
		if (o->exec && !exec) {
			mod.text_start = o->start;
			mod.text_end = o->end;
			mod.text_offset = o->offset;
		}
		exec |= o->exec;
		if (o->end > mod.end)
			mod.end = o->end;
	}
	if (!exec || mt_elf_load_bias(f->fd, m->start, m->offset, &mod.bias))
		return 0; /* not an ELF file we can read: leave unresolved */
	memcpy(mod.build_id, f->build_id, sizeof(mod.build_id));
	mod.dev = (uint64_t)f->st_dev;
	mod.ino = (uint64_t)f->st_ino;
	mod.path = strdup(shown);
	if (mod.path && keep_fd)
		mod.fd = mt_image_file_open(f);
	nv = mod.path && (!keep_fd || mod.fd >= 0)
		     ? realloc(proc->mods, (proc->nmods + 1) * sizeof(*nv))
		     : NULL;
	if (!nv) {
		free(mod.path);
		if (mod.fd >= 0)
			close(mod.fd);
		return mod.path && keep_fd && mod.fd < 0 ? 0 : -ENOMEM;
	}
	proc->mods = nv;
	proc->mods[proc->nmods++] = mod;
	return 1;
}

int mt_modules_from_image(struct mt_process *proc, const struct mt_image *img,
			  bool keep_fds)
{
	int added = 0, ret = 0;

	for (size_t i = 0; i < img->n && ret >= 0; i++) {
		bool first = true;

		/* Only the file's first mapping starts a module. */
		for (size_t j = 0; j < i && first; j++)
			first = img->v[j].file != img->v[i].file;
		if (first) {
			ret = add_image_module(proc, img, i, keep_fds);
			added += ret > 0;
		}
	}
	return ret < 0 ? ret : added;
}
