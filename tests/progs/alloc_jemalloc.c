/*
 * alloc_jemalloc.c: the malloc family and jemalloc's own API (mallocx,
 * rallocx, xallocx, dallocx, sdallocx), run under
 *   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
 * (not linked with -ljemalloc: memtrace must find the allocator that was
 * preloaded).  jemalloc's non-standard functions are declared weak here, so
 * the program links without jemalloc and says so (exit 2) when it is run
 * without it.  Expected numbers: tests/integration/test_allocators.py.
 *
 * xallocx(p, size, 0, 0) resizes in place and returns the block's real
 * size; memtrace takes a result >= size as success (a free of the old block
 * and an allocation of size bytes at the same address) and anything else as
 * "not resized" (nothing counted).  The three calls below are deterministic
 * in jemalloc 5: a shrink (the block stays valid, the result is at least
 * the smaller size), a growth within the block's size class (100 -> 110:
 * both in the 112-byte class) and a growth of a small block to a large
 * size, which can never happen in place.  The program checks each result
 * and exits 3 if jemalloc disagrees.
 *
 * Only write(2): stdio would allocate buffers of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* jemalloc's API (<jemalloc/jemalloc.h> without the library to link). */
extern void *mallocx(size_t size, int flags) __attribute__((weak));
extern void *rallocx(void *ptr, size_t size, int flags) __attribute__((weak));
extern size_t xallocx(void *ptr, size_t size, size_t extra, int flags) __attribute__((weak));
extern void dallocx(void *ptr, int flags) __attribute__((weak));
extern void sdallocx(void *ptr, size_t size, int flags) __attribute__((weak));
#define MALLOCX_LG_ALIGN(la) ((int)(la))
#define MALLOCX_ZERO ((int)0x40)

void *volatile keep[32];
void *volatile nothing; /* NULL, read at run time: free(NULL) is really called */
static int nkeep;

static void say(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(2, s, n);

		if (w <= 0)
			_exit(4);
		s += w;
		n -= (size_t)w;
	}
}

static void die(const char *why, int status)
{
	say("alloc_jemalloc: ");
	say(why);
	say("\n");
	_exit(status);
}

static void *need(void *p)
{
	if (!p)
		die("allocation failed", 3);
	return p;
}

/* 3 x malloc(100), one freed. */
NOINLINE void je_use_malloc(void) /* DEF_JE_USE_MALLOC */
{
	void *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = need(malloc(100)); /* JE_USE_MALLOC */
	keep[nkeep++] = p[0];
	keep[nkeep++] = p[1];
	free(p[2]);
}

/* calloc(10, 24), kept. */
NOINLINE void je_use_calloc(void) /* DEF_JE_USE_CALLOC */
{
	keep[nkeep++] = need(calloc(10, 24)); /* JE_USE_CALLOC */
}

/* malloc(64) -> realloc 1000 -> realloc 40 (kept); malloc(32) freed. */
NOINLINE void je_use_realloc(void) /* DEF_JE_USE_REALLOC */
{
	void *p = need(malloc(64));
	void *q;

	p = need(realloc(p, 1000));
	p = need(realloc(p, 40));
	keep[nkeep++] = p;
	q = need(malloc(32));
	free(q);
}

/* posix_memalign(64, 200) and aligned_alloc(128, 256), kept. */
NOINLINE void je_use_aligned(void) /* DEF_JE_USE_ALIGNED */
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 200) != 0)
		die("posix_memalign failed", 3);
	keep[nkeep++] = p;
	keep[nkeep++] = need(aligned_alloc(128, 256));
}

/* mallocx 300 and 500 (zeroed, 64-aligned) kept; mallocx 70 dallocx'ed. */
NOINLINE void je_use_mallocx(void) /* DEF_JE_USE_MALLOCX */
{
	void *p;

	keep[nkeep++] = need(mallocx(300, 0)); /* JE_USE_MALLOCX */
	keep[nkeep++] = need(mallocx(500, MALLOCX_ZERO | MALLOCX_LG_ALIGN(6))); /* JE_USE_MALLOCX_ALIGN */
	p = need(mallocx(70, 0));
	dallocx(p, 0);
}

/* mallocx 50 -> rallocx 5000 -> rallocx 20, kept. */
NOINLINE void je_use_rallocx(void) /* DEF_JE_USE_RALLOCX */
{
	void *p = need(mallocx(50, 0));

	p = need(rallocx(p, 5000, 0));
	p = need(rallocx(p, 20, 0)); /* JE_USE_RALLOCX */
	keep[nkeep++] = p;
}

/*
 * mallocx 4000, shrunk in place to 1000 (kept); mallocx 100 grown in place
 * to 110 (kept); mallocx 200, not grown to 100000, sdallocx'ed.
 */
NOINLINE void je_use_xallocx(void) /* DEF_JE_USE_XALLOCX */
{
	void *a = need(mallocx(4000, 0));
	void *b = need(mallocx(100, 0));
	void *c = need(mallocx(200, 0));

	if (xallocx(a, 1000, 0, 0) < 1000) /* JE_XALLOCX_SHRINK */
		die("xallocx shrink returned less than asked", 3);
	if (xallocx(b, 110, 0, 0) < 110) /* JE_XALLOCX_GROW */
		die("xallocx growth within the size class failed", 3);
	if (xallocx(c, 100000, 0, 0) >= 100000)
		die("xallocx grew a small block to 100000 in place", 3);
	keep[nkeep++] = a;
	keep[nkeep++] = b;
	sdallocx(c, 200, 0);
}

/* 4 x mallocx(128), sdallocx'ed; malloc(64), dallocx'ed. */
NOINLINE void je_use_sdallocx(void) /* DEF_JE_USE_SDALLOCX */
{
	void *p;

	for (int i = 0; i < 4; i++) {
		p = need(mallocx(128, 0));
		sdallocx(p, 128, 0);
	}
	p = need(malloc(64));
	dallocx(p, 0);
}

/* 3 x mallocx(333), kept, three calls below main. */
NOINLINE void je_leak_deep(void) /* DEF_JE_LEAK_DEEP */
{
	for (int i = 0; i < 3; i++)
		keep[nkeep++] = need(mallocx(333, 0)); /* JE_LEAK_DEEP */
}

NOINLINE void je_deep_b(void) /* DEF_JE_DEEP_B */
{
	je_leak_deep(); /* CALL_JE_LEAK_DEEP */
}

NOINLINE void je_deep_a(void) /* DEF_JE_DEEP_A */
{
	je_deep_b(); /* CALL_JE_DEEP_B */
}

int main(void)
{
	if (!mallocx || !rallocx || !xallocx || !dallocx || !sdallocx)
		die("jemalloc is not loaded (LD_PRELOAD=.../libjemalloc.so.2)", 2);
	je_use_malloc(); /* CALL_JE_USE_MALLOC */
	je_use_calloc();
	je_use_realloc();
	je_use_aligned();
	je_use_mallocx(); /* CALL_JE_USE_MALLOCX */
	je_use_rallocx(); /* CALL_JE_USE_RALLOCX */
	je_use_xallocx(); /* CALL_JE_USE_XALLOCX */
	je_use_sdallocx();
	je_deep_a(); /* CALL_JE_DEEP_A */
	free(nothing); /* free(NULL): a call, nothing freed */
	return 0;
}
