/* SPDX-License-Identifier: MIT */
/* profile.c: releasing raw and symbolised profiles, copying processes (see
 * profile.h). */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "frame.h"
#include "itab.h"

static void module_free(struct mt_module *m)
{
	free(m->path);
	if (m->fd >= 0)
		close(m->fd);
}

void mt_module_set_id(struct mt_module *m, int fd)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		m->dev = (uint64_t)st.st_dev;
		m->ino = (uint64_t)st.st_ino;
	}
}

void mt_process_free_mods(struct mt_process *p)
{
	for (size_t j = 0; p->mods && j < p->nmods; j++)
		module_free(&p->mods[j]);
	free(p->mods);
	p->mods = NULL;
	p->nmods = 0;
}

/* A copy of module M into C: its path, and a descriptor of its own. */
static int module_copy(struct mt_module *c, const struct mt_module *m)
{
	*c = *m;
	c->fd = -1;
	c->path = m->path ? strdup(m->path) : NULL;
	if (m->path && !c->path)
		return -ENOMEM;
	if (m->fd >= 0) {
		c->fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
		if (c->fd < 0)
			return -errno;
	}
	return 0;
}

int mt_process_copy(struct mt_process *c, const struct mt_process *p)
{
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->pid = p->pid;
	memcpy(c->comm, p->comm, sizeof(c->comm));
	if (!p->nmods)
		return 0;
	c->mods = calloc(p->nmods, sizeof(*c->mods));
	if (!c->mods)
		return -ENOMEM;
	for (size_t j = 0; !ret && j < p->nmods; j++) {
		c->nmods = j + 1;
		ret = module_copy(&c->mods[j], &p->mods[j]);
	}
	if (ret)
		mt_process_free_mods(c);
	return ret;
}

static void processes_free(struct mt_process *procs, size_t nprocs)
{
	if (!procs)
		return;
	for (size_t i = 0; i < nprocs; i++)
		mt_process_free_mods(&procs[i]);
	free(procs);
}

const char *mt_procs_comm(const struct mt_process *procs, size_t n,
			  uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].pid == pid)
			return procs[i].comm;
	return "";
}

uint64_t mt_raw_key_hash(uint32_t pid, uint32_t category, uint64_t id)
{
	return mt_hash_u64(mt_hash_u64(MT_HASH_SEED,
				       (uint64_t)pid << 32 | category), id);
}

bool mt_pid_key_eq(const void *key, uint32_t idx)
{
	const struct mt_pid_key *k = key;

	return k->procs[idx].pid == k->pid;
}

void mt_raw_profile_free(struct mt_raw_profile *raw)
{
	if (!raw)
		return;
	processes_free(raw->procs, raw->nprocs);
	if (raw->stacks) {
		for (size_t i = 0; i < raw->nstacks; i++)
			free(raw->stacks[i].ips);
	}
	free(raw->stacks);
	free(raw->blocks);
	memset(raw, 0, sizeof(*raw));
}

void mt_profile_free(struct mt_profile *p)
{
	if (!p)
		return;
	if (p->frames) {
		for (size_t i = 0; i < p->nframes; i++)
			mt_frame_clear(&p->frames[i]);
	}
	free(p->frames);
	if (p->samples) {
		for (size_t i = 0; i < p->nsamples; i++)
			free(p->samples[i].frames);
	}
	free(p->samples);
	processes_free(p->procs, p->nprocs);
	free(p->blocks);
	if (p->maps) {
		for (size_t i = 0; i < p->nmaps; i++)
			free(p->maps[i].path);
	}
	free(p->maps);
	memset(p, 0, sizeof(*p));
}
