/*
 * many.c: blocks held from stacks made on request, for the kernel memory
 * and snapshot tests (tests/integration/test_kernel_memory.py).
 *
 * Writes "ready PID\n", then for each line "N D" on stdin allocates N
 * blocks of 24 bytes through a recursion D deep (rec() D times, then
 * alloc_block(): a stack of its own for each D, 1 to 1000) and writes
 * "ok\n".  At EOF or "q" it exits 0 without freeing anything: every block
 * is in use at exit.  Only read/write: nothing else is allocated.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink;

NOINLINE void alloc_block(void) /* DEF_ALLOC_BLOCK */
{
	sink = malloc(24); /* MANY_ALLOC */
}

NOINLINE void rec(long d)
{
	if (d > 1)
		rec(d - 1);
	else
		alloc_block();
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void say(const char *s, size_t n)
{
	if (write(1, s, n) != (ssize_t)n)
		_exit(3);
}

/* One line from stdin into BUF (NUL-terminated); false at EOF. */
static int read_line(char *buf, size_t cap)
{
	size_t n = 0;
	char c;

	while (read(0, &c, 1) == 1) {
		if (c == '\n') {
			buf[n] = 0;
			return 1;
		}
		if (n + 1 < cap)
			buf[n++] = c;
	}
	return 0;
}

int main(void)
{
	char line[64], *end;
	char digits[16];
	int pid = (int)getpid(), k = 0;

	say("ready ", 6);
	do
		digits[k++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	while (k > 0)
		say(&digits[--k], 1);
	say("\n", 1);
	while (read_line(line, sizeof(line)) && strcmp(line, "q") != 0) {
		long n = strtol(line, &end, 10), d = strtol(end, NULL, 10);

		if (n < 0 || d < 1 || d > 1000)
			_exit(2);
		for (long i = 0; i < n; i++)
			rec(d);
		say("ok\n", 3);
	}
	return 0;
}
