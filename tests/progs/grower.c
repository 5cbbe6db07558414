/*
 * grower.c N: the heap of round N of a program that leaks steadily, for
 * `memtrace report heap.*.pb.gz --growth` (one profile per N, each traced
 * from start to exit).  What is in use at exit, by function:
 *
 *   grow_steady: N x 1000 bytes        (grows by 1000 a round)
 *   flat_keep:   4 x 500 bytes         (the same every round)
 *   shrink:      (5 - N) x 300 bytes   (shrinks; none from N = 5 on)
 *   jump:        8192 bytes from N = 4 on, nothing before (a one-off jump)
 *   churn:       N x 64 bytes, each freed (allocated grows, in use 0)
 *
 * Markers in comments (e.g. GROW_STEADY) name the lines of the calls.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[64];
static int nkeep;

static void hold(void *p)
{
	if (nkeep < 64)
		keep[nkeep++] = p;
}

NOINLINE void grow_steady(int n) /* DEF_GROW_STEADY */
{
	for (int i = 0; i < n; i++)
		hold(malloc(1000)); /* GROW_STEADY */
}

NOINLINE void flat_keep(void) /* DEF_FLAT_KEEP */
{
	for (int i = 0; i < 4; i++)
		hold(malloc(500)); /* FLAT_KEEP */
}

NOINLINE void shrink(int n) /* DEF_SHRINK */
{
	for (int i = n; i < 5; i++)
		hold(malloc(300)); /* SHRINK */
}

NOINLINE void jump(int n) /* DEF_JUMP */
{
	if (n >= 4)
		hold(malloc(8192)); /* JUMP */
}

NOINLINE void churn(int n) /* DEF_CHURN */
{
	for (int i = 0; i < n; i++)
		free(malloc(64)); /* CHURN */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	if (n < 1 || n > 32)
		return 2;
	grow_steady(n);
	flat_keep();
	shrink(n);
	jump(n);
	churn(n);
	return 0;
}
