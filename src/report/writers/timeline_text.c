// SPDX-License-Identifier: MIT
/* timeline_text.c: peaks and sparklines in the text reports. */
#include "timeline_text.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Room for a formatted value (units.h: 32 bytes suffice). */
#define VALUE_BUF 32
#define SPARK_BUF (3 * MT_TL_CELLS + 1)

/* MT_TL_SPARKS one character (3 bytes) each. */
static const char sparks[8][4] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };

char *mt_tl_sparkline(char *buf, size_t len, const uint64_t *cells,
		      size_t n, uint64_t max)
{
	size_t at = 0;

	if (len == 0)
		return buf;
	for (size_t i = 0; i < n && at + 4 <= len; i++) {
		int level = 0;

		if (cells[i] == MT_TL_CELL_NONE) {
			buf[at++] = ' ';
			continue;
		}
		if (max && cells[i])
			level = (int)ceil((double)cells[i] / (double)max * 8.0) - 1;
		level = level < 0 ? 0 : level > 7 ? 7 : level;
		memcpy(buf + at, sparks[level], 3);
		at += 3;
	}
	buf[at] = '\0';
	return buf;
}

void mt_tl_write_header(FILE *out, const struct mt_summary *s,
			enum mt_unit unit)
{
	const struct mt_tl_summary *tl = &s->timeline;
	const struct mt_tl_peak *pk = tl->nkept ? &tl->procs[0] : NULL;
	char v[VALUE_BUF], spark[SPARK_BUF];

	if (s->missing & MT_FACT_TIMELINE) {
		fputs("peak in use: not recorded\n", out);
		return;
	}
	fprintf(out, "peak in use: %" PRIu64 " bytes at %.2f s (%s)",
		pk ? pk->bytes : 0, pk ? pk->t : 0.0,
		mt_format_bytes(v, sizeof(v), pk ? (int64_t)pk->bytes : 0, unit));
	if (tl->nprocs > 1 && pk)
		fprintf(out, ", pid %u (%s), the largest of %zu processes' (below)",
			pk->pid, pk->comm, tl->nprocs);
	fputc('\n', out);
	if (s->counters[MT_CNT_TIMELINE_FULL] && !(s->missing & MT_FACT_COUNTERS))
		fprintf(out, "timeline: %" PRIu64 " allocator events left out, of processes past the %d it keeps at once\n",
			s->counters[MT_CNT_TIMELINE_FULL], MT_MAX_PROCS);
	if (tl->nprocs != 1 || !pk)
		return;
	fprintf(out, "in use over time: |%s| (%zu cells of %.2f s; %s %s)\n",
		mt_tl_sparkline(spark, sizeof(spark), pk->cells, tl->ncells,
				pk->bytes),
		tl->ncells, tl->cell_s, sparks[7], v);
}

void mt_tl_write_procs(FILE *out, const struct mt_summary *s,
		       enum mt_unit unit)
{
	const struct mt_tl_summary *tl = &s->timeline;
	char v[VALUE_BUF], spark[SPARK_BUF];

	if ((s->missing & MT_FACT_TIMELINE) || tl->nprocs <= 1)
		return;
	fprintf(out, "Peak in use by process (in use over time: %zu cells of %.2f s):\n",
		tl->ncells, tl->cell_s);
	for (size_t i = 0; i < tl->nkept; i++) {
		const struct mt_tl_peak *pk = &tl->procs[i];

		fprintf(out, "%10s at %8.2f s  pid %u (%s)  |%s|\n",
			mt_format_bytes(v, sizeof(v), (int64_t)pk->bytes, unit),
			pk->t, pk->pid, pk->comm,
			mt_tl_sparkline(spark, sizeof(spark), pk->cells,
					tl->ncells, pk->bytes));
	}
	if (tl->nprocs > tl->nkept)
		fprintf(out, "... and %zu more processes\n",
			tl->nprocs - tl->nkept);
	fputc('\n', out);
}
