/*
 * alloc_tcmalloc.c: the malloc family and gperftools' tc_* API, linked
 * with -ltcmalloc (build/tests/progs/alloc_tcmalloc) and with
 * -ltcmalloc_minimal (build/tests/progs/alloc_tcmalloc_minimal).  Both
 * libraries define malloc, free, ... as aliases of tc_malloc, tc_free, ...
 * (one address, two names): each call must count once.
 *
 * libtcmalloc is C++ and pulls in libstdc++, whose start-up code allocates
 * (its emergency exception pool) through tcmalloc before main: the header
 * totals include it, the program's functions do not.
 * Expected numbers: tests/integration/test_allocators.py.
 *
 * Only write(2): stdio would allocate buffers of its own.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gperftools/tcmalloc.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[32];
void *volatile nothing; /* NULL, read at run time: free(NULL) is really called */
static int nkeep;

static void *need(void *p)
{
	static const char msg[] = "alloc_tcmalloc: allocation failed\n";

	if (!p) {
		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(4);
		_exit(3);
	}
	return p;
}

/* 3 x malloc(100), one freed. */
NOINLINE void tcp_use_malloc(void) /* DEF_TCP_USE_MALLOC */
{
	void *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = need(malloc(100)); /* TCP_USE_MALLOC */
	keep[nkeep++] = p[0];
	keep[nkeep++] = p[1];
	free(p[2]);
}

/* calloc(10, 24), kept. */
NOINLINE void tcp_use_calloc(void) /* DEF_TCP_USE_CALLOC */
{
	keep[nkeep++] = need(calloc(10, 24)); /* TCP_USE_CALLOC */
}

/* malloc(64) -> realloc 1000 -> realloc 40, kept. */
NOINLINE void tcp_use_realloc(void) /* DEF_TCP_USE_REALLOC */
{
	void *p = need(malloc(64));

	p = need(realloc(p, 1000));
	p = need(realloc(p, 40)); /* TCP_USE_REALLOC */
	keep[nkeep++] = p;
}

/* posix_memalign(64, 200), aligned_alloc(128, 256), memalign(32, 100), kept. */
NOINLINE void tcp_use_aligned(void) /* DEF_TCP_USE_ALIGNED */
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 200) != 0)
		need(NULL);
	keep[nkeep++] = p;
	keep[nkeep++] = need(aligned_alloc(128, 256));
	keep[nkeep++] = need(memalign(32, 100));
}

/*
 * gperftools' own names: tc_malloc 300 (kept), tc_malloc 70 (tc_free),
 * tc_calloc(5, 20) (kept), tc_malloc 30 -> tc_realloc 60 (kept),
 * tc_memalign(64, 128) (kept), tc_posix_memalign(8192, 96) (tc_free_sized),
 * tc_malloc 10 (tc_cfree).
 *
 * The 8 KiB alignment is deliberate: libtcmalloc's tc_free_sized (also
 * its sized operator delete) hands a block aligned to its 8 KiB page over
 * to tc_free, a call from inside another that must not count again.
 */
NOINLINE void tcp_use_tc_api(void) /* DEF_TCP_USE_TC_API */
{
	void *p;

	keep[nkeep++] = need(tc_malloc(300)); /* TCP_TC_MALLOC */
	p = need(tc_malloc(70));
	tc_free(p);
	keep[nkeep++] = need(tc_calloc(5, 20)); /* TCP_TC_CALLOC */
	p = need(tc_malloc(30));
	keep[nkeep++] = need(tc_realloc(p, 60)); /* TCP_TC_REALLOC */
	keep[nkeep++] = need(tc_memalign(64, 128)); /* TCP_TC_MEMALIGN */
	p = NULL;
	if (tc_posix_memalign(&p, 8192, 96) != 0)
		need(NULL);
	tc_free_sized(p, 96);
	p = need(tc_malloc(10));
	tc_cfree(p);
}

/* 3 x malloc(333), kept, three calls below main. */
NOINLINE void tcp_leak_deep(void) /* DEF_TCP_LEAK_DEEP */
{
	for (int i = 0; i < 3; i++)
		keep[nkeep++] = need(malloc(333)); /* TCP_LEAK_DEEP */
}

NOINLINE void tcp_deep_b(void) /* DEF_TCP_DEEP_B */
{
	tcp_leak_deep(); /* CALL_TCP_LEAK_DEEP */
}

NOINLINE void tcp_deep_a(void) /* DEF_TCP_DEEP_A */
{
	tcp_deep_b(); /* CALL_TCP_DEEP_B */
}

int main(void)
{
	tcp_use_malloc(); /* CALL_TCP_USE_MALLOC */
	tcp_use_calloc();
	tcp_use_realloc();
	tcp_use_aligned();
	tcp_use_tc_api(); /* CALL_TCP_USE_TC_API */
	tcp_deep_a(); /* CALL_TCP_DEEP_A */
	free(nothing); /* free(NULL): a call, nothing freed */
	return 0;
}
