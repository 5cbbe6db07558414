/* SPDX-License-Identifier: MIT */
/*
 * frame.h: helpers for struct mt_frame (profile.h): releasing, comparing,
 * hashing, and a growable vector used while symbolising.
 */
#ifndef MEMTRACE_FRAME_H
#define MEMTRACE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile.h"

/* Free the strings of F and zero it. */
void mt_frame_clear(struct mt_frame *f);

/* Same source frame: every field but addr is equal (NULL == NULL). */
bool mt_frame_same(const struct mt_frame *a, const struct mt_frame *b);

/* Hash of the fields mt_frame_same compares. */
uint64_t mt_frame_hash(const struct mt_frame *f);

/* For an index of an array of frames (itab.h, keyed by mt_frame_hash):
 * the key, and its equality (mt_frame_same). */
struct mt_frame_key {
	const struct mt_frame *frames;
	const struct mt_frame *f;
};
bool mt_frame_key_eq(const void *key, uint32_t idx);

/* Frames owned by the vector (their strings are freed with it). */
struct mt_frame_vec {
	struct mt_frame *v;
	size_t n, cap;
};

/*
 * Append F, taking ownership of its strings (also on failure, when they are
 * freed).  Returns 0 or -ENOMEM.
 */
int mt_frame_vec_push(struct mt_frame_vec *fv, struct mt_frame *f);

/* Drop all frames (freeing their strings) but keep the storage. */
void mt_frame_vec_clear(struct mt_frame_vec *fv);

void mt_frame_vec_free(struct mt_frame_vec *fv);

/* The part of PATH after the last '/' (PATH itself if it has none). */
const char *mt_path_basename(const char *path);

#endif /* MEMTRACE_FRAME_H */
