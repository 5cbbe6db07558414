/*
 * pvalloc.c: pvalloc, whose size counts rounded up to the page size.
 *
 * It has a program of its own because valgrind 3.19 aborts on pvalloc
 * ("Program aborting because of call to pvalloc"): the expected totals of
 * this one come from tests/integration/programs.py, not from valgrind.
 */
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[8];

/* pvalloc(5000): 5000 rounded up to the page size (8192 with 4 KiB pages). */
NOINLINE void pva_leak(void) /* DEF_PVA_LEAK */
{
	keep[0] = pvalloc(5000); /* PVA_LEAK */
}

/* pvalloc(4096 * 3): already a multiple of the page, freed. */
NOINLINE void pva_churn(void) /* DEF_PVA_CHURN */
{
	void *p = pvalloc(4096 * 3); /* PVA_CHURN */

	free(p);
}

int main(void)
{
	if (sysconf(_SC_PAGESIZE) != 4096)
		return 2; /* the expected numbers assume 4 KiB pages */
	pva_leak(); /* CALL_PVA_LEAK */
	pva_churn(); /* CALL_PVA_CHURN */
	return 0;
}
