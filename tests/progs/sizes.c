/*
 * sizes.c: allocations at the edges of the power-of-two size classes of
 * memtrace's size histogram: 0, 1, 2, 3, 4, 2^10 - 1, 2^10, 2^10 + 1 (by
 * malloc, calloc and realloc), 2^30 - 1 and 2^30 (the last class, 1 GiB
 * and more; mapped by glibc, never touched, and freed).
 *
 * Markers in comments (e.g. CLASS_EDGES) are looked up by the integration
 * tests to compute expected line numbers; keep each on the line it names.
 * The expected numbers live in tests/integration/programs.py.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[16];
static int nkeep;

static void hold(void *p)
{
	keep[nkeep++] = p;
}

/* 8 blocks, kept: 0 + 1 + 2 + 3 + 4 + 1023 + 1024 + 1025 = 3082 bytes. */
NOINLINE void class_edges(void) /* DEF_CLASS_EDGES */
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 1023, 1024, 1025 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		hold(malloc(sizes[i])); /* CLASS_EDGES */
}

/* calloc(3, 341) = 1023 and calloc(2, 512) = 1024 bytes, kept. */
NOINLINE void calloc_edges(void) /* DEF_CALLOC_EDGES */
{
	static const size_t n[] = { 3, 2 }, size[] = { 341, 512 };

	for (int i = 0; i < 2; i++)
		hold(calloc(n[i], size[i])); /* CALLOC_EDGES */
}

/* malloc(4095), then realloc to 4096: two allocations, 4096 bytes kept. */
NOINLINE void realloc_edge(void) /* DEF_REALLOC_EDGE */
{
	void *p = malloc(4095); /* REALLOC_EDGE_MALLOC */

	hold(realloc(p, 4096)); /* REALLOC_EDGE */
}

/* 2^30 - 1 and 2^30 bytes, both freed. */
NOINLINE void huge(void) /* DEF_HUGE */
{
	free(malloc((1UL << 30) - 1)); /* HUGE_BELOW */
	free(malloc(1UL << 30)); /* HUGE_LAST */
}

/* 6 x 100 bytes, each freed. */
NOINLINE void churn(void) /* DEF_CHURN */
{
	for (int i = 0; i < 6; i++)
		free(malloc(100)); /* CHURN */
}

int main(void)
{
	class_edges(); /* CALL_CLASS_EDGES */
	calloc_edges(); /* CALL_CALLOC_EDGES */
	realloc_edge(); /* CALL_REALLOC_EDGE */
	huge(); /* CALL_HUGE */
	churn(); /* CALL_CHURN */
	return 0;
}
