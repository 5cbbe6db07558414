// SPDX-License-Identifier: MIT
/*
 * churn.c: the allocation workload of `make bench` (scripts/bench.sh).
 *
 * Churn mode (the default): T threads, each with a fixed working set of W
 * slots.  Each thread fills its slots, then all wait on a barrier; the timed
 * phase is N operations per thread, an operation being one free() of a
 * random slot and one malloc() of a new block for it, of a random size from
 * 16 to 4096 bytes (log-uniform: one of nine equally likely choices, the
 * bands 16-31, 32-63, ..., 2048-4095 and 4096 itself, then a uniform size
 * within the band).  Every thread has its own seeded PRNG, so a run is the
 * same sequence of calls every time.  After a second barrier the slots are
 * freed.
 *
 * The phase is timed inside the program with CLOCK_MONOTONIC, from the
 * release of the first barrier to the release of the second (so thread
 * start-up, the fill, and a tracer's attach and report are outside it).
 * Each thread also measures its own CPU time (CLOCK_THREAD_CPUTIME_ID, user
 * and system, so probe handling in the kernel counts) over its operations:
 * cpu_ns_per_op is their sum over the total operations, a figure that other
 * load on the machine disturbs much less than the wall time.
 *
 * Stacks mode (--stacks K): allocates one 16-byte block from each of K
 * distinct call stacks (a recursion whose path encodes the index bit by bit
 * through two different functions), keeps them all (in use at exit, so
 * every stack is in the default inuse_space report), and prints the
 * CLOCK_REALTIME at which it is about to exit, so the script can time how
 * long a tracer takes to render its report after the target is gone.
 *
 * Output: one line on stdout (or the -o FILE), "churn: key=value ...",
 * with the exact numbers of malloc() and free() calls the program itself
 * made, and its own CPU time and peak RSS (getrusage(RUSAGE_SELF) as its
 * last act, so a parent's rusage minus these is the parent's own cost).
 * The line is formatted with snprintf into a stack buffer and written with
 * write(): no stdio buffer is malloc'ed behind the counts' back.
 *
 * Build: cc -O2 -g -fno-omit-frame-pointer -pthread -o churn churn.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

struct worker {
	pthread_t tid;
	unsigned idx;
	uint64_t seed;
	void **slots;            /* mmap'ed, so not one of the counted mallocs */
	uint64_t mallocs, frees; /* calls this thread made */
	uint64_t bytes;          /* bytes it asked malloc for */
	uint64_t cpu_ns;         /* its CPU time (user+sys) in the timed phase */
	char pad[64];
};

static unsigned n_threads = 2;
static uint64_t n_ops = 400000;
static uint64_t n_slots = 4096;
static uint64_t seed = 1;
static pthread_barrier_t start_bar, end_bar;

static void die(const char *msg)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "churn: %s%s%s\n", msg,
			 errno ? ": " : "", errno ? strerror(errno) : "");
	if (write(2, buf, (size_t)n) < 0)
		_exit(3);
	_exit(2);
}

/* splitmix64, to spread the seed; xorshift64* for the stream. */
static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* 16..4096: a band 16<<k .. (32<<k)-1 for k = 0..7, or 4096 for k = 8. */
static inline size_t pick_size(uint64_t r)
{
	unsigned k = (unsigned)(r % 9);
	size_t base = (size_t)16 << k;
	size_t sz = base + (size_t)((r >> 8) % base);
	return sz > 4096 ? 4096 : sz;
}

static inline void *alloc_block(struct worker *w, size_t sz)
{
	char *p = malloc(sz);
	if (!p)
		die("malloc failed");
	p[0] = (char)sz;       /* touch it */
	p[sz - 1] = (char)sz;
	w->mallocs++;
	w->bytes += sz;
	return p;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *churn_thread(void *arg)
{
	struct worker *w = arg;
	uint64_t s = splitmix64(w->seed);
	if (s == 0)
		s = 1;

	for (uint64_t i = 0; i < n_slots; i++)
		w->slots[i] = alloc_block(w, pick_size(next_rand(&s)));

	pthread_barrier_wait(&start_bar);
	uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (uint64_t i = 0; i < n_ops; i++) {
		uint64_t r = next_rand(&s);
		uint64_t j = (r >> 40) % n_slots;
		free(w->slots[j]);
		w->frees++;
		w->slots[j] = alloc_block(w, pick_size(r));
	}
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	pthread_barrier_wait(&end_bar);

	for (uint64_t i = 0; i < n_slots; i++) {
		free(w->slots[i]);
		w->frees++;
	}
	return NULL;
}

/* ---- stacks mode ---- */

static uint64_t stacks_mallocs;
static void *step(int depth, unsigned idx);

/*
 * Two distinct functions (the counters keep the compiler from folding them
 * into one), so a path through them is a distinct sequence of return
 * addresses; the code after the call keeps it from being a tail call.
 */
static volatile unsigned long via_a_calls, via_b_calls;

__attribute__((noinline)) static void *via_a(int depth, unsigned idx)
{
	void *p = step(depth, idx);
	via_a_calls++;
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *via_b(int depth, unsigned idx)
{
	void *p = step(depth, idx);
	via_b_calls++;
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void *step(int depth, unsigned idx)
{
	void *p;
	if (depth == 0) {
		p = malloc(16);
		if (!p)
			die("malloc failed");
		stacks_mallocs++;
		return p;
	}
	if (idx & 1)
		p = via_a(depth - 1, idx >> 1);
	else
		p = via_b(depth - 1, idx >> 1);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static uint64_t n_blocks, hold_ms;

static int stacks_mode(uint64_t k, int fd)
{
	uint64_t nb = n_blocks ? n_blocks : k;
	int depth = 0;
	while (depth < 32 && (1ULL << depth) < k)
		depth++;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	/* Kept, not freed: in use at exit, so the default report covers them. */
	void **blocks = mmap(NULL, nb * sizeof(void *), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blocks == MAP_FAILED)
		die("mmap");
	/* Block i from stack i % k: --blocks B spreads B blocks over them. */
	for (uint64_t i = 0; i < nb; i++)
		blocks[i] = step(depth, (unsigned)(i % k));
	uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
	/* --hold MS: keep them that long (reports taken meanwhile). */
	if (hold_ms) {
		struct timespec ts = { (time_t)(hold_ms / 1000),
				       (long)(hold_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	char buf[512];
	uint64_t now = clock_ns(CLOCK_REALTIME);
	int n = snprintf(buf, sizeof(buf),
		"churn: mode=stacks stacks=%llu depth=%d phase_ns=%llu "
		"mallocs=%llu frees=0 user_us=%lld sys_us=%lld maxrss_kb=%ld "
		"exit_realtime_ns=%llu\n",
		(unsigned long long)k, depth, (unsigned long long)(t1 - t0),
		(unsigned long long)stacks_mallocs,
		(long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
		ru.ru_maxrss, (unsigned long long)now);
	if (write(fd, buf, (size_t)n) != n)
		die("write");
	return 0;
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		char msg[128];
		snprintf(msg, sizeof(msg), "bad %s: %s", what, s);
		errno = 0;
		die(msg);
	}
	return v;
}

static void usage(void)
{
	static const char text[] =
		"usage: churn [-t THREADS] [-n OPS_PER_THREAD] [-w SLOTS] [-s SEED] [-o FILE]\n"
		"       churn --stacks K [--blocks B] [--hold MS] [-o FILE]\n"
		"Defaults: -t 2 -n 400000 -w 4096 -s 1.  Prints one line, churn: key=value ...\n";
	if (write(2, text, sizeof(text) - 1) < 0)
		_exit(3);
	_exit(2);
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t stacks = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			usage();
		if (!v)
			usage();
		if (!strcmp(a, "-t"))
			n_threads = (unsigned)parse_u64(v, "-t");
		else if (!strcmp(a, "-n"))
			n_ops = parse_u64(v, "-n");
		else if (!strcmp(a, "-w"))
			n_slots = parse_u64(v, "-w");
		else if (!strcmp(a, "-s"))
			seed = parse_u64(v, "-s");
		else if (!strcmp(a, "-o"))
			out = v;
		else if (!strcmp(a, "--stacks"))
			stacks = parse_u64(v, "--stacks");
		else if (!strcmp(a, "--blocks"))
			n_blocks = parse_u64(v, "--blocks");
		else if (!strcmp(a, "--hold"))
			hold_ms = parse_u64(v, "--hold");
		else
			usage();
		i++;
	}
	if (n_threads < 1 || n_threads > MAX_THREADS || n_slots < 1)
		usage();

	int fd = 1;
	if (out) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die("cannot open -o file");
	}
	if (stacks)
		return stacks_mode(stacks, fd);

	static struct worker workers[MAX_THREADS];
	for (unsigned t = 0; t < n_threads; t++) {
		struct worker *w = &workers[t];
		w->idx = t;
		w->seed = seed * 1000003ULL + t;
		w->slots = mmap(NULL, n_slots * sizeof(void *), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w->slots == MAP_FAILED)
			die("mmap");
	}
	if (pthread_barrier_init(&start_bar, NULL, n_threads + 1) ||
	    pthread_barrier_init(&end_bar, NULL, n_threads + 1))
		die("pthread_barrier_init");
	for (unsigned t = 0; t < n_threads; t++) {
		errno = pthread_create(&workers[t].tid, NULL, churn_thread, &workers[t]);
		if (errno)
			die("pthread_create");
	}

	pthread_barrier_wait(&start_bar);
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&end_bar);
	uint64_t t1 = clock_ns(CLOCK_MONOTONIC);

	uint64_t mallocs = 0, frees = 0, bytes = 0, cpu = 0;
	for (unsigned t = 0; t < n_threads; t++) {
		errno = pthread_join(workers[t].tid, NULL);
		if (errno)
			die("pthread_join");
		mallocs += workers[t].mallocs;
		frees += workers[t].frees;
		bytes += workers[t].bytes;
		cpu += workers[t].cpu_ns;
	}

	uint64_t ops = (uint64_t)n_threads * n_ops;
	uint64_t phase = t1 - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	char buf[512];
	int n = snprintf(buf, sizeof(buf),
		"churn: mode=churn threads=%u ops_per_thread=%llu slots=%llu seed=%llu "
		"ops=%llu phase_ns=%llu ns_per_op=%.1f cpu_ns_per_op=%.1f mallocs=%llu frees=%llu "
		"malloc_bytes=%llu user_us=%lld sys_us=%lld maxrss_kb=%ld\n",
		n_threads, (unsigned long long)n_ops, (unsigned long long)n_slots,
		(unsigned long long)seed, (unsigned long long)ops,
		(unsigned long long)phase, ops ? (double)phase / (double)ops : 0.0,
		ops ? (double)cpu / (double)ops : 0.0,
		(unsigned long long)mallocs, (unsigned long long)frees,
		(unsigned long long)bytes,
		(long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
		ru.ru_maxrss);
	if (write(fd, buf, (size_t)n) != n)
		die("write");
	return 0;
}
