/*
 * phases.c: the timeline's ground truth: heap in use goes through phases
 * at known times, each held for HOLD_MS (several 100 ms intervals), with
 * a transient block allocated and freed between two samples.
 *
 *   phase 1  A1 + A2 in use                       ALLOC_A
 *   phase 2  TRANSIENT allocated and freed at once (in use A1 + A2,
 *            the interval's largest A1 + A2 + TRANSIENT)   TRANSIENT
 *   phase 3  A1 freed: A2 in use ("free to C")    FREE_TO_C
 *   phase 4  D leaked: A2 + D in use until exit   LEAK_D
 *
 * The test reads the sizes from the #defines below.  Only nanosleep and
 * the malloc family: no stdio, whose buffers would be allocations too.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define A1 (3 * 1024 * 1024)
#define A2 (1024 * 1024)
#define TRANSIENT (8 * 1024 * 1024)
#define D 65536
#define HOLD_MS 400

static void hold(void)
{
	struct timespec ts = { HOLD_MS / 1000, (HOLD_MS % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

int main(void)
{
	char *a1, *a2, *t, *d;

	hold();
	a1 = malloc(A1); /* ALLOC_A */
	a2 = malloc(A2);
	if (!a1 || !a2)
		return 1;
	memset(a1, 1, A1);
	memset(a2, 2, A2);
	hold();
	t = malloc(TRANSIENT); /* TRANSIENT */
	if (!t)
		return 1;
	t[0] = 1;
	free(t);
	hold();
	free(a1); /* FREE_TO_C */
	hold();
	d = malloc(D); /* LEAK_D */
	if (!d)
		return 1;
	d[0] = 3;
	hold();
	return a2[0] == 2 ? 0 : 1;
}
