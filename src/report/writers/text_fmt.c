/* SPDX-License-Identifier: MIT */
/* text_fmt.c: value and location formatting for the text report. */
#include <inttypes.h>
#include "text_priv.h"

const char *mt_text_value(char *buf, size_t len, int64_t v, enum mt_value m,
			  enum mt_unit u)
{
	if (mt_value_is_bytes(m))
		return mt_format_bytes(buf, len, v, u);
	snprintf(buf, len, "%" PRId64, v);
	return buf;
}

const char *mt_text_percent(char *buf, size_t len, int64_t v, int64_t total)
{
	double pct = total ? 100.0 * (double)v / (double)total : 0.0;

	snprintf(buf, len, "%.2f%%", pct);
	return buf;
}

enum mt_value mt_text_counterpart(enum mt_value m)
{
	switch (m) {
	case MT_ALLOC_OBJECTS:
		return MT_ALLOC_SPACE;
	case MT_ALLOC_SPACE:
		return MT_ALLOC_OBJECTS;
	case MT_INUSE_OBJECTS:
		return MT_INUSE_SPACE;
	case MT_INUSE_SPACE:
	default:
		return MT_INUSE_OBJECTS;
	}
}

void mt_text_location(FILE *out, const char *sep, const char *file, int line)
{
	if (!file)
		return;
	if (line > 0)
		fprintf(out, "%s%s:%d", sep, file, line);
	else
		fprintf(out, "%s%s", sep, file);
}

const char *mt_text_function(const struct mt_frame *f)
{
	return f->function ? f->function : "?";
}

int64_t mt_text_total(const struct mt_profile *p, enum mt_value m)
{
	int64_t total = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		total += p->samples[i].v[m];
	return total;
}
