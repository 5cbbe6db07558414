/*
 * sampled.c: the program of the sampling accuracy test
 * (tests/integration/test_sampling.py), whose allocations are known
 * exactly.  Two threads allocate in mixed sizes through four functions:
 * churn_small and churn_large free every block they allocate, leak_small
 * and leak_large free none.  `sampled` (the fine plan, for -s 16384)
 * allocates about 1.7 GB in blocks of 16 B to 64 KiB; `sampled coarse`
 * (for -s 524288) about 10 GB in blocks of 1 KiB to 4 MiB, 4.7 GB of them
 * leaked (address space only: one byte of each block is touched).
 *
 * Every size comes from a splitmix64 stream of its own, one per thread and
 * function, so the order in which the functions run changes nothing: the
 * test recomputes each size with the same generator.  A size is drawn
 * log-uniform: a power-of-two band [2^b, 2^(b+1)) with b uniform in
 * [lo, hi), then a size uniform in the band.
 *
 * It makes no other allocation of its own (no stdio); glibc adds one
 * calloc per thread it starts.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 2
#define ROUNDS 100
#define WINDOW 256   /* blocks a churning function keeps at a time */

/* Per thread: how many blocks each function allocates, in which bands.
 * Kept in step with PLANS in tests/integration/test_sampling.py. */
enum { CHURN_SMALL, CHURN_LARGE, LEAK_SMALL, LEAK_LARGE, NFUNCS };
struct plan {
	unsigned lo, hi;  /* bands 2^lo .. 2^hi - 1 bytes */
	unsigned n;       /* blocks per thread, a multiple of ROUNDS */
};
static const struct plan fine[NFUNCS] = {
	[CHURN_SMALL] = { 4, 12, 100000 },
	[CHURN_LARGE] = { 12, 16, 30000 },
	[LEAK_SMALL] = { 4, 10, 120000 },
	[LEAK_LARGE] = { 13, 16, 2000 },
};
static const struct plan coarse[NFUNCS] = {
	[CHURN_SMALL] = { 10, 18, 20000 },
	[CHURN_LARGE] = { 18, 22, 1000 },
	[LEAK_SMALL] = { 12, 19, 8000 },
	[LEAK_LARGE] = { 19, 22, 800 },
};
static const struct plan *plan = fine;

struct thread {
	unsigned id;
	uint64_t rng[NFUNCS];
	void *small[WINDOW], *large[WINDOW];
	unsigned nsmall, nlarge;
};

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t next_size(struct thread *t, int f)
{
	unsigned b = plan[f].lo +
		     (unsigned)(splitmix64(&t->rng[f]) % (plan[f].hi - plan[f].lo));

	return ((size_t)1 << b) + splitmix64(&t->rng[f]) % ((uint64_t)1 << b);
}

/* Keep P in the window, freeing the block it replaces. */
static void keep(void **window, unsigned *n, void *p)
{
	unsigned slot = (*n)++ % WINDOW;

	free(window[slot]);
	window[slot] = p;
}

static void touch(void *p)
{
	if (!p)
		abort();
	*(volatile char *)p = 1;
}

static void churn_small(struct thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		void *p = malloc(next_size(t, CHURN_SMALL));

		touch(p);
		keep(t->small, &t->nsmall, p);
	}
}

static void churn_large(struct thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		void *p = malloc(next_size(t, CHURN_LARGE));

		touch(p);
		keep(t->large, &t->nlarge, p);
	}
}

static void leak_small(struct thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		touch(calloc(1, next_size(t, LEAK_SMALL)));
}

static void leak_large(struct thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		touch(malloc(next_size(t, LEAK_LARGE)));
}

static void *worker(void *arg)
{
	struct thread *t = arg;

	for (int f = 0; f < NFUNCS; f++)
		t->rng[f] = ((uint64_t)(t->id + 1) << 8) | (uint64_t)f;
	for (unsigned r = 0; r < ROUNDS; r++) {
		churn_small(t, plan[CHURN_SMALL].n / ROUNDS);
		churn_large(t, plan[CHURN_LARGE].n / ROUNDS);
		leak_small(t, plan[LEAK_SMALL].n / ROUNDS);
		leak_large(t, plan[LEAK_LARGE].n / ROUNDS);
	}
	for (unsigned i = 0; i < WINDOW; i++) {
		free(t->small[i]);
		free(t->large[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct thread threads[THREADS];
	pthread_t tid[THREADS];

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "coarse") != 0))
		return 2;  /* usage: sampled [coarse] */
	if (argc == 2)
		plan = coarse;

	for (unsigned i = 0; i < THREADS; i++) {
		threads[i].id = i;
		if (pthread_create(&tid[i], NULL, worker, &threads[i]))
			return 1;
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
