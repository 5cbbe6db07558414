// SPDX-License-Identifier: MIT
/* sampling.c: the tables bpf/sampling.h interpolates, from libm. */
#include "sampling_tables.h"

#include <math.h>

static __u32 q24(double v)
{
	return (__u32)llround(v * (double)MT_Q24);
}

void mt_sampling_tables(__u32 log2_tab[MT_LOG2_STEPS + 1],
			__u32 g_tab[MT_G_ENTRIES])
{
	for (int j = 0; j <= MT_LOG2_STEPS; j++)
		log2_tab[j] = q24(log2(1.0 + (double)j / MT_LOG2_STEPS));
	g_tab[0] = q24(1.0);
	for (int i = 1; i < MT_G_ENTRIES; i++) {
		double x = (double)i / MT_G_STEPS_PER_UNIT;

		g_tab[i] = q24(x / -expm1(-x));
	}
}
