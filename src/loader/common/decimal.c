// SPDX-License-Identifier: MIT
/* decimal.c: whole numbers in decimal (decimal.h). */
#include "decimal.h"

#include <errno.h>
#include <stdlib.h>

int mt_parse_decimal(const char *s, unsigned long max, unsigned long *v)
{
	unsigned long n;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n > max)
		return -1;
	*v = n;
	return 0;
}
