/* SPDX-License-Identifier: MIT */
/*
 * text_sizes.c: the size histogram of the text report: what was allocated
 * (and, with --mmap, mapped) by power-of-two size class, one line per
 * class that is not empty, with its share of the bytes and a bar.
 */
#include <inttypes.h>
#include "size_class.h"
#include "text_priv.h"

/* A bar of up to BAR_WIDTH '#', one per 5% of the bytes. */
#define BAR_WIDTH 20

/* A power of two in binary units without spaces: 512, 1K, 2M, 1G. */
static const char *pow2(char *buf, size_t len, uint64_t v)
{
	static const char suffix[] = { '\0', 'K', 'M', 'G', 'T', 'P', 'E' };
	int u = 0;

	while (v >= 1024 && v % 1024 == 0 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, len, "%" PRIu64 "%c", v, suffix[u]);
	else
		snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/* Class K as the sizes it holds: "[0,1)", "[64,128)", "[1G,inf)". */
static const char *class_label(char *buf, size_t len, uint32_t k)
{
	char lo[MT_TEXT_BUF], hi[MT_TEXT_BUF];

	pow2(lo, sizeof(lo), mt_size_class_min(k));
	if (k + 1 < MT_SIZE_CLASSES)
		pow2(hi, sizeof(hi), mt_size_class_min(k + 1));
	else
		snprintf(hi, sizeof(hi), "inf");
	snprintf(buf, len, "[%s,%s)", lo, hi);
	return buf;
}

static void write_histogram(FILE *out, const char *title,
			    const struct mt_size_count *c, enum mt_unit unit)
{
	char label[2 * MT_TEXT_BUF + 4], bytes[MT_TEXT_BUF], pct[MT_TEXT_BUF];
	int64_t total = 0;
	bool any = false;

	for (uint32_t k = 0; k < MT_SIZE_CLASSES; k++) {
		total += (int64_t)c[k].bytes;
		any |= c[k].objects || c[k].bytes;
	}
	if (!any) {
		fprintf(out, "%s: none\n", title);
		return;
	}
	fprintf(out, "%s:\n", title);
	fprintf(out, "%12s %10s %12s %7s\n", "size", "objects", "bytes", "share");
	for (uint32_t k = 0; k < MT_SIZE_CLASSES; k++) {
		int64_t b = (int64_t)c[k].bytes;
		int bar = 0;

		if (!c[k].objects && !c[k].bytes)
			continue;
		if (total > 0 && b > 0)
			bar = (int)((double)b * BAR_WIDTH / (double)total + 0.5);
		fprintf(out, "%12s %10" PRId64 " %12s %7s",
			class_label(label, sizeof(label), k),
			(int64_t)c[k].objects,
			mt_format_bytes(bytes, sizeof(bytes), b, unit),
			mt_text_percent(pct, sizeof(pct), b, total));
		if (bar > 0)
			fprintf(out, "  %.*s", bar, "####################");
		fputc('\n', out);
	}
}

int mt_text_sizes(FILE *out, const struct mt_profile *p,
		  const struct mt_text_opts *o)
{
	const struct mt_summary *s = &p->sum;

	if (s->missing & MT_FACT_SIZES) {
		fputs("Allocated by size class: not recorded\n", out);
		return 0;
	}
	write_histogram(out, "Allocated by size class", s->sizes[MT_CAT_HEAP],
			o->unit);
	if (s->mmap_traced)
		write_histogram(out, "Mapped by size class (--mmap)",
				s->sizes[MT_CAT_MMAP], o->unit);
	return 0;
}
