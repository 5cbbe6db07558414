// SPDX-License-Identifier: MIT
/* proc_maps.c: parsing /proc/PID/maps into file mappings. */
#include "proc_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_line(const char *line, struct mt_mapping *m)
{
	char perms[8];
	int consumed = 0;
	const char *path;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u%n",
		   &m->start, &m->end, perms, &m->offset, &consumed) != 4 ||
	    consumed == 0)
		return -EINVAL;
	m->exec = perms[2] == 'x';
	path = line + consumed;
	while (*path == ' ')
		path++;
	len = strcspn(path, "\n");
	if (len && path[0] == '/') {
		m->path = strndup(path, len);
		if (!m->path)
			return -ENOMEM;
	}
	return 0;
}

int mt_maps_read(pid_t pid, struct mt_maps *maps)
{
	char fname[64], *line = NULL;
	size_t cap = 0, lcap = 0;
	FILE *f;
	int ret = 0;

	maps->v = NULL;
	maps->n = 0;
	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &lcap, f) > 0) {
		if (maps->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct mt_mapping *nv = realloc(maps->v, ncap * sizeof(*nv));

			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			maps->v = nv;
			cap = ncap;
		}
		ret = parse_line(line, &maps->v[maps->n]);
		if (ret)
			break;
		maps->n++;
	}
	free(line);
	fclose(f);
	if (ret)
		mt_maps_free(maps);
	return ret;
}

void mt_maps_free(struct mt_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->v[i].path);
	free(maps->v);
	maps->v = NULL;
	maps->n = 0;
}

static bool is_libc_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	if (strcmp(base, "libc.so.6") == 0)
		return true;
	len = strlen(base);
	return strncmp(base, "libc-", 5) == 0 && len > 8 &&
	       strcmp(base + len - 3, ".so") == 0;
}

const struct mt_mapping *mt_maps_find_libc(const struct mt_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		if (maps->v[i].path && is_libc_name(maps->v[i].path))
			return &maps->v[i];
	return NULL;
}
