/* SPDX-License-Identifier: MIT */
/* maps_text.c: a heap profile's MAPPED_LIBRARIES section (see maps_text.h). */
#include "maps_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int mt_maps_text_line(struct mt_process *proc, struct mt_line l)
{
	uint64_t start, end, offset;
	struct mt_line pl;
	const char *path;
	struct mt_module *m, *v;
	size_t len;
	bool exec;

	if (!parse(l, &start, &end, &exec, &offset, &pl) ||
	    memchr(pl.p, '\0', (size_t)(pl.end - pl.p)))
		return 0;
	path = pl.p;
	len = (size_t)(pl.end - pl.p);
	for (size_t i = 0; i < proc->nmods; i++) {
		m = &proc->mods[i];
		if (strlen(m->path) != len || strncmp(m->path, path, len) != 0)
			continue;
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
	v = reallocarray(proc->mods, proc->nmods + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	proc->mods = v;
	m = &v[proc->nmods];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->path = strndup(path, len);
	if (!m->path)
		return -ENOMEM;
	m->start = start;
	m->end = end;
	if (exec) {
		m->text_start = start;
		m->text_end = end;
		m->text_offset = offset;
	}
	proc->nmods++;
	return 0;
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
