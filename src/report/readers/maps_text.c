/* SPDX-License-Identifier: MIT */
/* maps_text.c: a heap profile's MAPPED_LIBRARIES section (see maps_text.h). */
#include "maps_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "itab.h"
#include "local_elf.h"

/* A word: up to the next space or tab (at least one byte). */
static bool word(struct mt_line *l, struct mt_line *w)
{
	mt_line_skip_blanks(l);
	w->p = l->p;
	while (l->p < l->end && *l->p != ' ' && *l->p != '\t')
		l->p++;
	w->end = l->p;
	return w->p < w->end;
}

/* "START-END PERMS OFFSET DEV INODE PATH" */
static bool parse(struct mt_line l, uint64_t *start, uint64_t *end,
		  bool *exec, uint64_t *offset, struct mt_line *path)
{
	struct mt_line perms, dev, inode;

	if (!mt_line_hex(&l, true, start) || !mt_line_starts(&l, "-") ||
	    !mt_line_hex(&l, true, end) || *end <= *start || !word(&l, &perms) ||
	    !mt_line_hex(&l, true, offset) || !word(&l, &dev) || !word(&l, &inode))
		return false;
	*exec = perms.end - perms.p >= 3 && perms.p[2] == 'x';
	mt_line_skip_blanks(&l);
	*path = l;
	return l.p < l.end && l.p[0] == '/';
}

struct path_key {
	const struct mt_process *proc;
	const char *path;
	size_t len;
};

static bool path_eq(const void *ctx, uint32_t idx)
{
	const struct path_key *k = ctx;
	const char *p = k->proc->mods[idx].path;

	return strncmp(p, k->path, k->len) == 0 && p[k->len] == '\0';
}

int mt_maps_text_line(struct mt_maps_text *mt, struct mt_line l)
{
	struct mt_process *proc = mt->proc;
	uint64_t start, end, offset, h;
	struct path_key key = { proc, NULL, 0 };
	struct mt_line pl;
	struct mt_module *m, *v;
	uint32_t idx;
	bool exec;

	if (!parse(l, &start, &end, &exec, &offset, &pl) ||
	    memchr(pl.p, '\0', (size_t)(pl.end - pl.p)))
		return 0;
	key.path = pl.p;
	key.len = (size_t)(pl.end - pl.p);
	h = mt_hash_bytes(MT_HASH_SEED, key.path, key.len);
	/* The module of this path, found by its hash: one step a line. */
	if (mt_itab_find(&mt->paths, h, path_eq, &key, &idx)) {
		m = &proc->mods[idx];
		if (start < m->start)
			m->start = start;
		if (end > m->end)
			m->end = end;
		if (exec && !m->text_end) {
			m->text_start = start;
			m->text_end = end;
			m->text_offset = offset;
		}
		return 0;
	}
	if (proc->nmods >= UINT32_MAX - 1)
		return 0;
	if (mt_reserve(&proc->mods, &mt->cap, proc->nmods + 1, sizeof(*v)))
		return -ENOMEM;
	m = &proc->mods[proc->nmods];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->path = strndup(key.path, key.len);
	if (!m->path)
		return -ENOMEM;
	m->start = start;
	m->end = end;
	if (exec) {
		m->text_start = start;
		m->text_end = end;
		m->text_offset = offset;
	}
	if (mt_itab_add(&mt->paths, h, (uint32_t)proc->nmods)) {
		free(m->path);
		return -ENOMEM;
	}
	proc->nmods++;
	return 0;
}

void mt_maps_text_free(struct mt_maps_text *mt)
{
	mt_itab_free(&mt->paths);
}

void mt_maps_text_finish(struct mt_process *proc)
{
	size_t kept = 0;

	/* Only files mapped executable hold code. */
	for (size_t i = 0; i < proc->nmods; i++) {
		if (proc->mods[i].text_end)
			proc->mods[kept++] = proc->mods[i];
		else
			free(proc->mods[i].path);
	}
	proc->nmods = kept;
	for (size_t i = 0; i < proc->nmods; i++)
		mt_local_elf(&proc->mods[i]);
}

const struct mt_module *mt_maps_text_module(const struct mt_process *proc,
					    uint64_t ip)
{
	for (size_t i = 0; i < proc->nmods; i++) {
		if (ip >= proc->mods[i].start && ip < proc->mods[i].end)
			return &proc->mods[i];
	}
	return NULL;
}
