/* SPDX-License-Identifier: MIT */
/* file_addrs.c: files, their sessions, their addresses (see file_addrs.h). */
#include "file_addrs.h"
#include "array_grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "file_dwfl.h"

/* A file: its key, with the strings owned, and its session. */
struct mt_file_addrs_file {
	struct mt_sym_file key;
	uint64_t hash;
	Dwfl *dwfl;   /* NULL until needed */
};

/* An address of a file and where its frames are (the caller's). */
struct mt_file_addrs_addr {
	uint32_t file;
	uint64_t rel;
	size_t first, count;
};

int mt_sym_file_of(const struct mt_module *m, struct mt_sym_file *key)
{
	struct stat st;

	if (!m->path)
		return -1;
	*key = (struct mt_sym_file){
		.dev = m->dev, .ino = m->ino,
		.path = m->path, .build_id = m->build_id,
	};
	if (m->dev || m->ino)
		return 0;
	if (m->fd >= 0 ? fstat(m->fd, &st) == 0 : stat(m->path, &st) == 0) {
		key->dev = (uint64_t)st.st_dev;
		key->ino = (uint64_t)st.st_ino;
	}
	return 0;
}

static uint64_t key_hash(const struct mt_sym_file *k)
{
	uint64_t h = mt_hash_u64(mt_hash_u64(MT_HASH_SEED, k->dev), k->ino);

	h = mt_hash_str(h, k->path);
	return mt_hash_str(h, k->build_id);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

struct file_ctx {
	const struct mt_file_addrs_file *files;
	const struct mt_sym_file *key;
};

static bool file_eq(const void *ctx, uint32_t idx)
{
	const struct file_ctx *c = ctx;
	const struct mt_sym_file *a = &c->files[idx].key, *b = c->key;

	return a->dev == b->dev && a->ino == b->ino &&
	       str_eq(a->path, b->path) && str_eq(a->build_id, b->build_id);
}

static uint64_t addr_hash(uint32_t file, uint64_t rel)
{
	return mt_hash_u64(mt_hash_u64(MT_HASH_SEED, file), rel);
}

struct addr_ctx {
	const struct mt_file_addrs_addr *addrs;
	uint32_t file;
	uint64_t rel;
};

static bool addr_eq(const void *ctx, uint32_t idx)
{
	const struct addr_ctx *c = ctx;

	return c->addrs[idx].file == c->file && c->addrs[idx].rel == c->rel;
}

bool mt_file_addrs_find(const struct mt_file_addrs *fa, uint32_t file,
			uint64_t rel, size_t *first, size_t *count)
{
	uint32_t idx;
	struct addr_ctx c = { fa->addrs, file, rel };

	if (!mt_itab_find(&fa->addr_tab, addr_hash(file, rel), addr_eq, &c,
			  &idx))
		return false;
	*first = fa->addrs[idx].first;
	*count = fa->addrs[idx].count;
	return true;
}

int mt_file_addrs_file(struct mt_file_addrs *fa, const struct mt_sym_file *key,
		       uint32_t *idx)
{
	uint64_t h = key_hash(key);
	struct file_ctx c = { fa->files, key };
	struct mt_sym_file k = *key;
	int err = 0;

	if (mt_itab_find(&fa->file_tab, h, file_eq, &c, idx))
		return 0;
	k.path = key->path ? strdup(key->path) : NULL;
	k.build_id = key->build_id ? strdup(key->build_id) : NULL;
	if ((key->path && !k.path) || (key->build_id && !k.build_id))
		err = -ENOMEM;
	if (!err && fa->nfiles >= UINT32_MAX - 1)
		err = -EOVERFLOW;
	if (!err)
		err = mt_reserve(&fa->files, &fa->files_cap, fa->nfiles + 1,
			      sizeof(*fa->files));
	if (!err)
		err = mt_itab_add(&fa->file_tab, h, (uint32_t)fa->nfiles);
	if (err)
		goto cleanup;
	*idx = (uint32_t)fa->nfiles;
	fa->files[fa->nfiles++] = (struct mt_file_addrs_file){ k, h, NULL };
	return 0;
cleanup:
	free((char *)k.path);
	free((char *)k.build_id);
	return err;
}

int mt_file_addrs_dwfl(struct mt_file_addrs *fa, uint32_t file,
		       const struct mt_module *m, Dwfl **dwfl)
{
	struct mt_file_addrs_file *f = &fa->files[file];

	if (!f->dwfl) {
		f->dwfl = mt_file_dwfl_open(m);
		if (!f->dwfl)
			return -ENOMEM;
		fa->sessions++;
	}
	*dwfl = f->dwfl;
	return 0;
}

int mt_file_addrs_add(struct mt_file_addrs *fa, uint32_t file, uint64_t rel,
		      size_t first, size_t count)
{
	int err = fa->naddrs >= UINT32_MAX - 1 ? -EOVERFLOW : 0;

	if (!err)
		err = mt_reserve(&fa->addrs, &fa->addrs_cap, fa->naddrs + 1,
			      sizeof(*fa->addrs));
	if (!err)
		err = mt_itab_add(&fa->addr_tab, addr_hash(file, rel),
				  (uint32_t)fa->naddrs);
	if (err)
		return err;
	fa->addrs[fa->naddrs++] = (struct mt_file_addrs_addr){
		.file = file, .rel = rel, .first = first, .count = count,
	};
	return 0;
}

void mt_file_addrs_free(struct mt_file_addrs *fa)
{
	for (size_t i = 0; i < fa->nfiles; i++) {
		free((char *)fa->files[i].key.path);
		free((char *)fa->files[i].key.build_id);
		mt_file_dwfl_close(fa->files[i].dwfl);
	}
	free(fa->files);
	free(fa->addrs);
	mt_itab_free(&fa->file_tab);
	mt_itab_free(&fa->addr_tab);
	memset(fa, 0, sizeof(*fa));
}
