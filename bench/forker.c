// SPDX-License-Identifier: MIT
/* forker N: forks N children one after another; each child notes when it
 * first runs, mallocs, frees and exits; prints the fork-to-running latency
 * (median, mean, max, microseconds) and the total time. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double *start = mmap(NULL, sizeof(double) * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double *lat = malloc(sizeof(double) * n), t0 = now(), sum = 0;

	for (int i = 0; i < n; i++) {
		double before = now();
		pid_t pid = fork();
		if (pid == 0) {
			start[i] = now();
			free(malloc(100));
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		lat[i] = (start[i] - before) * 1e6;
		sum += lat[i];
	}
	double total = now() - t0;
	qsort(lat, n, sizeof(double), cmp);
	printf("n %d median %.0f us mean %.0f us max %.0f us total %.3f s\n", n, lat[n / 2], sum / n, lat[n - 1], total);
	return 0;
}
