/* SPDX-License-Identifier: MIT */
/*
 * units.h: byte formatting and the names of the four sample values.
 *
 * Formatted values never contain spaces ("1.50KiB", "1000B", "-3.00MiB")
 * so that report columns can be split on whitespace.
 */
#ifndef MEMTRACE_UNITS_H
#define MEMTRACE_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile.h"

enum mt_unit { MT_UNIT_AUTO, MT_UNIT_B, MT_UNIT_KIB, MT_UNIT_MIB, MT_UNIT_GIB };

/* Parse "auto", "B", "KiB", "MiB" or "GiB".  Returns 0, or -1 if S is none. */
int mt_unit_parse(const char *s, enum mt_unit *u);

/*
 * Format V bytes into BUF (LEN bytes) and return BUF.  MT_UNIT_AUTO prints
 * plain bytes below 1KiB ("1000B"), else the largest unit not above |V| with
 * two decimals ("1.50KiB"); a fixed unit always uses that unit ("1536B",
 * "0.01KiB").  Negative values keep their sign.  The output is truncated
 * (still terminated) when LEN is too small; 32 bytes always suffice.
 */
char *mt_format_bytes(char *buf, size_t len, int64_t v, enum mt_unit u);

/* "alloc_objects", "alloc_space", "inuse_objects", "inuse_space"; "?" if V is out of range. */
const char *mt_value_name(enum mt_value v);

/* Parse one of the names above.  Returns 0, or -1 if S is none of them. */
int mt_value_parse(const char *s, enum mt_value *v);

/* True for alloc_space and inuse_space. */
bool mt_value_is_bytes(enum mt_value v);

#endif /* MEMTRACE_UNITS_H */
