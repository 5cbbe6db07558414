/*
 * threads.c: 4 threads allocate at the same time (released together by a
 * barrier) from one named function.  Thread i (0..3) makes NALLOC blocks
 * of 100 * (i + 1) bytes and keeps the first NKEEP of them.
 * Expected numbers: tests/integration/programs.py.
 */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NTHREADS 4
#define NALLOC 2000
#define NKEEP 100

static pthread_barrier_t start;
void *volatile keep[NTHREADS][NKEEP];

NOINLINE void *worker(void *arg) /* DEF_WORKER */
{
	long id = (long)arg;
	size_t size = 100 * (size_t)(id + 1);

	pthread_barrier_wait(&start);
	for (int i = 0; i < NALLOC; i++) {
		void *p = malloc(size); /* WORKER_MALLOC */

		if (i < NKEEP)
			keep[id][i] = p;
		else
			free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	pthread_barrier_init(&start, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	return 0;
}
