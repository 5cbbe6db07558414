/* SPDX-License-Identifier: MIT */
/* decimal.h: a whole number written in decimal, as users and peers give it. */
#ifndef MEMTRACE_DECIMAL_H
#define MEMTRACE_DECIMAL_H

/*
 * S, all of it decimal digits (no sign, space or suffix), as a number of
 * at most MAX into *V.  0, or -1 (S NULL, empty, not all digits, or
 * larger than MAX).
 */
int mt_parse_decimal(const char *s, unsigned long max, unsigned long *v);

#endif
