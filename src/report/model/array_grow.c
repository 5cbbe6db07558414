// SPDX-License-Identifier: MIT
/* array_grow.c: growing an array by doubling (array_grow.h). */
#include "array_grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mt_reserve(void *arrp, size_t *cap, size_t need, size_t size)
{
	void *old, *v;
	size_t n;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	memcpy(&old, arrp, sizeof(old));
	v = reallocarray(old, n, size);
	if (!v)
		return -ENOMEM;
	memcpy(arrp, &v, sizeof(v));
	*cap = n;
	return 0;
}
