/*
 * alloc_static.c: the malloc family in a statically linked program
 * (gcc -static): the executable itself defines malloc, so memtrace must
 * probe it there ("allocator: executable ...").  Static glibc's start-up
 * code allocates too (in _dl_* functions): the header totals include that,
 * the program's functions do not.
 * Expected numbers: tests/integration/test_allocators.py.
 *
 * Only write(2): stdio would allocate buffers of its own.
 */
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[32];
void *volatile nothing; /* NULL, read at run time: free(NULL) is really called */
static int nkeep;

static void *need(void *p)
{
	static const char msg[] = "alloc_static: allocation failed\n";

	if (!p) {
		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(4);
		_exit(3);
	}
	return p;
}

/* 3 x malloc(100), one freed. */
NOINLINE void st_use_malloc(void) /* DEF_ST_USE_MALLOC */
{
	void *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = need(malloc(100)); /* ST_USE_MALLOC */
	keep[nkeep++] = p[0];
	keep[nkeep++] = p[1];
	free(p[2]);
}

/* calloc(10, 24), kept. */
NOINLINE void st_use_calloc(void) /* DEF_ST_USE_CALLOC */
{
	keep[nkeep++] = need(calloc(10, 24)); /* ST_USE_CALLOC */
}

/* malloc(64) -> realloc 1000 -> reallocarray(5, 8) = 40, kept. */
NOINLINE void st_use_realloc(void) /* DEF_ST_USE_REALLOC */
{
	void *p = need(malloc(64));

	p = need(realloc(p, 1000));
	p = need(reallocarray(p, 5, 8)); /* ST_USE_REALLOC */
	keep[nkeep++] = p;
}

/*
 * posix_memalign(64, 200), aligned_alloc(128, 256), memalign(32, 100),
 * kept; valloc(50), freed.
 */
NOINLINE void st_use_aligned(void) /* DEF_ST_USE_ALIGNED */
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 200) != 0)
		need(NULL);
	keep[nkeep++] = p;
	keep[nkeep++] = need(aligned_alloc(128, 256));
	keep[nkeep++] = need(memalign(32, 100));
	p = need(valloc(50));
	free(p);
}

/* 3 x malloc(333), kept, three calls below main. */
NOINLINE void st_leak_deep(void) /* DEF_ST_LEAK_DEEP */
{
	for (int i = 0; i < 3; i++)
		keep[nkeep++] = need(malloc(333)); /* ST_LEAK_DEEP */
}

NOINLINE void st_deep_b(void) /* DEF_ST_DEEP_B */
{
	st_leak_deep(); /* CALL_ST_LEAK_DEEP */
}

NOINLINE void st_deep_a(void) /* DEF_ST_DEEP_A */
{
	st_deep_b(); /* CALL_ST_DEEP_B */
}

int main(void)
{
	st_use_malloc(); /* CALL_ST_USE_MALLOC */
	st_use_calloc();
	st_use_realloc(); /* CALL_ST_USE_REALLOC */
	st_use_aligned();
	st_deep_a(); /* CALL_ST_DEEP_A */
	free(nothing); /* free(NULL): a call, nothing freed */
	return 0;
}
