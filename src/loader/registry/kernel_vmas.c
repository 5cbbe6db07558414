// SPDX-License-Identifier: MIT
/* kernel_vmas.c: executable file mappings as the kernel told them
 * (kernel_vmas.h). */
#include "kernel_vmas.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "build_id.h"
#include "elf_syms.h"
#include "itab.h"
#include "profile.h"

/* A file told of: a descriptor on it (-1: could not be opened). */
struct kfile {
	struct mt_file_key key;
	int fd;
	char *path;
};

/* A process's mappings, as last told, and those of its image before its
 * last exec (copies and stacks taken then, between a shell's fork and its
 * exec, are read after). */
struct kproc {
	uint32_t pid;
	struct mt_kvma *v;
	size_t n, cap;
	struct mt_kvma *old;
	size_t nold;
};

static struct {
	struct kfile *files;
	size_t nfiles;
	struct kproc *procs;
	size_t nprocs;
	struct mt_itab file_index, proc_index;  /* system-wide: thousands */
	uint64_t unopened;
	size_t nforgot;  /* procs[] slots of processes forgotten (pid 0) */
} K;

static uint64_t key_hash(const struct mt_file_key *key)
{
	return mt_hash_u64(mt_hash_u64(MT_HASH_SEED, key->dev), key->ino);
}

static bool same_file(const void *ctx, uint32_t idx)
{
	const struct mt_file_key *key = ctx;

	return K.files[idx].key.dev == key->dev &&
	       K.files[idx].key.ino == key->ino;
}

static bool same_pid(const void *ctx, uint32_t idx)
{
	return K.procs[idx].pid == *(const uint32_t *)ctx;
}

static uint64_t kernel_dev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

/* PATH (components leaf first, NUL-ended) as "/a/b/c" into OUT. */
static bool path_of(const struct mt_vma_record *r, char *out, size_t cap)
{
	const char *comp[64];
	size_t n = 0, len = r->path_len < MT_VMA_PATH_MAX ? r->path_len
							   : MT_VMA_PATH_MAX;
	size_t at = 0, pos = 0;

	if (r->flags & MT_VMA_PATH_CUT)
		return false;
	while (pos < len && n < 64) {
		const char *s = r->path + pos;
		size_t l = strnlen(s, len - pos);

		if (pos + l >= len)
			return false; /* not ended */
		comp[n++] = s;
		pos += l + 1;
	}
	if (n == 0 || pos < len)
		return false;
	out[0] = '\0';
	while (n--) {
		int w = snprintf(out + at, cap - at, "/%s", comp[n]);

		if (w < 0 || (size_t)w >= cap - at)
			return false;
		at += (size_t)w;
	}
	return true;
}

/* Open PATH, or PID's view of it, if it is the inode KEY. */
static int open_checked(uint32_t pid, const char *path,
			const struct mt_file_key *key)
{
	char alt[PATH_MAX + 32];
	const char *try[2] = { path, alt };
	struct stat st;

	snprintf(alt, sizeof(alt), "/proc/%u/root%s", pid, path);
	for (int i = 0; i < 2; i++) {
		int fd = open(try[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_ino == key->ino &&
		    kernel_dev(st.st_dev) == key->dev)
			return fd;
		close(fd);
	}
	return -1;
}

static struct kfile *file_of(const struct mt_file_key *key)
{
	uint32_t idx;

	if (!K.nfiles ||
	    !mt_itab_find(&K.file_index, key_hash(key), same_file, key, &idx))
		return NULL;
	return &K.files[idx];
}

/* The file of R, opened when first told of. */
static void learn_file(const struct mt_vma_record *r)
{
	char path[PATH_MAX];
	struct kfile *nv, *f = file_of(&r->file);
	char ext[64];

	if (f && f->fd >= 0)
		return;
	if (!path_of(r, path, sizeof(path)))
		path[0] = '\0';
	if (f) {
		/* Not opened before: the process may have gone; try this
		 * one's path. */
		if (path[0] && (f->fd = open_checked(r->pid, path, &r->file)) >= 0) {
			free(f->path);
			f->path = strdup(path);
			K.unopened--;
		}
		return;
	}
	nv = realloc(K.files, (K.nfiles + 1) * sizeof(*nv));
	if (!nv)
		return;
	K.files = nv;
	if (mt_itab_add(&K.file_index, key_hash(&r->file), (uint32_t)K.nfiles))
		return;
	f = &K.files[K.nfiles++];
	f->key = r->file;
	f->fd = path[0] ? open_checked(r->pid, path, &r->file) : -1;
	/* The mapping itself, while the process is there (deleted files,
	 * other mount namespaces). */
	if (f->fd < 0) {
		snprintf(ext, sizeof(ext), "/proc/%u/map_files/%llx-%llx",
			 r->pid, (unsigned long long)r->start,
			 (unsigned long long)r->end);
		f->fd = open(ext, O_RDONLY | O_CLOEXEC);
	}
	f->path = strdup(path[0] ? path : "[unknown file]");
	if (f->fd < 0)
		K.unopened++;
}

static struct kproc *proc_of(uint32_t pid, bool make)
{
	uint64_t h = mt_hash_u64(MT_HASH_SEED, pid);
	struct kproc *nv;
	uint32_t idx;

	if (K.nprocs && mt_itab_find(&K.proc_index, h, same_pid, &pid, &idx))
		return &K.procs[idx];
	if (!make)
		return NULL;
	nv = realloc(K.procs, (K.nprocs + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	K.procs = nv;
	if (mt_itab_add(&K.proc_index, h, (uint32_t)K.nprocs))
		return NULL;
	nv[K.nprocs] = (struct kproc){ .pid = pid };
	return &K.procs[K.nprocs++];
}

void mt_kvmas_add(const void *data, size_t size)
{
	struct mt_vma_record r;
	struct kproc *p;

	if (size < offsetof(struct mt_vma_record, path))
		return;
	memset(&r, 0, sizeof(r));
	memcpy(&r, data, size < sizeof(r) ? size : sizeof(r));
	if (r.path_len > size - offsetof(struct mt_vma_record, path))
		r.path_len = (uint32_t)(size - offsetof(struct mt_vma_record, path));
	p = proc_of(r.pid, true);
	if (!p)
		return;
	if ((r.flags & (MT_VMA_FIRST | MT_VMA_NEW_MM)) ==
	    (MT_VMA_FIRST | MT_VMA_NEW_MM) && p->n) {
		/* An exec: the old image's, kept apart. */
		free(p->old);
		p->old = p->v;
		p->nold = p->n;
		p->v = NULL;
		p->n = p->cap = 0;
	}
	if (r.flags & MT_VMA_FIRST)
		p->n = 0; /* a new dump: what it replaces is gone */
	learn_file(&r);
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 16;
		struct mt_kvma *nv = realloc(p->v, ncap * sizeof(*nv));

		if (!nv)
			return;
		p->v = nv;
		p->cap = ncap;
	}
	p->v[p->n++] = (struct mt_kvma){ r.start, r.end, r.offset, r.file };
}

const struct mt_kvma *mt_kvmas_of(uint32_t pid, size_t *n)
{
	struct kproc *p = proc_of(pid, false);

	*n = p ? p->n : 0;
	return p && p->n ? p->v : NULL;
}

const struct mt_kvma *mt_kvmas_before_exec(uint32_t pid, size_t *n)
{
	struct kproc *p = proc_of(pid, false);

	*n = p ? p->nold : 0;
	return p && p->nold ? p->old : NULL;
}

int mt_kvmas_open(const struct mt_file_key *file, const char **name)
{
	struct kfile *f = file_of(file);

	if (!f || f->fd < 0)
		return -1;
	*name = f->path;
	return fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
}

/* Does [START, END) overlap one of the first N modules of PROC? */
static bool overlaps(const struct mt_process *proc, size_t n, uint64_t start,
		     uint64_t end)
{
	for (size_t i = 0; i < n; i++)
		if (start < proc->mods[i].end && proc->mods[i].start < end)
			return true;
	return false;
}

size_t mt_kvmas_modules(struct mt_process *proc)
{
	struct kproc *p = proc_of(proc->pid, false);
	size_t added = 0, own = proc->nmods;

	if (!p)
		return 0;
	/* The current image's, then the one's before its exec (where they
	 * overlap none: the stacks its shell took between fork and exec). */
	for (size_t i = 0; i < p->n + p->nold; i++) {
		const struct mt_kvma *v = i < p->n ? &p->v[i] : &p->old[i - p->n];
		struct kfile *f = file_of(&v->file);
		struct mt_module mod = { .fd = -1, .start = v->start,
					 .end = v->end, .text_start = v->start,
					 .text_end = v->end,
					 .text_offset = v->offset };
		struct mt_module *nv;

		if (i == p->n)
			own = proc->nmods; /* the current image's too */
		if (overlaps(proc, own, v->start, v->end) || !f || f->fd < 0 ||
		    mt_elf_load_bias(f->fd, v->start, v->offset, &mod.bias))
			continue;
		mt_build_id_hex(f->fd, mod.build_id, sizeof(mod.build_id));
		mt_module_set_id(&mod, f->fd);
		/* Read again by its path for the report (a descriptor per
		 * module of every process gone would be too many). */
		mod.path = strdup(f->path);
		nv = mod.path ? realloc(proc->mods,
					(proc->nmods + 1) * sizeof(*nv))
			      : NULL;
		if (!nv) {
			free(mod.path);
			if (mod.fd >= 0)
				close(mod.fd);
			break;
		}
		proc->mods = nv;
		proc->mods[proc->nmods++] = mod;
		added++;
	}
	return added;
}

/* The slots of forgotten processes out of procs[], and the index made
 * again over those left (once they are many: a rebuild costs them all). */
static void compact_procs(void)
{
	size_t k = 0;

	for (size_t i = 0; i < K.nprocs; i++)
		if (K.procs[i].pid || K.procs[i].v)
			K.procs[k++] = K.procs[i];
	K.nprocs = k;
	K.nforgot = 0;
	mt_itab_free(&K.proc_index);
	memset(&K.proc_index, 0, sizeof(K.proc_index));
	for (size_t i = 0; i < K.nprocs; i++)
		if (mt_itab_add(&K.proc_index,
				mt_hash_u64(MT_HASH_SEED, K.procs[i].pid),
				(uint32_t)i))
			break; /* out of memory: those after are not found */
}

void mt_kvmas_forget(uint32_t pid)
{
	struct kproc *p = pid ? proc_of(pid, false) : NULL;

	if (!p)
		return;
	free(p->v);
	*p = (struct kproc){ .pid = 0 }; /* found by no pid */
	if (++K.nforgot >= 64 && K.nforgot * 2 >= K.nprocs)
		compact_procs();
}

size_t mt_kvmas_nprocs(void)
{
	return K.nprocs - K.nforgot;
}

void mt_kvmas_stats(uint64_t *files, uint64_t *unopened)
{
	*files = K.nfiles;
	*unopened = K.unopened;
}

void mt_kvmas_free(void)
{
	for (size_t i = 0; i < K.nfiles; i++) {
		if (K.files[i].fd >= 0)
			close(K.files[i].fd);
		free(K.files[i].path);
	}
	free(K.files);
	for (size_t i = 0; i < K.nprocs; i++) {
		free(K.procs[i].v);
		free(K.procs[i].old);
	}
	free(K.procs);
	mt_itab_free(&K.file_index);
	mt_itab_free(&K.proc_index);
	memset(&K, 0, sizeof(K));
}
