// SPDX-License-Identifier: MIT
/*
 * http_diff.c: the difference of two of the page's snapshots (--http),
 * snapshot M less snapshot N, with ?a=N&b=M:
 *
 *   /diff       a page: the functions whose value changed, by |change|
 *               (before, after, change: their flat values in N and M, as
 *               the text report's table counts them), and the
 *               differential flame graph (flame_svg.h: red grew, blue
 *               shrank); readable with JavaScript off
 *   /diff.svg   that flame graph alone, interactive
 *   /diff.txt   the text, exactly what `memtrace report snapshot-M.pb.gz
 *               --base snapshot-N.pb.gz` prints (its duration the time
 *               between them)
 *
 * ?metric=, ?pid= and ?comm= (a 404 when neither snapshot has such a
 * process) and pprof's views (?focus= ...: http_request.h) as on the
 * other requests, applied to both snapshots before the subtraction.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "diff.h"
#include "filter.h"
#include "flame_svg.h"
#include "func_table.h"
#include "http_diff.h"
#include "http_profile.h"
#include "pprof_read.h"
#include "trace_reports.h"
#include "units.h"
#include "view.h"

#define MAX_ROWS 200   /* the table's rows at most (the text has them all) */

/* Snapshot SEQ read back into P, named as its file is. */
static int read_snapshot(struct mt_http *h, unsigned seq, struct mt_profile *p,
			 char *name, size_t namelen, char *err, size_t errlen)
{
	struct mt_ring_entry e;
	int ret = mt_ring_get(&h->ring, seq, &e);

	snprintf(name, namelen, "snapshot-%u.pb.gz", seq);
	if (ret) {
		snprintf(err, errlen, "no snapshot %u (the last %d are kept)",
			 seq, MT_RING_SNAPSHOTS);
		return ret;
	}
	ret = mt_pprof_parse(e.pb, e.len, name, NULL, p, err, errlen);
	free(e.pb);
	return ret;
}

/* A function's row: its flat value before (in A) and after (in B). */
struct row {
	const char *name, *module;
	int64_t before, after;
};

struct diff_page {
	const struct mt_http *h;
	const struct mt_profile *d;   /* B less A */
	unsigned a, b;
	enum mt_value metric;
	struct row *rows;
	size_t nrows;
	const char *query;            /* a=N&b=M&metric=M and the rest */
	const char *rest;             /* the rest: "&amp;focus=..." */
};

static int cmp_name(const char *x, const char *y)
{
	if (!x || !y)
		return (x != NULL) - (y != NULL);
	return strcmp(x, y);
}

static int cmp_row_name(const void *x, const void *y)
{
	const struct row *r = x, *s = y;
	int c = cmp_name(r->name, s->name);

	return c ? c : cmp_name(r->module, s->module);
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

static int cmp_row_change(const void *x, const void *y)
{
	const struct row *r = x, *s = y;
	uint64_t dr = mag(r->after - r->before), ds = mag(s->after - s->before);

	if (dr != ds)
		return dr > ds ? -1 : 1;
	return cmp_row_name(x, y);
}

/* The rows of A's and B's functions, matched by name and module, the
 * largest change first.  0 or -ENOMEM. */
static int diff_rows(const struct mt_profile *a, const struct mt_profile *b,
		     enum mt_value m, struct row **out, size_t *n)
{
	struct mt_func_table ta = { 0 }, tb = { 0 };
	struct row *v = NULL;
	size_t k = 0, w = 0;
	int ret = mt_func_table_build(a, &ta);

	if (!ret)
		ret = mt_func_table_build(b, &tb);
	if (!ret) {
		v = calloc(ta.n + tb.n + 1, sizeof(*v));
		ret = v ? 0 : -ENOMEM;
	}
	for (size_t i = 0; !ret && i < ta.n; i++)
		v[k++] = (struct row){ ta.v[i].name, ta.v[i].module,
				       ta.v[i].flat[m], 0 };
	for (size_t i = 0; !ret && i < tb.n; i++)
		v[k++] = (struct row){ tb.v[i].name, tb.v[i].module, 0,
				       tb.v[i].flat[m] };
	if (!ret) {
		/* One row per function: the same name and module merged. */
		qsort(v, k, sizeof(*v), cmp_row_name);
		for (size_t i = 0; i < k; i++) {
			if (w && !cmp_row_name(&v[w - 1], &v[i])) {
				v[w - 1].before += v[i].before;
				v[w - 1].after += v[i].after;
			} else {
				v[w++] = v[i];
			}
		}
		k = 0;
		for (size_t i = 0; i < w; i++)
			if (v[i].before || v[i].after)
				v[k++] = v[i];
		qsort(v, k, sizeof(*v), cmp_row_change);
	}
	/* The names are the profiles': the rows point into them, kept. */
	mt_func_table_free(&ta);
	mt_func_table_free(&tb);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = k;
	return 0;
}

static void put_html(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void put_value(FILE *out, const struct diff_page *pg, int64_t v,
		      bool sign)
{
	char buf[40];

	if (mt_value_is_bytes(pg->metric))
		mt_format_bytes(buf, sizeof(buf), v, pg->h->o->unit);
	else
		snprintf(buf, sizeof(buf), "%" PRId64, v);
	fprintf(out, "%s%s", sign && v > 0 ? "+" : "", buf);
}

static int write_diff_page(FILE *out, const void *arg)
{
	const struct diff_page *pg = arg;
	const char *what = mt_value_name(pg->metric);
	size_t shown = pg->nrows < MAX_ROWS ? pg->nrows : MAX_ROWS;
	int ret;

	fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
		"<title>memtrace: snapshot %u less snapshot %u</title>\n"
		"<style>body{font-family:sans-serif;margin:1em 2em}"
		"table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
		"td.n,th.n{text-align:right;font-family:monospace}.grew{color:#b00}.shrank{color:#00b}"
		"svg{max-width:100%%;height:auto}</style>\n</head><body>\n"
		"<h1>Snapshot %u less snapshot %u</h1>\n<p>", pg->b, pg->a, pg->b,
		pg->a);
	put_html(out, pg->d->sum.target);
	if (pg->d->sum.view[0]) {
		fputs("; view: ", out);
		put_html(out, pg->d->sum.view);
	}
	fprintf(out, ". <a href=\"/\">Back to the page</a>; "
		"<a href=\"/diff.txt?%s\">as text</a> (memtrace report "
		"snapshot-%u.pb.gz --base snapshot-%u.pb.gz); "
		"<a href=\"/diff.svg?%s\">the flame graph alone</a> (zoom, "
		"search).</p>\n<p>", pg->query, pg->b, pg->a, pg->query);
	for (int i = 0; i < MT_NVALUES; i++)
		fprintf(out, "%s<a href=\"/diff?a=%u&amp;b=%u&amp;metric=%s%s\">%s</a>",
			i ? " | " : "", pg->a, pg->b,
			mt_value_name((enum mt_value)i), pg->rest,
			mt_value_name((enum mt_value)i));
	fprintf(out, "</p>\n<h2 id=\"changes\">Functions by change of %s</h2>\n", what);
	if (!pg->nrows) {
		fputs("<p id=\"no-change\">No function has a value in either snapshot.</p>\n",
		      out);
	} else {
		fprintf(out, "<table id=\"diff-table\"><tr><th>function</th>"
			"<th class=\"n\">before (#%u)</th><th class=\"n\">after (#%u)</th>"
			"<th class=\"n\">change</th></tr>\n", pg->a, pg->b);
		for (size_t i = 0; i < shown; i++) {
			const struct row *r = &pg->rows[i];
			int64_t d = r->after - r->before;

			fputs("<tr><td>", out);
			put_html(out, r->name ? r->name : "?");
			fputs("</td><td class=\"n\">", out);
			put_value(out, pg, r->before, false);
			fputs("</td><td class=\"n\">", out);
			put_value(out, pg, r->after, false);
			fprintf(out, "</td><td class=\"n%s\">",
				d > 0 ? " grew" : d < 0 ? " shrank" : "");
			put_value(out, pg, d, true);
			fputs("</td></tr>\n", out);
		}
		fputs("</table>\n", out);
		if (shown < pg->nrows)
			fprintf(out, "<p>%zu more functions, of smaller change: see the text.</p>\n",
				pg->nrows - shown);
	}
	fprintf(out, "<h2 id=\"flame\">Flame graph of the difference</h2>\n"
		"<p>Red: grew, blue: shrank, the deeper the more; a frame's width is "
		"how much changed under it (growth and shrinkage both count).</p>\n"
		"<div id=\"flame-graph\">\n");
	ret = mt_write_flame_svg_diff(out, pg->d, pg->metric, true);
	fputs("</div>\n</body></html>\n", out);
	return ret ? ret : ferror(out) ? -EIO : 0;
}

struct svg_arg {
	const struct mt_profile *p;
	enum mt_value metric;
};

static int write_diff_svg(FILE *out, const void *arg)
{
	const struct svg_arg *s = arg;

	return mt_write_flame_svg_diff(out, s->p, s->metric, false);
}

/* "a=N&b=M&metric=M" and the rest of the query, for the page's links. */
static void link_query(struct MHD_Connection *c, unsigned a, unsigned b,
		       enum mt_value m, char *buf, size_t len)
{
	static const char *const skip[] = { "a", "b", "metric", NULL };
	int n = snprintf(buf, len, "a=%u&amp;b=%u&amp;metric=%s", a, b,
			 mt_value_name(m));

	if (n > 0 && (size_t)n < len)
		mt_http_query_link(c, skip, buf + n, len - (size_t)n);
}

enum MHD_Result mt_http_diff(struct mt_http *h, struct MHD_Connection *c,
			     enum mt_http_diff_kind kind)
{
	const char *as = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "a");
	const char *bs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "b");
	struct mt_profile a = { 0 }, b = { 0 };
	struct mt_render_opts ropts = mt_reports_opts(h->o, false);
	struct mt_http_query q;
	struct diff_page pg = { .h = h };
	static const char *const skip[] = { "a", "b", "metric", NULL };
	char an[64], bn[64], err[256], query[1024], rest[1024], *data = NULL;
	unsigned long sa, sb;
	size_t len = 0;
	int ret;

	if (mt_parse_decimal(as, UINT_MAX, &sa) || !sa ||
	    mt_parse_decimal(bs, UINT_MAX, &sb) || !sb)
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST,
				    "diff: expected ?a=N&b=M, two snapshot numbers\n");
	if (mt_http_query_parse(c, h->o->metric, &q, err, sizeof(err)))
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST, "%s\n", err);
	ret = read_snapshot(h, (unsigned)sa, &a, an, sizeof(an), err, sizeof(err));
	if (!ret)
		ret = read_snapshot(h, (unsigned)sb, &b, bn, sizeof(bn), err,
				    sizeof(err));
	if (ret) {
		mt_profile_free(&a);
		mt_profile_free(&b);
		return mt_http_text(c, ret == -ENOENT ? MHD_HTTP_NOT_FOUND
						      : MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "diff: %s\n", err);
	}
	/* Both are of this trace, whose target (system-wide: the number of
	 * processes) may have changed: the diff's duration is between them. */
	memcpy(a.sum.target, b.sum.target, sizeof(a.sum.target));
	if (q.pid || q.comm[0]) {
		const char *comm = q.comm[0] ? q.comm : NULL;

		ret = mt_profile_filter(&a, q.pid, comm);
		if (!ret)
			ret = mt_profile_filter(&b, q.pid, comm);
		if (!ret && !mt_profile_nprocs(&a) && !mt_profile_nprocs(&b)) {
			mt_profile_free(&a);
			mt_profile_free(&b);
			return mt_http_profile_fail(c, &q, -ESRCH);
		}
	}
	if (!ret)
		ret = mt_profile_view(&a, &q.view);
	if (!ret)
		ret = mt_profile_view(&b, &q.view);
	if (!ret && kind == MT_HTTP_DIFF_PAGE)
		ret = diff_rows(&a, &b, q.metric, &pg.rows, &pg.nrows);
	if (!ret)
		ret = mt_profile_subtract(&b, &a, an);
	if (!ret && kind == MT_HTTP_DIFF_TEXT) {
		ropts.text.metric = q.metric;
		ret = mt_http_text_report(&b, &ropts.text, &data, &len);
	} else if (!ret && kind == MT_HTTP_DIFF_SVG) {
		struct svg_arg s = { &b, q.metric };

		ret = mt_http_memtext(write_diff_svg, &s, &data, &len);
	} else if (!ret) {
		link_query(c, (unsigned)sa, (unsigned)sb, q.metric, query,
			   sizeof(query));
		pg.d = &b;
		pg.a = (unsigned)sa;
		pg.b = (unsigned)sb;
		pg.metric = q.metric;
		pg.query = query;
		mt_http_query_link(c, skip, rest, sizeof(rest));
		pg.rest = rest;
		ret = mt_http_memtext(write_diff_page, &pg, &data, &len);
	}
	free(pg.rows);
	mt_profile_free(&a);
	mt_profile_free(&b);
	if (ret)
		return mt_http_fail(c, ret);
	if (kind == MT_HTTP_DIFF_PAGE) /* no script, nothing from elsewhere */
		return mt_http_send_html(c, data, len,
					 "default-src 'none'; style-src 'unsafe-inline'; "
					 "base-uri 'none'; form-action 'self'; "
					 "frame-ancestors 'none'");
	return mt_http_send(c, MHD_HTTP_OK,
			    kind == MT_HTTP_DIFF_TEXT ? "text/plain; charset=utf-8"
						      : "image/svg+xml",
			    data, len);
}
