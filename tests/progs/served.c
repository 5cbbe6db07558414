/*
 * served.c: the target of the --http tests: known heap in use by function,
 * and allocations made only when asked, so a test knows exactly what was
 * allocated in any window it chooses.
 *
 *   keep_small:  10 blocks of 1000 bytes, held until exit   (KEEP_SMALL)
 *   keep_large:  3 blocks of 4096 bytes, held until exit    (KEEP_LARGE)
 *   tick(K):     on each line "K" read from stdin, K blocks of 100 bytes
 *                allocated and freed (allocated grows, in use does not)
 *                (TICK); then "done K" is written
 *
 * It writes "ready PID" once it holds its blocks, and frees them and exits
 * 0 on EOF or a line "q".  Only read/write: stdio would allocate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile held[16];
void *volatile sink;

NOINLINE void keep_small(void)
{
	for (int i = 0; i < 10; i++)
		held[i] = malloc(1000); /* KEEP_SMALL */
}

NOINLINE void keep_large(void)
{
	for (int i = 0; i < 3; i++)
		held[10 + i] = malloc(4096); /* KEEP_LARGE */
}

NOINLINE void tick(int k)
{
	for (int i = 0; i < k; i++) {
		sink = malloc(100); /* TICK */
		free(sink);
	}
}

static void say(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(1, s, n);

		if (w <= 0)
			_exit(3);
		s += w;
		n -= (size_t)w;
	}
}

int main(void)
{
	char line[64], msg[64];
	size_t n = 0;

	keep_small();
	keep_large();
	snprintf(msg, sizeof(msg), "ready %d\n", (int)getpid());
	say(msg);
	for (;;) {
		char c;
		ssize_t r = read(0, &c, 1);

		if (r <= 0)
			break;
		if (c != '\n') {
			if (n < sizeof(line) - 1)
				line[n++] = c;
			continue;
		}
		line[n] = '\0';
		n = 0;
		if (!strcmp(line, "q"))
			break;
		tick(atoi(line));
		snprintf(msg, sizeof(msg), "done %d\n", atoi(line));
		say(msg);
	}
	for (int i = 0; i < 13; i++)
		free(held[i]);
	return 0;
}
