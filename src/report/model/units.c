/* SPDX-License-Identifier: MIT */
/* units.c: byte formatting and value names (see units.h). */
#include "units.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const unit_names[] = {
	[MT_UNIT_AUTO] = "auto",
	[MT_UNIT_B] = "B",
	[MT_UNIT_KIB] = "KiB",
	[MT_UNIT_MIB] = "MiB",
	[MT_UNIT_GIB] = "GiB",
};

static const char *const value_names[MT_NVALUES] = {
	[MT_ALLOC_OBJECTS] = "alloc_objects",
	[MT_ALLOC_SPACE] = "alloc_space",
	[MT_INUSE_OBJECTS] = "inuse_objects",
	[MT_INUSE_SPACE] = "inuse_space",
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

int mt_unit_parse(const char *s, enum mt_unit *u)
{
	if (!s)
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(unit_names); i++) {
		if (strcmp(s, unit_names[i]) == 0) {
			*u = (enum mt_unit)i;
			return 0;
		}
	}
	return -1;
}

/* |v| without overflow for INT64_MIN. */
static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* The unit AUTO stands for when formatting V. */
static enum mt_unit auto_unit(int64_t v)
{
	uint64_t m = magnitude(v);

	if (m >= (UINT64_C(1) << 30))
		return MT_UNIT_GIB;
	if (m >= (UINT64_C(1) << 20))
		return MT_UNIT_MIB;
	if (m >= (UINT64_C(1) << 10))
		return MT_UNIT_KIB;
	return MT_UNIT_B;
}

char *mt_format_bytes(char *buf, size_t len, int64_t v, enum mt_unit u)
{
	if (!buf || len == 0)
		return buf;
	if (u == MT_UNIT_AUTO)
		u = auto_unit(v);

	switch (u) {
	case MT_UNIT_KIB:
	case MT_UNIT_MIB:
	case MT_UNIT_GIB: {
		unsigned shift = 10U * (unsigned)(u - MT_UNIT_B);
		double scaled = (double)v / (double)(UINT64_C(1) << shift);

		snprintf(buf, len, "%.2f%s", scaled, unit_names[u]);
		break;
	}
	case MT_UNIT_B:
	default:
		snprintf(buf, len, "%" PRId64 "B", v);
		break;
	}
	return buf;
}

const char *mt_value_name(enum mt_value v)
{
	if ((unsigned)v >= MT_NVALUES)
		return "?";
	return value_names[v];
}

int mt_value_parse(const char *s, enum mt_value *v)
{
	if (!s)
		return -1;
	for (size_t i = 0; i < MT_NVALUES; i++) {
		if (strcmp(s, value_names[i]) == 0) {
			*v = (enum mt_value)i;
			return 0;
		}
	}
	return -1;
}

bool mt_value_is_bytes(enum mt_value v)
{
	return v == MT_ALLOC_SPACE || v == MT_INUSE_SPACE;
}
