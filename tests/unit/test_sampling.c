// SPDX-License-Identifier: MIT
/*
 * test_sampling.c: the integer arithmetic of bpf/sampling.h, which the BPF
 * program runs, against libm, and the sampler it makes against the
 * statistics it must have.  The tables come from src/loader/bpf/sampling.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "sampling_tables.h"

static __u32 log2_tab[MT_LOG2_STEPS + 1];
static __u32 g_tab[MT_G_ENTRIES];

static int setup(void **state)
{
	(void)state;
	mt_sampling_tables(log2_tab, g_tab);
	return 0;
}

/* A fixed 64-bit PRNG (splitmix64): the tests give the same draws each run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void test_tables(void **state)
{
	(void)state;
	assert_int_equal(log2_tab[0], 0);
	assert_int_equal(log2_tab[MT_LOG2_STEPS], MT_Q24);     /* log2(2) = 1 */
	assert_int_equal(g_tab[0], MT_Q24);                     /* g(0) = 1 */
	/* g(32) = 32 / (1 - e^-32) = 32 to 1e-13. */
	assert_int_equal(g_tab[MT_G_ENTRIES - 1], 32 * MT_Q24);
	for (int i = 1; i < MT_G_ENTRIES; i++)
		assert_true(g_tab[i] > g_tab[i - 1]);
}

/*
 * Each interval is -mean ln((r + 1) / 2^32), to 1e-5, plus the error of
 * the interpolated log2 (below 2.8e-6, times ln 2, of the mean) and a
 * byte or two of rounding.
 */
static void test_interval_values(void **state)
{
	static const uint64_t means[] = { 1, 4096, 524288, 1ULL << 30,
					  MT_SAMPLE_BYTES_MAX };
	static const __u32 edges[] = { 0, 1, 2, 255, 256, 0x7fffffff,
				       0x80000000, 0xfffffffe, 0xffffffff };

	(void)state;
	for (size_t m = 0; m < sizeof(means) / sizeof(means[0]); m++) {
		for (int i = 0; i < 200000 + 9; i++) {
			__u32 r = i < 9 ? edges[i] : (__u32)next_u64();
			double want = -(double)means[m] *
				      log(((double)r + 1.0) / 4294967296.0);
			double got = (double)mt_sample_interval(r, means[m],
								 log2_tab);

			if (fabs(got - want) >
			    1e-5 * want + 2e-6 * (double)means[m] + 2.0)
				fail_msg("mean %llu, r %u: interval %.1f, expected %.1f",
					 (unsigned long long)means[m], r, got, want);
		}
	}
}

/*
 * Over 2^22 evenly spread r, the intervals' mean is the mean asked for and
 * their distribution exponential: the fraction above t * mean is e^-t.
 */
static void test_interval_distribution(void **state)
{
	const uint64_t mean = 524288;
	const int n = 1 << 22;
	double sum = 0;
	int above[5] = { 0 };
	static const double t[5] = { 0.1, 0.5, 1, 2, 5 };

	(void)state;
	for (int i = 0; i < n; i++) {
		__u32 r = (__u32)((uint64_t)i << 10 | (next_u64() & 0x3ff));
		uint64_t v = mt_sample_interval(r, mean, log2_tab);

		sum += (double)v;
		for (int k = 0; k < 5; k++)
			above[k] += (double)v > t[k] * (double)mean;
	}
	assert_true(fabs(sum / n / (double)mean - 1.0) < 1e-3);
	for (int k = 0; k < 5; k++) {
		double want = exp(-t[k]), got = (double)above[k] / n;

		if (fabs(got - want) > 1e-3)
			fail_msg("P(interval > %.1f mean) = %.5f, expected %.5f",
				 t[k], got, want);
	}
}

/* s/p and 1/p with p = 1 - e^-(s/mean), to 1e-5. */
static void test_weights(void **state)
{
	static const uint64_t means[] = { 1, 64, 4096, 524288, 1ULL << 30,
					  MT_SAMPLE_BYTES_MAX };

	(void)state;
	for (size_t m = 0; m < sizeof(means) / sizeof(means[0]); m++) {
		uint64_t mean = means[m];

		for (int i = 0; i < 100000; i++) {
			/* Sizes from 1 byte to 2^40, log-uniform, and edges. */
			uint64_t size = i < 4 ? (uint64_t[]){ 1, mean * 32 - 1,
							      mean * 32,
							      mean * 64 }[i]
					: 1 + (uint64_t)exp2((double)(next_u64() % 40000) / 1000);
			double x = (double)size / (double)mean;
			double p = -expm1(-x);
			__u64 bytes, q16;

			mt_sample_weight(size, mean, g_tab, &bytes, &q16);
			if (fabs((double)bytes - (double)size / p) >
			    1e-5 * (double)size / p + 1.0)
				fail_msg("mean %llu, size %llu: %llu bytes, expected %.1f",
					 (unsigned long long)mean,
					 (unsigned long long)size,
					 (unsigned long long)bytes, (double)size / p);
			if (fabs((double)q16 / 65536 - 1 / p) > 1e-5 / p + 2.0 / 65536)
				fail_msg("mean %llu, size %llu: %.6f objects, expected %.6f",
					 (unsigned long long)mean,
					 (unsigned long long)size,
					 (double)q16 / 65536, 1 / p);
		}
	}
	/* Nothing to estimate from a zero-byte block: it is itself. */
	{
		__u64 bytes, q16;

		mt_sample_weight(0, 4096, g_tab, &bytes, &q16);
		assert_int_equal(bytes, 0);
		assert_int_equal(q16, 1 << 16);
	}
}

/*
 * The whole sampler, as the BPF program runs it: one thread's Poisson
 * process over a stream of allocations whose total is known.  The
 * estimates must be within 6 standard deviations of the truth (computed
 * from the sizes: each allocation adds s^2 e^-x / p to the variance of
 * the byte total, e^-x / p to that of the count), and the sample count
 * near its expectation.  The seed is fixed, so the test is repeatable;
 * 6 sigma keeps it from failing by chance for a correct sampler with any
 * seed but once in 10^9.
 */
static void test_sampler_unbiased(void **state)
{
	const uint64_t mean = 65536;
	double true_bytes = 0, true_objects = 0, est_bytes = 0, est_objects = 0;
	double var_bytes = 0, var_objects = 0, exp_samples = 0, samples = 0;
	__u64 left = mt_sample_interval((__u32)next_u64(), mean, log2_tab);

	(void)state;
	for (int i = 0; i < 4000000; i++) {
		/* 16 B .. 4 MiB, log-uniform. */
		uint64_t size = (uint64_t)exp2(4 + (double)(next_u64() % 18000) / 1000);
		double x = (double)size / (double)mean, p = -expm1(-x);
		__u64 bytes, q16;

		true_bytes += (double)size;
		true_objects += 1;
		var_bytes += (double)size * (double)size * exp(-x) / p;
		var_objects += exp(-x) / p;
		exp_samples += p;
		if (!mt_sample_hit(&left, size))
			continue;
		left = mt_sample_interval((__u32)next_u64(), mean, log2_tab);
		mt_sample_weight(size, mean, g_tab, &bytes, &q16);
		/* The BPF program's unbiased rounding of 1/p. */
		est_objects += (double)((q16 >> 16) +
					((next_u64() & 0xffff) < (q16 & 0xffff)));
		est_bytes += (double)bytes;
		samples++;
	}
	if (fabs(est_bytes - true_bytes) > 6 * sqrt(var_bytes))
		fail_msg("bytes: estimate %.0f, truth %.0f, sigma %.0f", est_bytes,
			 true_bytes, sqrt(var_bytes));
	if (fabs(est_objects - true_objects) > 6 * sqrt(var_objects + samples / 4))
		fail_msg("objects: estimate %.0f, truth %.0f, sigma %.0f",
			 est_objects, true_objects, sqrt(var_objects));
	if (fabs(samples - exp_samples) > 6 * sqrt(exp_samples))
		fail_msg("samples: %.0f, expected %.0f", samples, exp_samples);
}

/*
 * Small blocks alone, at a small mean: 16-byte blocks at 512 bytes are
 * sampled with p = 1 - e^-(1/32), and each stands for 16/p bytes.  The
 * intervals are whole bytes, which biases the rate by about 1/512 (0.2%)
 * here; 6 sigma is 0.7%.
 */
static void test_sampler_small_blocks(void **state)
{
	const uint64_t mean = 512, size = 16;
	const int n = 20000000;
	double p = -expm1(-(double)size / (double)mean), hits = 0, est = 0;
	__u64 left = mt_sample_interval((__u32)next_u64(), mean, log2_tab);

	(void)state;
	for (int i = 0; i < n; i++) {
		__u64 bytes, q16;

		if (!mt_sample_hit(&left, size))
			continue;
		left = mt_sample_interval((__u32)next_u64(), mean, log2_tab);
		mt_sample_weight(size, mean, g_tab, &bytes, &q16);
		est += (double)bytes;
		hits++;
	}
	if (fabs(hits - n * p) > 6 * sqrt(n * p * (1 - p)))
		fail_msg("%.0f of %d sampled, expected %.0f", hits, n, n * p);
	if (fabs(est - (double)n * size) > 6 * size / p * sqrt(n * p * (1 - p)) +
					    hits)
		fail_msg("bytes: estimate %.0f, truth %.0f", est,
			 (double)n * size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_interval_values),
		cmocka_unit_test(test_interval_distribution),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_sampler_unbiased),
		cmocka_unit_test(test_sampler_small_blocks),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
