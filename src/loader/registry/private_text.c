// SPDX-License-Identifier: MIT
/* private_text.c: memtrace's own allocator code, out of reach of uprobes. */
#include "private_text.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc_maps.h"

/* The executable file mapping holding ADDR: [*START, *END) from file
 * offset *OFF.  0, or -ENOENT (none, or a copy already). */
static int find_text(uintptr_t addr, uintptr_t *start, uintptr_t *end,
		     uint64_t *off)
{
	struct mt_maps maps;
	int ret = mt_maps_read(getpid(), &maps);

	if (ret)
		return ret;
	ret = -ENOENT;
	for (size_t i = 0; i < maps.n && ret; i++) {
		const struct mt_mapping *m = &maps.v[i];

		if (addr < m->start || addr >= m->end || !m->exec ||
		    !m->path || m->path[0] != '/')
			continue;
		*start = (uintptr_t)m->start;
		*end = (uintptr_t)m->end;
		*off = m->offset;
		ret = 0;
	}
	mt_maps_free(&maps);
	return ret;
}

int mt_private_text(const void *addr)
{
	uintptr_t start = 0, end = 0;
	uint64_t off = 0;
	char path[64];
	size_t len, got = 0;
	void *copy;
	int fd, ret = find_text((uintptr_t)addr, &start, &end, &off);

	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	len = end - start;
	/* The file's bytes, not memory's: another tracer's breakpoints may
	 * be in memory, and would trap in a copy. */
	snprintf(path, sizeof(path), "/proc/self/map_files/%" PRIxPTR "-%" PRIxPTR,
		 start, end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	copy = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while (got < len) {
		ssize_t n = pread(fd, (char *)copy + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* past the file's end: zeros, as mapped */
		got += (size_t)n;
	}
	close(fd);
	if (got == 0 || memcmp(copy, (const void *)start, 64) != 0) {
		munmap(copy, len);
		return -EIO;
	}
	if (mprotect(copy, len, PROT_READ | PROT_EXEC) ||
	    mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)start) == MAP_FAILED) {
		ret = -errno;
		munmap(copy, len);
		return ret;
	}
	return 1;
}
