// SPDX-License-Identifier: MIT
/* plan_cache.c: the probe plans made already (see plan_cache.h). */
#include "plan_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mt_plan_key_of(struct mt_plan_key *key, const char *path, dev_t dev,
		   ino_t ino, bool alloc_family, bool leaf, bool mmap)
{
	struct stat st;

	memset(key, 0, sizeof(*key)); /* no padding left to compare */
	if (stat(path, &st))
		return -errno;
	if (st.st_dev != dev || st.st_ino != ino)
		return -ESTALE; /* another file under that name now */
	key->id = mt_file_id_of(&st);
	key->alloc_family = alloc_family;
	key->leaf = leaf;
	key->mmap = mmap;
	return 0;
}

static bool same_key(const struct mt_plan_key *a, const struct mt_plan_key *b)
{
	return mt_file_id_eq(&a->id, &b->id) &&
	       a->alloc_family == b->alloc_family && a->leaf == b->leaf &&
	       a->mmap == b->mmap;
}

const struct mt_plan_entry *mt_plan_cache_find(const struct mt_plan_cache *c,
					       const struct mt_plan_key *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (same_key(&c->v[i].key, key))
			return &c->v[i];
	return NULL;
}

int mt_plan_cache_add(struct mt_plan_cache *c, const struct mt_plan_entry *e)
{
	struct mt_plan_entry *nv = realloc(c->v, (c->n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	c->v = nv;
	nv[c->n] = *e;
	nv[c->n].plan.path = NULL;
	c->n++;
	return 0;
}

void mt_plan_cache_free(struct mt_plan_cache *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
