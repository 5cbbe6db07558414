/* SPDX-License-Identifier: MIT */
/* frame.c: struct mt_frame helpers (see frame.h). */
#include "frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "itab.h"

void mt_frame_clear(struct mt_frame *f)
{
	free(f->function);
	free(f->file);
	free(f->decl_file);
	free(f->module);
	memset(f, 0, sizeof(*f));
}

static bool str_same(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

bool mt_frame_same(const struct mt_frame *a, const struct mt_frame *b)
{
	return a->line == b->line && a->decl_line == b->decl_line &&
	       a->inlined == b->inlined && a->unresolved == b->unresolved &&
	       a->no_inlines == b->no_inlines && str_same(a->function, b->function) &&
	       str_same(a->file, b->file) &&
	       str_same(a->decl_file, b->decl_file) &&
	       str_same(a->module, b->module);
}

uint64_t mt_frame_hash(const struct mt_frame *f)
{
	uint64_t h = MT_HASH_SEED;

	h = mt_hash_str(h, f->function);
	h = mt_hash_str(h, f->file);
	h = mt_hash_u64(h, (uint64_t)(int64_t)f->line);
	h = mt_hash_str(h, f->decl_file);
	h = mt_hash_u64(h, (uint64_t)(int64_t)f->decl_line);
	h = mt_hash_str(h, f->module);
	return mt_hash_u64(h, f->inlined);
}

int mt_frame_vec_push(struct mt_frame_vec *fv, struct mt_frame *f)
{
	if (fv->n == fv->cap) {
		size_t cap = fv->cap ? fv->cap * 2 : 8;
		struct mt_frame *v = reallocarray(fv->v, cap, sizeof(*v));

		if (!v) {
			mt_frame_clear(f);
			return -ENOMEM;
		}
		fv->v = v;
		fv->cap = cap;
	}
	fv->v[fv->n++] = *f;
	memset(f, 0, sizeof(*f));
	return 0;
}

void mt_frame_vec_clear(struct mt_frame_vec *fv)
{
	for (size_t i = 0; i < fv->n; i++)
		mt_frame_clear(&fv->v[i]);
	fv->n = 0;
}

void mt_frame_vec_free(struct mt_frame_vec *fv)
{
	mt_frame_vec_clear(fv);
	free(fv->v);
	memset(fv, 0, sizeof(*fv));
}

const char *mt_path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool mt_frame_key_eq(const void *key, uint32_t idx)
{
	const struct mt_frame_key *k = key;

	return mt_frame_same(&k->frames[idx], k->f);
}
