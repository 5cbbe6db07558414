/*
 * waiter.c: the target of the -p tests.
 *
 *   1. allocates PRE blocks (before memtrace attaches), writes
 *      "ready PID\n" to stdout and waits for a line on stdin;
 *   2. frees the PRE blocks (untracked frees: never subtracted), leaks
 *      known blocks, allocates and frees others, writes "done\n";
 *   3. waits for another line (or EOF) on stdin and exits 0.
 *
 * Only read(2)/write(2): stdio would allocate buffers of its own.
 * Expected numbers: tests/integration/programs.py.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define PRE 5

void *volatile keep[16];
static void *pre[PRE];

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

/* Waits for a line on stdin; returns at EOF too. */
static void wait_line(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

NOINLINE void pre_alloc(void) /* DEF_PRE_ALLOC */
{
	for (int i = 0; i < PRE; i++)
		pre[i] = malloc(32); /* PRE_ALLOC */
}

NOINLINE void pre_free(void) /* DEF_PRE_FREE */
{
	for (int i = 0; i < PRE; i++)
		free(pre[i]);
}

/* 3 x 700 bytes, kept. */
NOINLINE void waiter_leak(void) /* DEF_WAITER_LEAK */
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(700); /* WAITER_LEAK */
}

/* 10 x 50 bytes, freed. */
NOINLINE void waiter_churn(void) /* DEF_WAITER_CHURN */
{
	for (int i = 0; i < 10; i++) {
		void *p = malloc(50); /* WAITER_CHURN */

		free(p);
	}
}

int main(void)
{
	char buf[64];
	int pid = (int)getpid(), n = 0;
	char digits[16];

	pre_alloc();
	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	strcpy(buf, "ready ");
	for (size_t k = strlen(buf); n > 0; k++) {
		buf[k] = digits[--n];
		buf[k + 1] = '\0';
	}
	strcat(buf, "\n");
	say(buf);

	wait_line();
	pre_free(); /* CALL_PRE_FREE */
	waiter_leak(); /* CALL_WAITER_LEAK */
	waiter_churn(); /* CALL_WAITER_CHURN */
	say("done\n");

	wait_line();
	return 0;
}
