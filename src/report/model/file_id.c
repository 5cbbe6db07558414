// SPDX-License-Identifier: MIT
/* file_id.c: a file's identity (file_id.h). */
#include "file_id.h"

struct mt_file_id mt_file_id_of(const struct stat *st)
{
	return (struct mt_file_id){
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_sec = (int64_t)st->st_mtim.tv_sec,
		.mtime_nsec = (int64_t)st->st_mtim.tv_nsec,
	};
}

bool mt_file_id_eq(const struct mt_file_id *a, const struct mt_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}
