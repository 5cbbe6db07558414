/*
 * top_grow.c: the target of `memtrace top`'s tests (test_top.py).
 *
 *   top_grow steps       says "ready PID", then for each line on stdin:
 *                        g: grow_heap() keeps GROW_N blocks of GROW_SIZE;
 *                        f: shrink_heap() frees FREE_N of them (the
 *                        oldest kept); q or EOF: exits.  "ok" after each.
 *   top_grow hold N      hold_heap() keeps N bytes, then sleeps SECS_HOLD s
 *   top_grow steady N T  grow_heap_steady() keeps N bytes every 100 ms, T
 *                        times, then sleeps 1 s
 *
 * The test reads the sizes from the #defines below.  Only read(2),
 * write(2), nanosleep and the malloc family: no stdio.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define GROW_N 10
#define GROW_SIZE 100000
#define FREE_N 4
#define SECS_HOLD 3
#define MAX_KEPT 4096

void *volatile kept[MAX_KEPT];
static int nkept, nfreed;

static void say(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(1, s, n);

		if (w <= 0)
			_exit(3);
		s += w;
		n -= (size_t)w;
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void keep(void *p)
{
	if (!p)
		_exit(4);
	memset(p, 1, 64);
	if (nkept < MAX_KEPT)
		kept[nkept++] = p;
}

NOINLINE void grow_heap(void)
{
	for (int i = 0; i < GROW_N; i++)
		keep(malloc(GROW_SIZE)); /* GROW */
}

NOINLINE void shrink_heap(void)
{
	for (int i = 0; i < FREE_N && nfreed < nkept; i++) {
		free(kept[nfreed]); /* SHRINK */
		kept[nfreed++] = NULL;
	}
}

NOINLINE void hold_heap(long n)
{
	keep(malloc((size_t)n)); /* HOLD */
}

NOINLINE void grow_heap_steady(long n)
{
	keep(malloc((size_t)n)); /* STEADY */
}

static int steps(void)
{
	char c, num[24];
	long pid = (long)getpid();
	int i = (int)sizeof(num) - 1;

	num[i] = '\0';
	do {
		num[--i] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid && i > 0);
	say("ready ");
	say(&num[i]);
	say("\n");
	while (read(0, &c, 1) == 1) {
		if (c == 'g')
			grow_heap();
		else if (c == 'f')
			shrink_heap();
		else if (c == 'q')
			break;
		else
			continue;
		say("ok\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "steps") == 0)
		return steps();
	if (argc >= 3 && strcmp(argv[1], "hold") == 0) {
		hold_heap(atol(argv[2]));
		sleep_ms(SECS_HOLD * 1000L);
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "steady") == 0) {
		for (long t = atol(argv[3]); t > 0; t--) {
			grow_heap_steady(atol(argv[2]));
			sleep_ms(100);
		}
		sleep_ms(1000);
		return 0;
	}
	return 2;
}
