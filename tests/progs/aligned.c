/*
 * aligned.c: the aligned allocators of glibc (all but pvalloc, which
 * valgrind 3.19 cannot run: see pvalloc.c), each from its own function.
 * Expected numbers: tests/integration/programs.py.
 */
#include <malloc.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep[64];
static int nkeep;

static void hold(void *p)
{
	keep[nkeep++] = p;
}

/* posix_memalign(64, 200) twice: 2 x 200 bytes. */
NOINLINE void pm_leak(void) /* DEF_PM_LEAK */
{
	for (int i = 0; i < 2; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 64, 200) == 0) /* PM_LEAK */
			hold(p);
	}
}

/* aligned_alloc(128, 256) once: 256 bytes. */
NOINLINE void aa_leak(void) /* DEF_AA_LEAK */
{
	hold(aligned_alloc(128, 256)); /* AA_LEAK */
}

/* memalign(32, 100) three times: 3 x 100 bytes. */
NOINLINE void ma_leak(void) /* DEF_MA_LEAK */
{
	for (int i = 0; i < 3; i++)
		hold(memalign(32, 100)); /* MA_LEAK */
}

/* valloc(1000) once: 1000 bytes (the requested size). */
NOINLINE void va_leak(void) /* DEF_VA_LEAK */
{
	hold(valloc(1000)); /* VA_LEAK */
}

/* Aligned blocks that are freed: 128 + 64 bytes, nothing in use. */
NOINLINE void aligned_churn(void) /* DEF_ALIGNED_CHURN */
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 128) == 0) /* ALIGNED_CHURN_PM */
		free(p);
	p = aligned_alloc(64, 64); /* ALIGNED_CHURN_AA */
	free(p);
}

int main(void)
{
	pm_leak(); /* CALL_PM_LEAK */
	aa_leak(); /* CALL_AA_LEAK */
	ma_leak(); /* CALL_MA_LEAK */
	va_leak(); /* CALL_VA_LEAK */
	aligned_churn(); /* CALL_ALIGNED_CHURN */
	return 0;
}
