/* SPDX-License-Identifier: MIT */
/* itab.c: open-addressing hash set of indices (see itab.h). */
#include "itab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64

bool mt_itab_find(const struct mt_itab *t, uint64_t hash, mt_itab_eq_fn eq,
		  const void *ctx, uint32_t *idx)
{
	if (t->cap == 0)
		return false;
	size_t mask = t->cap - 1;

	for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
		const struct mt_itab_slot *s = &t->slots[i];

		if (s->idx == 0)
			return false;
		if (s->hash == hash && eq(ctx, s->idx - 1)) {
			*idx = s->idx - 1;
			return true;
		}
	}
}

static void insert_slot(struct mt_itab_slot *slots, size_t cap, uint64_t hash,
			uint32_t stored)
{
	size_t mask = cap - 1;
	size_t i = (size_t)hash & mask;

	while (slots[i].idx != 0)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].idx = stored;
}

static int grow(struct mt_itab *t)
{
	size_t cap = t->cap ? t->cap * 2 : MIN_CAP;
	struct mt_itab_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->slots[i].idx != 0)
			insert_slot(slots, cap, t->slots[i].hash, t->slots[i].idx);
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int mt_itab_add(struct mt_itab *t, uint64_t hash, uint32_t idx)
{
	if (idx == UINT32_MAX)
		return -EOVERFLOW;
	/* Keep the load factor at or below 1/2. */
	if ((t->used + 1) * 2 > t->cap) {
		int err = grow(t);

		if (err)
			return err;
	}
	insert_slot(t->slots, t->cap, hash, idx + 1);
	t->used++;
	return 0;
}

void mt_itab_free(struct mt_itab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

uint64_t mt_hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

uint64_t mt_hash_str(uint64_t h, const char *s)
{
	if (!s)
		return mt_hash_u64(h, UINT64_C(0x9e3779b97f4a7c15));
	/* Include the terminator so that ("ab","c") and ("a","bc") differ. */
	return mt_hash_bytes(h, s, strlen(s) + 1);
}

uint64_t mt_hash_u64(uint64_t h, uint64_t v)
{
	return mt_hash_bytes(h, &v, sizeof(v));
}
