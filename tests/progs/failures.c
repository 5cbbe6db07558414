/*
 * failures.c: allocator calls that fail.  A NULL result is no allocation,
 * and a failed realloc frees nothing: only the first malloc(40) counts, and
 * it stays in use.
 *
 * Sizes are SIZE_MAX or overflow: valgrind 3.19 rejects those up front and
 * counts nothing (with a size that is merely too large, e.g. SIZE_MAX / 2,
 * valgrind counts a failed realloc as one allocation of that size plus one
 * free, which glibc's numbers do not).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[16];
static volatile size_t huge = SIZE_MAX;
static volatile size_t half = SIZE_MAX / 2;

/* The one allocation: malloc(40), kept although two reallocs fail on it. */
NOINLINE void fail_realloc(void) /* DEF_FAIL_REALLOC */
{
	void *q;

	keep[0] = malloc(40); /* FAIL_REALLOC_MALLOC */
	q = realloc(keep[0], huge); /* FAIL_REALLOC */
	if (q)
		keep[0] = q;
	q = reallocarray(keep[0], half, 4); /* FAIL_REALLOCARRAY */
	if (q)
		keep[0] = q;
}

/* Five calls that return NULL (or ENOMEM): nothing allocated. */
NOINLINE void fail_others(void) /* DEF_FAIL_OTHERS */
{
	void *p = NULL;

	keep[3] = malloc(huge);
	keep[4] = calloc(half, 4);
	if (posix_memalign(&p, 64, huge) == 0)
		keep[5] = p;
	keep[6] = aligned_alloc(64, huge);
	keep[7] = memalign(64, huge);
}

int main(void)
{
	fail_realloc(); /* CALL_FAIL_REALLOC */
	fail_others();
	return 0;
}
