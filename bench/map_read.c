// SPDX-License-Identifier: MIT
/*
 * map_read.c: the kernel's own cost of reading a BPF hash map the way a
 * memtrace snapshot reads its table of live blocks: N entries of the same
 * key and value sizes (24 and 48 bytes) in a hash map made on demand
 * (BPF_F_NO_PREALLOC, as memtrace's), read in batches of 1,024 with
 * bpf_map_lookup_batch().  No BPF program is involved; what a snapshot
 * spends beyond this is memtrace's.  For scripts/bench.sh.
 *
 * usage: map_read N REPS
 * Prints one line: "map_read: entries=N reps=R best_ms=.. median_ms=..
 * best_cpu_ms=.. median_cpu_ms=.." (wall and this thread's CPU time of one
 * whole read).  Needs root (or CAP_BPF).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>

#define KEY 24
#define VALUE 48
#define BATCH 1024U

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One read of the whole map; returns the entries read, or -1. */
static long read_all(int fd, unsigned char *keys, unsigned char *vals)
{
	__u64 in = 0, out = 0;
	long total = 0;
	int first = 1;

	for (;;) {
		__u32 n = BATCH;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : &in, &out,
					       keys, vals, &n, NULL);

		first = 0;
		total += n;
		if (ret) {
			if (errno == ENOENT)
				return total;
			if (errno == ENOSPC)
				continue; /* a bucket larger than the batch: not here */
			return -1;
		}
		in = out;
	}
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	unsigned long n, reps;
	unsigned char key[KEY] = { 0 }, val[VALUE] = { 0 };
	unsigned char *keys, *vals;
	double *wall, *cpu;
	int fd;

	if (argc != 3 || (n = strtoul(argv[1], NULL, 10)) == 0 ||
	    (reps = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: map_read N REPS\n");
		return 2;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "map_read", KEY, VALUE,
			    (__u32)n, &opts);
	keys = malloc(BATCH * KEY);
	vals = malloc(BATCH * VALUE);
	wall = calloc(reps, sizeof(*wall));
	cpu = calloc(reps, sizeof(*cpu));
	if (fd < 0 || !keys || !vals || !wall || !cpu) {
		fprintf(stderr, "map_read: cannot make a hash map of %lu entries: %s\n",
			n, strerror(errno));
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		/* Like memtrace's keys: a pid, a category, an address. */
		unsigned long addr = 0x7f0000000000UL + i * 64;

		key[0] = 1;
		memcpy(key + 8, &addr, sizeof(addr));
		memcpy(val, &i, sizeof(i));
		if (bpf_map_update_elem(fd, key, val, BPF_NOEXIST)) {
			fprintf(stderr, "map_read: filling the map: %s\n", strerror(errno));
			return 1;
		}
	}
	for (unsigned long r = 0; r < reps; r++) {
		double t0 = clock_s(CLOCK_MONOTONIC);
		double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		long got = read_all(fd, keys, vals);

		wall[r] = clock_s(CLOCK_MONOTONIC) - t0;
		cpu[r] = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (got != (long)n) {
			fprintf(stderr, "map_read: read %ld entries of %lu: %s\n",
				got, n, strerror(errno));
			return 1;
		}
	}
	qsort(wall, reps, sizeof(*wall), cmp_d);
	qsort(cpu, reps, sizeof(*cpu), cmp_d);
	printf("map_read: entries=%lu reps=%lu best_ms=%.1f median_ms=%.1f best_cpu_ms=%.1f median_cpu_ms=%.1f\n",
	       n, reps, wall[0] * 1e3, wall[reps / 2] * 1e3, cpu[0] * 1e3,
	       cpu[reps / 2] * 1e3);
	return 0;
}
