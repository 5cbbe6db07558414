/*
 * prefixed_alloc.c: libprefixed.so, an allocator whose functions carry a
 * prefix, like a jemalloc built with --with-jemalloc-prefix=je_.  It hands
 * out blocks of a static arena (so nothing below it is a malloc call).
 */
#include <stddef.h>
#include <string.h>

static _Alignas(16) char arena[1 << 16];
static size_t used;

void *je_malloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(arena) - used)
		return NULL;
	p = arena + used;
	used += n;
	return p;
}

void *je_calloc(size_t n, size_t size)
{
	void *p = je_malloc(n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

void je_free(void *p)
{
	(void)p; /* a bump allocator never reuses memory */
}
