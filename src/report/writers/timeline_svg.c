// SPDX-License-Identifier: MIT
/* timeline_svg.c: heap in use over time as SVG (timeline_svg.h). */
#include "timeline_svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "units.h"

#define WIDTH 960
#define HEIGHT 480
#define LEFT 90
#define RIGHT 30
#define TOP 50
#define BOTTOM 50
#define LEGEND_ROW 18

static const char *const colors[MT_TL_SVG_PROCS] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
	"#9467bd", "#8c564b", "#e377c2", "#17becf",
};

/* The plot's scales: values up to vmax bytes, times up to tmax seconds. */
struct plot {
	double vmax, tmax;
	double pw, ph;   /* plot area */
	double top;      /* below the legend */
};

static double px(const struct plot *p, double t)
{
	return LEFT + (p->tmax > 0 ? t / p->tmax : 0) * p->pw;
}

static double py(const struct plot *p, double v)
{
	return p->top + p->ph - (p->vmax > 0 ? v / p->vmax : 0) * p->ph;
}

/* A round step (1, 2 or 5 times a power of ten) giving about N ticks. */
static double nice_step(double range, int n)
{
	double raw = range / n, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* TEXT with XML's special characters escaped. */
static void escaped(FILE *out, const char *text)
{
	for (const char *c = text; *c; c++) {
		switch (*c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			fputc((unsigned char)*c < 0x20 ? '?' : *c, out);
		}
	}
}

/* Series to draw, the largest peaks first, in BY; returns how many. */
static size_t choose(const struct mt_tl_data *d,
		     const struct mt_tl_series **by)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		const struct mt_tl_series *s = &d->series[i];
		size_t at;

		if (n < MT_TL_SVG_PROCS)
			at = n++;
		else if (s->peak > by[n - 1]->peak)
			at = n - 1; /* the smallest goes */
		else
			continue;
		for (; at > 0 && by[at - 1]->peak < s->peak; at--)
			by[at] = by[at - 1];
		by[at] = s;
	}
	return n;
}

static void axes(FILE *out, const struct plot *p)
{
	static const struct { const char *name; double scale; } vunits[] = {
		{ "GiB", 1073741824.0 }, { "MiB", 1048576.0 }, { "KiB", 1024.0 },
		{ "B", 1.0 },
	};
	size_t u = 0;
	bool minutes = p->tmax > 180;
	double tscale = minutes ? 60 : 1, step;

	while (u + 1 < sizeof(vunits) / sizeof(vunits[0]) &&
	       p->vmax < vunits[u].scale)
		u++;
	fprintf(out, "<g class=\"axes\" font-size=\"12\" fill=\"#444\" stroke=\"none\">\n");
	step = nice_step(p->vmax / vunits[u].scale, 5);
	for (int k = 0; k * step <= p->vmax / vunits[u].scale + step * 1e-9; k++) {
		double v = k * step, y = py(p, v * vunits[u].scale);

		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			LEFT, y, LEFT + p->pw, y);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g %s</text>\n",
			LEFT - 6, y + 4, v, vunits[u].name);
	}
	step = nice_step(p->tmax / tscale, 8);
	for (int k = 0; k * step <= p->tmax / tscale + step * 1e-9; k++) {
		double t = k * step, x = px(p, t * tscale);

		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			x, p->top, x, p->top + p->ph);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g %s</text>\n",
			x, p->top + p->ph + 18, t, minutes ? "min" : "s");
	}
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
		LEFT, p->top + p->ph, LEFT + p->pw, p->top + p->ph);
	fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\"/>\n",
		LEFT, p->top, LEFT, p->top + p->ph);
	fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">time</text>\n",
		LEFT + p->pw / 2, HEIGHT - 8);
	fprintf(out, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">heap in use</text>\n",
		p->top + p->ph / 2, p->top + p->ph / 2);
	fputs("</g>\n", out);
}

/* Series S: the band of its interval maxima, then its in-use line. */
static void curve(FILE *out, const struct plot *p,
		  const struct mt_tl_series *s, const char *color,
		  double interval)
{
	double start = s->first_t;

	fprintf(out, "<g class=\"series\" data-pid=\"%u\" data-peak-bytes=\"%" PRIu64 "\">\n",
		s->pid, s->peak);
	/* Each point's maximum over the intervals it stands for. */
	fprintf(out, "<path class=\"max\" fill=\"%s\" fill-opacity=\"0.15\" stroke=\"%s\" stroke-opacity=\"0.35\" stroke-width=\"1\" d=\"M%.1f %.1f",
		color, color, px(p, start), py(p, 0));
	for (size_t i = 0; i < s->n; i++) {
		const struct mt_tl_point *pt = &s->pts[i];
		double t = pt->t_ms / 1000.0, from = t - pt->ticks * interval;

		if (from < start)
			from = start;
		fprintf(out, " L%.1f %.1f L%.1f %.1f", px(p, from), py(p, (double)pt->max),
			px(p, t), py(p, (double)pt->max));
		start = t;
	}
	fprintf(out, " L%.1f %.1f Z\"/>\n", px(p, start), py(p, 0));
	fprintf(out, "<polyline class=\"inuse\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"%.1f,%.1f",
		color, px(p, s->first_t), py(p, 0));
	for (size_t i = 0; i < s->n; i++)
		fprintf(out, " %.1f,%.1f", px(p, s->pts[i].t_ms / 1000.0),
			py(p, (double)s->pts[i].inuse));
	fputs("\"/>\n</g>\n", out);
}

static void legend(FILE *out, const struct mt_tl_series *const *by, size_t n,
		   size_t total)
{
	char v[32];

	fprintf(out, "<g class=\"legend\" font-size=\"12\">\n");
	for (size_t i = 0; i < n; i++) {
		const struct mt_tl_series *s = by[i];
		double y = TOP + (double)i * LEGEND_ROW;

		fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>\n",
			LEFT, y - 4, colors[i]);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\">pid %u (", LEFT + 20, y, s->pid);
		escaped(out, s->comm);
		fprintf(out, "): peak in use %" PRIu64 " bytes (%s) at %.2f s</text>\n",
			s->peak, mt_format_bytes(v, sizeof(v), (int64_t)s->peak,
						 MT_UNIT_AUTO), s->peak_t);
	}
	if (total > n)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\">%zu more processes not drawn</text>\n",
			LEFT + 20, TOP + (double)n * LEGEND_ROW, total - n);
	fputs("</g>\n", out);
}

int mt_tl_write_svg(FILE *out, const struct mt_tl_data *d)
{
	const struct mt_tl_series *by[MT_TL_SVG_PROCS];
	size_t n = choose(d, by), rows = n + (d->n > n);
	struct plot p = { .tmax = d->end_t > 0 ? d->end_t : d->interval };

	for (size_t i = 0; i < n; i++)
		if ((double)by[i]->peak > p.vmax)
			p.vmax = (double)by[i]->peak;
	/* Room above the peak, up to a round value. */
	p.vmax = p.vmax > 0 ? p.vmax * 1.05 : 1024;
	p.top = TOP + (double)rows * LEGEND_ROW;
	p.pw = WIDTH - LEFT - RIGHT;
	p.ph = HEIGHT - BOTTOM - p.top;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		"<title>memtrace: heap in use over time</title>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"24\" font-size=\"16\">Heap in use over time (line: at each sample; band: largest in each %.2f s interval)</text>\n",
		WIDTH, HEIGHT, WIDTH, HEIGHT, LEFT, d->interval);
	axes(out, &p);
	for (size_t i = n; i-- > 0;)
		curve(out, &p, by[i], colors[i], d->interval);
	legend(out, by, n, d->n);
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}

int mt_tl_svg_write(const char *path, const struct mt_tl_data *d)
{
	struct mt_outfile of;
	FILE *f;
	int ret = mt_outfile_open(&of, path);

	if (ret)
		return ret;
	f = fdopen(of.fd, "w");
	if (!f) {
		ret = -errno;
		mt_outfile_abort(&of);
		return ret;
	}
	of.fd = -1; /* fclose closes it */
	ret = mt_tl_write_svg(f, d);
	/* A write failed (ferror, -EIO): flushed again, it says why (ENOSPC). */
	if (ret == -EIO && ferror(f))
		clearerr(f);
	if (fclose(f) && (!ret || ret == -EIO))
		ret = -errno;
	if (ret) {
		mt_outfile_abort(&of);
		return ret;
	}
	return mt_outfile_commit(&of);
}
