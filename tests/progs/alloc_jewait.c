/*
 * alloc_jewait.c: the target of the memtrace -p test with jemalloc,
 * run under LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
 * (like waiter.c, with jemalloc's own API):
 *
 *   1. mallocx's JW_PRE blocks (before memtrace attaches), writes
 *      "ready PID\n" to stdout and waits for a line on stdin;
 *   2. dallocx's the JW_PRE blocks (untracked frees), leaks known blocks,
 *      allocates, resizes and frees others, writes "done\n";
 *   3. waits for another line (or EOF) on stdin and exits 0.
 *
 * Exits 2 when jemalloc is not loaded.  Only read(2)/write(2): stdio would
 * allocate buffers of its own.
 * Expected numbers: tests/integration/test_allocators.py.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define JW_PRE 5

extern void *mallocx(size_t size, int flags) __attribute__((weak));
extern void *rallocx(void *ptr, size_t size, int flags) __attribute__((weak));
extern void dallocx(void *ptr, int flags) __attribute__((weak));
extern void sdallocx(void *ptr, size_t size, int flags) __attribute__((weak));

void *volatile keep[16];
static void *pre[JW_PRE];

static void say(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			_exit(3);
		s += w;
		n -= (size_t)w;
	}
}

static void *need(void *p)
{
	if (!p) {
		say(2, "alloc_jewait: allocation failed\n");
		_exit(3);
	}
	return p;
}

/* Waits for a line on stdin; returns at EOF too. */
static void wait_line(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

NOINLINE void jw_pre_alloc(void) /* DEF_JW_PRE_ALLOC */
{
	for (int i = 0; i < JW_PRE; i++)
		pre[i] = need(mallocx(32, 0));
}

NOINLINE void jw_pre_free(void) /* DEF_JW_PRE_FREE */
{
	for (int i = 0; i < JW_PRE; i++)
		dallocx(pre[i], 0);
}

/* 3 x mallocx(700), kept. */
NOINLINE void jw_leak(void) /* DEF_JW_LEAK */
{
	for (int i = 0; i < 3; i++)
		keep[i] = need(mallocx(700, 0)); /* JW_LEAK */
}

/* 10 x (mallocx 50 -> rallocx 80 -> sdallocx), all freed. */
NOINLINE void jw_churn(void) /* DEF_JW_CHURN */
{
	for (int i = 0; i < 10; i++) {
		void *p = need(mallocx(50, 0));

		p = need(rallocx(p, 80, 0));
		sdallocx(p, 80, 0);
	}
}

int main(void)
{
	char buf[64];
	int pid = (int)getpid(), n = 0;
	char digits[16];

	if (!mallocx || !rallocx || !dallocx || !sdallocx) {
		say(2, "alloc_jewait: jemalloc is not loaded (LD_PRELOAD=.../libjemalloc.so.2)\n");
		return 2;
	}
	jw_pre_alloc();
	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	strcpy(buf, "ready ");
	for (size_t k = strlen(buf); n > 0; k++) {
		buf[k] = digits[--n];
		buf[k + 1] = '\0';
	}
	strcat(buf, "\n");
	say(1, buf);

	wait_line();
	jw_pre_free();
	jw_leak(); /* CALL_JW_LEAK */
	jw_churn();
	say(1, "done\n");

	wait_line();
	return 0;
}
