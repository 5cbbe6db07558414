/* SPDX-License-Identifier: MIT */
/*
 * itab.h: an open-addressing hash set of indices into a caller's array.
 *
 * The table stores (hash, index) pairs only; the caller keeps the keys in
 * its own array and supplies an equality callback when looking up.  Used
 * to deduplicate frames and to cache symbolised addresses.
 */
#ifndef MEMTRACE_ITAB_H
#define MEMTRACE_ITAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_itab_slot {
	uint64_t hash;
	uint32_t idx;   /* index + 1; 0 marks an empty slot */
};

struct mt_itab {
	struct mt_itab_slot *slots;
	size_t cap;     /* a power of two, or 0 */
	size_t used;
};

/* True when the caller's element IDX has the key CTX points to. */
typedef bool (*mt_itab_eq_fn)(const void *ctx, uint32_t idx);

/* Look up HASH; returns true and sets *IDX when an element with EQ matches. */
bool mt_itab_find(const struct mt_itab *t, uint64_t hash, mt_itab_eq_fn eq,
		  const void *ctx, uint32_t *idx);

/* Add index IDX (< UINT32_MAX) under HASH.  Returns 0, -ENOMEM or -EOVERFLOW. */
int mt_itab_add(struct mt_itab *t, uint64_t hash, uint32_t idx);

void mt_itab_free(struct mt_itab *t);

/* FNV-1a over LEN bytes, continuing from H (start with MT_HASH_SEED). */
#define MT_HASH_SEED UINT64_C(0xcbf29ce484222325)
uint64_t mt_hash_bytes(uint64_t h, const void *p, size_t len);
/* Hash a string (NULL hashes differently from ""). */
uint64_t mt_hash_str(uint64_t h, const char *s);
uint64_t mt_hash_u64(uint64_t h, uint64_t v);

#endif /* MEMTRACE_ITAB_H */
