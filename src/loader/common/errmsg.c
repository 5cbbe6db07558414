// SPDX-License-Identifier: MIT
/* errmsg.c: memtrace's one-line error messages. */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

int mt_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("memtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}
