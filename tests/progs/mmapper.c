/*
 * mmapper.c: anonymous mappings made by the program itself, for --mmap.
 *
 *   map_keep:   mmap 1 MiB, kept                       (in use 1048576, 1 region)
 *   map_drop:   mmap 8 KiB, munmap'ed                  (mapped, not in use)
 *   map_grow:   mmap 4 KiB, mremap'ed to 16 KiB, kept  (2 regions mapped, 1 in use)
 *   file_map:   mmap of a file: not anonymous, not counted
 *   big_malloc: malloc(4 MiB), freed, and malloc(2 MiB), kept: glibc maps
 *               these itself inside malloc; they are heap blocks, not mmap.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[4];

NOINLINE static void *anon(size_t n)
{
	return mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0); /* ANON_MMAP */
}

NOINLINE void map_keep(void) /* DEF_MAP_KEEP */
{
	keep[0] = anon(1 << 20);
}

NOINLINE void map_drop(void) /* DEF_MAP_DROP */
{
	void *p = anon(8192);

	munmap(p, 8192);
}

NOINLINE void map_grow(void) /* DEF_MAP_GROW */
{
	void *p = anon(4096);

	keep[1] = mremap(p, 4096, 16384, MREMAP_MAYMOVE); /* MREMAP */
}

NOINLINE void file_map(void) /* DEF_FILE_MAP */
{
	int fd = open("/proc/self/exe", O_RDONLY);
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

	munmap(p, 4096);
	close(fd);
}

NOINLINE void big_malloc(void) /* DEF_BIG_MALLOC */
{
	free(malloc(4 << 20));
	keep[2] = malloc(2 << 20); /* BIG_MALLOC */
}

int main(void)
{
	map_keep();
	map_drop();
	map_grow();
	file_map();
	big_malloc();
	return 0;
}
