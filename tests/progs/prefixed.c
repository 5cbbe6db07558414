/*
 * prefixed.c: uses libprefixed.so's je_malloc/je_calloc/je_free, traced
 * with --allocator PATH --symbol-prefix je_:
 *   prefixed_leak: 3 x je_malloc(100), one je_free'd  (in use 200 B in 2)
 *   je_calloc(4, 25) kept                             (in use 100 B in 1)
 */
#include <stddef.h>

#define NOINLINE __attribute__((noinline))

void *je_malloc(size_t n);
void *je_calloc(size_t n, size_t size);
void je_free(void *p);

void *volatile keep[4];

NOINLINE void prefixed_leak(void) /* DEF_PREFIXED_LEAK */
{
	for (int i = 0; i < 3; i++)
		keep[i] = je_malloc(100); /* PREFIXED_MALLOC */
	je_free(keep[0]);
}

int main(void)
{
	prefixed_leak();
	keep[3] = je_calloc(4, 25);
	return 0;
}
