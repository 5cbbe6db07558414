/* SPDX-License-Identifier: MIT */
/* maps_text.c: a heap profile's MAPPED_LIBRARIES section (see maps_text.h). */
#include "maps_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "local_elf.h"

/* "START-END PERMS OFFSET DEV INODE PATH" */
static bool parse(const char *line, uint64_t *start, uint64_t *end,
		  bool *exec, uint64_t *offset, const char **path)
{
	char perms[8];
	int n = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
		   start, end, perms, offset, &n) != 4 || n == 0 ||
	    *end <= *start)
		return false;
	*exec = strlen(perms) >= 3 && perms[2] == 'x';
	*path = line + n;
	return (*path)[0] == '/';
}

int mt_maps_text_line(struct mt_process *proc, const char *text)
{
	uint64_t start, end, offset;
	const char *path;
	struct mt_module *m, *v;
	size_t len = strcspn(text, "\n");
	char line[4200];
	bool exec;

	/* One line, so that sscanf cannot run into the next. */
	if (len >= sizeof(line))
		return 0;
	memcpy(line, text, len);
	line[len] = '\0';
	if (!parse(line, &start, &end, &exec, &offset, &path))
		return 0;
	len = strlen(path);
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
