/*
 * exit7.c: leaks 123 bytes and exits with status 7 (for "memtrace -- CMD
 * exits with CMD's status").
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep;

NOINLINE void leak_123(void) /* DEF_LEAK_123 */
{
	keep = malloc(123); /* LEAK_123 */
}

int main(void)
{
	leak_123(); /* CALL_LEAK_123 */
	return 7;
}
