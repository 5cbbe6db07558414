/*
 * holder.c: the target of the "one instant" tests: a program that always
 * holds N heap blocks while it replaces them as fast as it can.
 *
 *   holder N realloc   each step realloc()s one block to another size:
 *                      a realloc frees and allocates in one call, so the
 *                      program holds exactly N blocks at every instant
 *   holder N malloc    each step malloc()s a new block, then free()s the
 *                      one it replaces: N or N+1 blocks at any instant
 *
 * It allocates its N blocks, writes "ready PID\n" and churns until a line
 * (or EOF) arrives on stdin; then it frees everything and exits 0.  Only
 * read/write/poll: stdio would allocate buffers of its own.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_N 65536

static void *slot[MAX_N];

static int stdin_ready(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

int main(int argc, char **argv)
{
	char line[64];
	long n = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	int use_realloc = argc == 3 && strcmp(argv[2], "realloc") == 0;
	unsigned long step = 0;
	int len;

	if (n <= 0 || n > MAX_N || (!use_realloc && strcmp(argv[2], "malloc"))) {
		(void)!write(2, "usage: holder N realloc|malloc\n", 31);
		return 2;
	}
	for (long i = 0; i < n; i++)
		slot[i] = malloc(32);
	len = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	if (write(1, line, (size_t)len) != len)
		return 3;
	for (;;) {
		long i = (long)(step % (unsigned long)n);
		size_t size = 32 + 16 * (step / (unsigned long)n % 4);

		if (i == 0 && stdin_ready())
			break;
		if (use_realloc) {
			void *p = realloc(slot[i], size);

			if (p)
				slot[i] = p;
		} else {
			void *p = malloc(size);

			if (p) {
				free(slot[i]);
				slot[i] = p;
			}
		}
		step++;
	}
	for (long i = 0; i < n; i++)
		free(slot[i]);
	return 0;
}
