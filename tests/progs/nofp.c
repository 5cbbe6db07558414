/*
 * nofp.c: built -O2 -fomit-frame-pointer, like Debian's binaries: stacks
 * can only be walked with the call frame information.  Each chain below
 * leaks one block of a size of its own, so the tests find it by size:
 *   100 bytes  main -> chain_a -> chain_b -> chain_c -> malloc
 *   200 bytes  main -> sort_leak -> qsort (libc) ... -> cmp_leak -> malloc
 *   300 bytes  thread_main -> thread_b -> malloc, on a second thread
 *   400 bytes  main -> call_plugin -> plugin_outer -> plugin_inner -> malloc
 *              (libnofp_plugin.so, dlopened, then 0.5 s for its table)
 *   500 bytes  early_sort (a constructor, run by libc before main) ->
 *              qsort (libc) ... -> cmp_early -> malloc: the program's
 *              first allocation, as soon as memtrace lets it run, through
 *              libc twice (the tables of the files it maps at its start
 *              must all be in place by then)
 * Every function that allocates or calls keeps its frame (noinline, and
 * work after the call so that no call is a tail call), and the functions
 * hold values across calls in callee-saved registers, rbp among them.
 *
 * Markers in comments are looked up by the tests (tests/integration/
 * test_unwind.py); keep each on the line it names.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[8];
volatile unsigned long spill; /* values live across calls */

/* Registers busy across the call, so that rbp holds data, not a frame. */
#define CLOBBER(x) __asm__ volatile("" : "+r"(x) : : "rbx", "rbp", "r12", "r13", "r14", "r15", "memory")

NOINLINE void *chain_c(size_t n)
{
	unsigned long v = spill + n;
	void *p = malloc(n); /* CHAIN_C */

	CLOBBER(v);
	spill = v;
	return p;
}

NOINLINE void *chain_b(size_t n)
{
	char buf[64];
	void *p;

	memset(buf, (int)n, sizeof(buf));
	p = chain_c(n + (size_t)(buf[(n & 63)] - (char)n)); /* CHAIN_B */
	spill += (unsigned long)buf[3];
	return p;
}

NOINLINE void *chain_a(size_t n)
{
	unsigned long v = spill;
	void *p = chain_b(n); /* CHAIN_A */

	CLOBBER(v);
	spill = v + 1;
	return p;
}

static int cmp_calls;

NOINLINE int cmp_leak(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (cmp_calls++ == 0)
		keep[1] = malloc(200); /* CMP_LEAK */
	return (x > y) - (x < y);
}

NOINLINE void sort_leak(void)
{
	int v[32];

	for (int i = 0; i < 32; i++)
		v[i] = (i * 7919) % 32;
	qsort(v, 32, sizeof(v[0]), cmp_leak); /* SORT_LEAK */
	spill += (unsigned long)v[5];
}

static int early_calls;

NOINLINE int cmp_early(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (early_calls++ == 0)
		keep[4] = malloc(500); /* CMP_EARLY */
	return (x > y) - (x < y);
}

__attribute__((constructor)) NOINLINE void early_sort(void)
{
	int v[16];

	for (int i = 0; i < 16; i++)
		v[i] = (i * 7919) % 16;
	qsort(v, 16, sizeof(v[0]), cmp_early); /* EARLY_SORT */
	spill += (unsigned long)v[3];
}

NOINLINE void *thread_b(size_t n)
{
	unsigned long v = spill;
	void *p = malloc(n); /* THREAD_B */

	CLOBBER(v);
	spill = v;
	return p;
}

NOINLINE void *thread_main(void *arg)
{
	void *p = thread_b(300); /* THREAD_MAIN */

	keep[2] = p;
	spill += (unsigned long)arg;
	return NULL;
}

NOINLINE void call_plugin(void *(*outer)(size_t))
{
	void *p = outer(400); /* CALL_PLUGIN */

	keep[3] = p;
	spill++;
}

int main(int argc, char **argv)
{
	void *(*outer)(size_t);
	pthread_t t;
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: nofp PATH/libnofp_plugin.so\n");
		return 2;
	}
	keep[0] = chain_a(100); /* MAIN_CHAIN */
	sort_leak(); /* MAIN_SORT */
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 1;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 1;
	usleep(500000); /* memtrace makes the new library's table */
	outer = (void *(*)(size_t))dlsym(h, "plugin_outer");
	if (!outer)
		return 1;
	call_plugin(outer); /* MAIN_PLUGIN */
	return (int)(spill & 0); /* spill used */
}
