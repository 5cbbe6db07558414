/*
 * inline.c: built with -O2.  inl_alloc is always_inline and calls malloc,
 * so the allocator's caller is an inlined frame inside outer_fn: memtrace
 * must show inl_alloc as a frame of its own, marked (inlined).
 * Expected numbers: tests/integration/programs.py.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

void *volatile keep[8];

static inline __attribute__((always_inline)) void *inl_alloc(size_t n) /* DEF_INL_ALLOC */
{
	void *p = malloc(n); /* INL_MALLOC */

	keep[7] = p; /* a store after the call: no tail call to malloc */
	return p;
}

/* 96 bytes through the inlined helper, kept. */
NOINLINE void outer_fn(void) /* DEF_OUTER_FN */
{
	keep[0] = inl_alloc(96); /* CALL_INL_ALLOC */
}

/* A plain -O2 function: 48 bytes, kept. */
NOINLINE void plain_o2(void) /* DEF_PLAIN_O2 */
{
	keep[1] = malloc(48); /* PLAIN_O2 */
	keep[6] = 0;
}

int main(void)
{
	outer_fn(); /* CALL_OUTER_FN */
	plain_o2(); /* CALL_PLAIN_O2 */
	keep[5] = 0;
	return 0;
}
