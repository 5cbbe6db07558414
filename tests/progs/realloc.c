/*
 * realloc.c: realloc chains, realloc(NULL, n), realloc(p, 0), reallocarray.
 * Expected numbers: tests/integration/programs.py.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[64];
static int nkeep;

static void hold(void *p)
{
	keep[nkeep++] = p;
}

/* malloc(10) -> realloc 100 -> realloc 1000, kept: 1110 bytes in 3
 * allocations, 1000 bytes in 1 object in use. */
NOINLINE void realloc_chain(void) /* DEF_REALLOC_CHAIN */
{
	char *p = malloc(10); /* CHAIN_MALLOC */

	p = realloc(p, 100); /* CHAIN_REALLOC_100 */
	p = realloc(p, 1000); /* CHAIN_REALLOC_1000 */
	hold(p);
}

/* realloc(NULL, 300) is malloc(300): kept. */
NOINLINE void realloc_null(void) /* DEF_REALLOC_NULL */
{
	hold(realloc(NULL, 300)); /* REALLOC_NULL */
}

/* malloc(50) then realloc(p, 0), which frees it (glibc returns NULL). */
NOINLINE void realloc_zero(void) /* DEF_REALLOC_ZERO */
{
	void *p = malloc(50); /* REALLOC_ZERO_MALLOC */
	void *q = realloc(p, 0); /* REALLOC_ZERO */

	if (q) /* not with glibc: REALLOC_ZERO_BYTES_FREES */
		free(q);
}

/* reallocarray(NULL, 10, 16) = 160 bytes, then (p, 20, 16) = 320 kept. */
NOINLINE void rarray(void) /* DEF_RARRAY */
{
	void *p = reallocarray(NULL, 10, 16); /* RARRAY_NEW */

	p = reallocarray(p, 20, 16); /* RARRAY_GROW */
	hold(p);
}

/* Shrinking in place: malloc(4000) -> realloc 2000 -> realloc 3000; freed at
 * the end: 9000 bytes in 3 allocations, nothing in use. */
NOINLINE void realloc_shrink(void) /* DEF_REALLOC_SHRINK */
{
	char *p = malloc(4000); /* SHRINK_MALLOC */

	p = realloc(p, 2000); /* SHRINK_REALLOC_2000 */
	p = realloc(p, 3000); /* SHRINK_REALLOC_3000 */
	free(p);
}

int main(void)
{
	realloc_chain(); /* CALL_REALLOC_CHAIN */
	realloc_null(); /* CALL_REALLOC_NULL */
	realloc_zero(); /* CALL_REALLOC_ZERO */
	rarray(); /* CALL_RARRAY */
	realloc_shrink(); /* CALL_REALLOC_SHRINK */
	return 0;
}
