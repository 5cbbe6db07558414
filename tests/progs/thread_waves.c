/*
 * thread_waves.c: WAVES waves of NTHREADS short-lived threads (argv[1],
 * argv[2]; default 40 x 64), one wave after another, so that thread ids
 * run through many values and each wave's threads exit before the next
 * starts.  Every thread, in wave_work():
 *   10 x malloc(100), frees 9 of them;
 *   realloc(kept, 300)                  (kept: 300 bytes in use);
 *   calloc(3, 50), freed;
 *   reallocarray(NULL, 4, 25), freed.
 * So per thread: 13 allocations of 1000 + 300 + 150 + 100 = 1550 bytes,
 * one block of 300 bytes in use at exit.  Prints nothing.
 */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 256

static void *volatile kept[MAX_THREADS];

NOINLINE void *wave_work(void *arg) /* DEF_WAVE_WORK */
{
	long id = (long)arg;
	void *p[10];
	void *q;

	for (int i = 0; i < 10; i++)
		p[i] = malloc(100);
	for (int i = 1; i < 10; i++)
		free(p[i]);
	q = realloc(p[0], 300);
	q = q ? q : p[0];
	free(kept[id]); /* the previous wave's block of this slot */
	kept[id] = q;
	free(calloc(3, 50));
	free(reallocarray(NULL, 4, 25));
	return NULL;
}

int main(int argc, char **argv)
{
	int waves = argc > 1 ? atoi(argv[1]) : 40;
	int n = argc > 2 ? atoi(argv[2]) : 64;
	pthread_t t[MAX_THREADS];

	if (waves < 1 || n < 1 || n > MAX_THREADS)
		return 2;
	for (int w = 0; w < waves; w++) {
		for (long i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, wave_work, (void *)i) != 0)
				return 1;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	return 0;
}
