// SPDX-License-Identifier: MIT
/* map_chunks.c: a BPF array that grows, chunk by chunk (see map_chunks.h). */
#include "map_chunks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

int mt_map_chunks_init(struct mt_map_chunks *c, int outer_fd, const char *name,
		       uint32_t elem_size, uint32_t chunk_elems,
		       uint32_t max_chunks)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	memset(c, 0, sizeof(*c));
	c->outer_fd = outer_fd;
	c->name = name;
	c->elem_size = elem_size;
	c->chunk_elems = chunk_elems;
	c->max_chunks = max_chunks;
	c->chunk_bytes = (size_t)elem_size * chunk_elems;
	/* Chunks must map back to back. */
	if (page <= 0 || c->chunk_bytes % (size_t)page || !max_chunks)
		return -EINVAL;
	/* Address space only: a chunk's memory is the kernel's map. */
	p = mmap(NULL, c->chunk_bytes * max_chunks, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	c->base = p;
	c->fds = calloc(max_chunks, sizeof(*c->fds));
	if (!c->fds) {
		mt_map_chunks_free(c);
		return -ENOMEM;
	}
	return 0;
}

/* Make chunk number c->nchunks, map it in place and put it in the outer
 * map. */
static int add_chunk(struct mt_map_chunks *c)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	char *at = (char *)c->base + c->chunk_bytes * c->nchunks;
	uint32_t key = c->nchunks;
	int fd, ret;
	void *p;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, c->name, sizeof(uint32_t),
			    c->elem_size, c->chunk_elems, &opts);
	if (fd < 0)
		return -errno;
	p = mmap(at, c->chunk_bytes, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (bpf_map_update_elem(c->outer_fd, &key, &fd, BPF_ANY)) {
		ret = -errno;
		/* Back to reserved address space. */
		p = mmap(at, c->chunk_bytes, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				 MAP_FIXED, -1, 0);
		close(fd);
		return p == MAP_FAILED ? -errno : ret;
	}
	c->fds[c->nchunks] = fd;
	/* Published: the deferred walk reads nchunks from another thread
	 * (an acquire load) and then the chunk's memory. */
	__atomic_store_n(&c->nchunks, c->nchunks + 1, __ATOMIC_RELEASE);
	return 0;
}

int mt_map_chunks_reserve(struct mt_map_chunks *c, uint64_t n)
{
	int ret;

	while (mt_map_chunks_capacity(c) < n) {
		if (c->nchunks == c->max_chunks)
			return -ENOSPC;
		ret = add_chunk(c);
		if (ret)
			return ret;
	}
	return 0;
}

void mt_map_chunks_free(struct mt_map_chunks *c)
{
	for (uint32_t i = 0; c->fds && i < c->nchunks; i++)
		close(c->fds[i]);
	free(c->fds);
	if (c->base)
		munmap(c->base, c->chunk_bytes * c->max_chunks);
	memset(c, 0, sizeof(*c));
	c->outer_fd = -1;
}
