/*
 * stack_edge.c: built -O2 -fomit-frame-pointer.  A process started with
 * clone() on a stack of its own whose top is the end of its mapping (the
 * page above is unmapped), as a coroutine library or a runtime's own
 * threads may have it.  It leaks one block of 600 bytes:
 *   edge_main -> edge_leaf -> malloc, then clone's child code in libc.
 * memtrace reads the user stack a window at a time; here the frames lie
 * at the very top of the mapping, where a window that ran past its end
 * could not be read, and the walk must still reach clone's outermost
 * frame.  Markers are looked up by the tests
 * (tests/integration/test_unwind.py).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep;
volatile unsigned long spill;

/* Work after each call, so that none is a tail call. */
NOINLINE void *edge_leaf(size_t n)
{
	void *p = malloc(n); /* EDGE_LEAF */

	spill += n;
	return p;
}

NOINLINE int edge_main(void *arg)
{
	void *p = edge_leaf(600); /* EDGE_MAIN */

	keep = p;
	spill += (unsigned long)arg;
	return 0;
}

int main(void)
{
	size_t len = 64 * 1024, page = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, len + page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	int status;
	pid_t pid;

	if (m == MAP_FAILED || munmap(m + len, page))
		return 1;
	/* A new process (SIGCHLD: as fork does) running on [m, m + len). */
	pid = clone(edge_main, m + len, SIGCHLD, NULL);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
