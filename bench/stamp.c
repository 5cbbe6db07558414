// SPDX-License-Identifier: MIT
/*
 * stamp.c: an LD_PRELOAD library for scripts/bench_real.sh.  It times a
 * program from inside, so a tracer's start-up (before the exec) and its
 * report (after the exit) stay outside the figure, whatever the tracer.
 *
 * Active only in the process whose /proc/self/exe is $STAMP_EXE (the
 * tracers, shells and wrappers that inherit LD_PRELOAD stay quiet).  Its
 * constructor notes CLOCK_MONOTONIC and CLOCK_REALTIME; its destructor (the
 * last one to run: a preloaded object is initialised first) appends one
 * line to $STAMP_OUT:
 *
 *   stamp: start_realtime_ns=... exit_realtime_ns=... run_ns=... user_us=... sys_us=... maxrss_kb=...
 *
 * with the process's own CPU time and peak RSS (getrusage(RUSAGE_SELF)).
 * It calls no allocator function: snprintf into a stack buffer, write().
 *
 * Build: cc -O2 -shared -fPIC -o stamp.so stamp.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int active;
static struct timespec t0_mono, t0_real;

static unsigned long long ns(const struct timespec *t)
{
	return (unsigned long long)t->tv_sec * 1000000000ULL + (unsigned long long)t->tv_nsec;
}

__attribute__((constructor)) static void stamp_start(void)
{
	const char *want = getenv("STAMP_EXE");
	char exe[4096];
	ssize_t n;

	if (!want || !getenv("STAMP_OUT"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	if (strcmp(exe, want) != 0)
		return;
	active = 1;
	clock_gettime(CLOCK_REALTIME, &t0_real);
	clock_gettime(CLOCK_MONOTONIC, &t0_mono);
}

__attribute__((destructor)) static void stamp_end(void)
{
	struct timespec t1_mono, t1_real;
	struct rusage ru;
	char buf[512];
	int fd, len;

	if (!active)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1_mono);
	getrusage(RUSAGE_SELF, &ru);
	fd = open(getenv("STAMP_OUT"), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &t1_real);
	len = snprintf(buf, sizeof(buf),
		       "stamp: start_realtime_ns=%llu exit_realtime_ns=%llu run_ns=%llu "
		       "user_us=%llu sys_us=%llu maxrss_kb=%ld\n",
		       ns(&t0_real), ns(&t1_real), ns(&t1_mono) - ns(&t0_mono),
		       (unsigned long long)ru.ru_utime.tv_sec * 1000000ULL + (unsigned long long)ru.ru_utime.tv_usec,
		       (unsigned long long)ru.ru_stime.tv_sec * 1000000ULL + (unsigned long long)ru.ru_stime.tv_usec,
		       ru.ru_maxrss);
	if (len > 0 && write(fd, buf, (size_t)len) < 0)
		len = 0;
	close(fd);
}
