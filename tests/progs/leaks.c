/*
 * leaks.c: leaks of known sizes from named functions at stack depths 1, 3
 * and 5, a calloc leak, a malloc(0) leak, blocks that are all freed and a
 * function that frees half of what it allocates.
 *
 * Markers in comments (e.g. LEAK_ONE) are looked up by the integration
 * tests to compute expected line numbers; keep each on the line it names.
 * The expected numbers live in tests/integration/programs.py.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[64];
static int nkeep;
void *volatile nothing; /* NULL, read at run time: free(NULL) is really called */

static void hold(void *p)
{
	keep[nkeep++] = p;
}

/* Depth 1: main -> leak_one.  3 x 100 bytes. */
NOINLINE void leak_one(void) /* DEF_LEAK_ONE */
{
	for (int i = 0; i < 3; i++)
		hold(malloc(100)); /* LEAK_ONE */
}

/* Depth 3: main -> depth3_a -> depth3_b -> leak_three.  2 x 1000 bytes. */
NOINLINE void leak_three(void) /* DEF_LEAK_THREE */
{
	for (int i = 0; i < 2; i++)
		hold(malloc(1000)); /* LEAK_THREE */
}

NOINLINE void depth3_b(void)
{
	leak_three(); /* CALL_LEAK_THREE */
}

NOINLINE void depth3_a(void)
{
	depth3_b(); /* CALL_DEPTH3_B */
}

/* Depth 5: main -> depth5_a -> ... -> depth5_d -> leak_five.  5 x 77 bytes. */
NOINLINE void leak_five(void) /* DEF_LEAK_FIVE */
{
	for (int i = 0; i < 5; i++)
		hold(malloc(77)); /* LEAK_FIVE */
}

NOINLINE void depth5_d(void)
{
	leak_five(); /* CALL_LEAK_FIVE */
}

NOINLINE void depth5_c(void)
{
	depth5_d(); /* CALL_DEPTH5_D */
}

NOINLINE void depth5_b(void)
{
	depth5_c(); /* CALL_DEPTH5_C */
}

NOINLINE void depth5_a(void)
{
	depth5_b(); /* CALL_DEPTH5_B */
}

/* calloc(10, 24) twice: 2 x 240 bytes. */
NOINLINE void calloc_leak(void) /* DEF_CALLOC_LEAK */
{
	for (int i = 0; i < 2; i++)
		hold(calloc(10, 24)); /* CALLOC_LEAK */
}

/* malloc(0) returns a unique pointer: 1 object of 0 bytes. */
NOINLINE void zero_leak(void) /* DEF_ZERO_LEAK */
{
	hold(malloc(0)); /* ZERO_LEAK */
}

/* 10 x 64 bytes, every one freed: nothing in use. */
NOINLINE void churn(void) /* DEF_CHURN */
{
	for (int i = 0; i < 10; i++) {
		void *p = malloc(64); /* CHURN */
		free(p);
	}
}

/* 4 x 256 bytes, two of them freed: 2 x 256 in use. */
NOINLINE void half_freed(void) /* DEF_HALF_FREED */
{
	void *p[4];

	for (int i = 0; i < 4; i++)
		p[i] = malloc(256); /* HALF_FREED */
	free(p[1]);
	free(p[3]);
	hold(p[0]);
	hold(p[2]);
}

int main(void)
{
	leak_one(); /* CALL_LEAK_ONE */
	depth3_a(); /* CALL_DEPTH3_A */
	depth5_a(); /* CALL_DEPTH5_A */
	calloc_leak(); /* CALL_CALLOC_LEAK */
	zero_leak(); /* CALL_ZERO_LEAK */
	churn(); /* CALL_CHURN */
	half_freed(); /* CALL_HALF_FREED */
	free(nothing); /* free(NULL): a call, but nothing freed */
	return 0;
}
