/* SPDX-License-Identifier: MIT */
/*
 * map_chunks.h: a BPF array that grows.  An array map cannot be resized,
 * so a large one is charged in full from the start (the unwind rows: 16 MB
 * at the default --max-unwind-rows, for a trace that loads 30,000 rows).
 * Here the elements live in equal chunks, each an mmap()able array map of
 * its own, put into an ARRAY_OF_MAPS (the outer map, which the BPF
 * program reads through: element i is element i % CHUNK of chunk
 * i / CHUNK).  A chunk is made when an element of it is first needed; the
 * chunks are mapped back to back into one reserved range, so the loader
 * writes the elements as one array.
 */
#ifndef MEMTRACE_MAP_CHUNKS_H
#define MEMTRACE_MAP_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

struct mt_map_chunks {
	int outer_fd;
	const char *name;      /* of every chunk */
	uint32_t elem_size;    /* as the map has it (a multiple of 8) */
	uint32_t chunk_elems;  /* elements per chunk */
	uint32_t max_chunks;   /* the outer map's entries */
	uint32_t nchunks;      /* made so far */
	void *base;            /* the reserved range: max_chunks chunks */
	size_t chunk_bytes;
	/* The chunks' descriptors, kept open so that memtrace's kernel
	 * memory can be read from its descriptors (/proc/PID/fdinfo). */
	int *fds;
};

/*
 * Start with no chunk: OUTER_FD is an ARRAY_OF_MAPS of MAX_CHUNKS entries
 * whose inner maps are arrays of CHUNK_ELEMS elements of ELEM_SIZE bytes
 * (BPF_F_MMAPABLE), named NAME.  0 or -errno.
 */
int mt_map_chunks_init(struct mt_map_chunks *c, int outer_fd, const char *name,
		       uint32_t elem_size, uint32_t chunk_elems,
		       uint32_t max_chunks);

/* The elements, back to back: the first capacity() are writable. */
static inline void *mt_map_chunks_base(const struct mt_map_chunks *c)
{
	return c->base;
}

static inline uint64_t mt_map_chunks_capacity(const struct mt_map_chunks *c)
{
	return (uint64_t)c->nchunks * c->chunk_elems;
}

/* Make chunks until N elements fit.  0, -ENOSPC past max_chunks, or the
 * error of making one. */
int mt_map_chunks_reserve(struct mt_map_chunks *c, uint64_t n);

void mt_map_chunks_free(struct mt_map_chunks *c);

#endif
