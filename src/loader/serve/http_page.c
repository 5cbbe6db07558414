// SPDX-License-Identifier: MIT
/*
 * http_page.c: what --http serves people, all of it readable with
 * JavaScript off and nothing loaded from elsewhere:
 *   /                  the target, the timeline of in use, the flame graph
 *                      of now (?metric= ?pid= ?comm=, the views), the
 *                      snapshots kept and a form to diff two of them;
 *                      refreshed every ?refresh=N seconds (10 by default,
 *                      0: never): in place by its script (pause, interval:
 *                      http_page_script.h), else reloaded by a <noscript>
 *                      meta refresh.  Its CSP allows that script alone
 *                      (a nonce per response), nothing from elsewhere.
 *   /flame.svg         the interactive flame graph of now (same query)
 *   /report            memtrace's text report of now (?metric= ?seconds=
 *                      ?pid= ?comm=: as /debug/pprof/heap's)
 *   /timeline.svg      the timeline alone
 *   /snapshots/N.pb.gz snapshot N (pprof); POST /snapshots takes one now
 *   /diff?a=N&b=M      snapshot M less snapshot N: a table and a flame
 *                      graph of the difference; /diff.txt, /diff.svg
 *                      (http_diff.c)
 */
#include <errno.h>
#include <sys/random.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decimal.h"
#include "flame_svg.h"
#include "http_diff.h"
#include "http_page_script.h"
#include "http_profile.h"
#include "http_request.h"
#include "pprof_read.h"
#include "trace_reports.h"
#include "text.h"
#include "units.h"

/* S with <, >, &, " escaped. */
static void put_html(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void put_bytes(FILE *out, uint64_t v)
{
	char buf[32];

	mt_format_bytes(buf, sizeof(buf), (int64_t)v, MT_UNIT_AUTO);
	put_html(out, buf);
}

#define REFRESH_DEFAULT_S 10

struct page {
	struct mt_http *h;
	unsigned refresh;            /* seconds; 0: never */
	char nonce[33];              /* the script's, in the CSP */
	const struct mt_http_query *q;
	const struct mt_profile *prof;
	const char *timeline;        /* SVG, or NULL */
	size_t ntimeline;
	const char *timeline_err;    /* why there is none */
	char rest[1024];             /* the query but metric, refresh: links */
	struct mt_ring_entry snaps[MT_RING_SNAPSHOTS];
	size_t nsnaps;
};

static void put_snapshots(FILE *out, const struct page *pg)
{
	fputs("<h2 id=\"snapshots\">Snapshots</h2>\n<div id=\"snapshots-part\">\n", out);
	fprintf(out, "<form method=\"post\" action=\"/snapshots\"><button type=\"submit\">Take a snapshot now</button> "
		"(one every %g s%s, and on SIGUSR1; the last %d are kept)</form>\n",
		pg->h->o->snapshot_interval,
		pg->h->o->snapshot_interval > 0 ? "" : ": none, --snapshot-interval 0",
		MT_RING_SNAPSHOTS);
	if (!pg->nsnaps) {
		fputs("<p id=\"no-snapshots\">None yet.</p>\n</div>\n", out);
		return;
	}
	fputs("<table id=\"snapshot-list\"><tr><th>#</th><th>at</th><th>trace time</th><th>why</th>"
	      "<th>in use</th><th>allocated</th><th>profile</th></tr>\n", out);
	for (size_t i = 0; i < pg->nsnaps; i++) {
		const struct mt_ring_entry *e = &pg->snaps[i];
		char when[32] = "";
		struct tm tm;

		if (localtime_r(&e->wall, &tm))
			strftime(when, sizeof(when), "%H:%M:%S", &tm);
		fprintf(out, "<tr><td>%u</td><td>%s</td><td>%.1f s</td><td>%s</td><td>",
			e->seq, when, e->t, e->why);
		put_bytes(out, e->inuse_bytes);
		fputs("</td><td>", out);
		put_bytes(out, e->alloc_bytes);
		fprintf(out, "</td><td><a href=\"/snapshots/%u.pb.gz\">snapshot-%u.pb.gz</a></td></tr>\n",
			e->seq, e->seq);
	}
	fputs("</table>\n<form method=\"get\" action=\"/diff\">Diff: ", out);
	for (int k = 0; k < 2; k++) {
		fprintf(out, "%s<select name=\"%s\">", k ? " less " : "",
			k ? "a" : "b");
		for (size_t i = 0; i < pg->nsnaps; i++) {
			size_t pick = k ? 0 : pg->nsnaps - 1;

			fprintf(out, "<option value=\"%u\"%s>#%u</option>",
				pg->snaps[i].seq, i == pick ? " selected" : "",
				pg->snaps[i].seq);
		}
		fputs("</select>", out);
	}
	fputs(" <button type=\"submit\">Show</button> (B less A, as memtrace report B --base A)</form>\n</div>\n",
	      out);
}

/* Without the script: what the page does, and links to change it. */
static void put_refresh(FILE *out, const struct page *pg)
{
	static const unsigned every[] = { 5, 10, 30, 60, 0 };
	const char *m = mt_value_name(pg->q->metric);

	fprintf(out, "<p id=\"refresh\" data-every=\"%u\">", pg->refresh);
	if (pg->refresh)
		fprintf(out, "Reloaded every %u s; ", pg->refresh);
	else
		fputs("Not reloaded; ", out);
	fputs("reload:", out);
	for (size_t i = 0; i < sizeof(every) / sizeof(*every); i++) {
		fprintf(out, " %s<a href=\"/?metric=%s&amp;refresh=%u%s\">", i ? "| " : "", m,
			every[i], pg->rest);
		if (every[i])
			fprintf(out, "every %u s", every[i]);
		else
			fputs("never", out);
		fputs("</a>", out);
	}
	fputs("</p>\n", out);
}

static int write_page(FILE *out, const void *arg)
{
	const struct page *pg = arg;
	const struct mt_summary *s = &pg->prof->sum;
	const uint64_t *c = s->counters;
	int ret;

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n", out);
	if (pg->refresh) /* the script refreshes in place; without it: */
		fprintf(out, "<noscript><meta http-equiv=\"refresh\" content=\"%u\"></noscript>\n",
			pg->refresh);
	fputs("<title>memtrace: ", out);
	put_html(out, s->target);
	fputs("</title>\n<style>body{font-family:sans-serif;margin:1em 2em}"
	      "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}"
	      "svg{max-width:100%;height:auto}</style>\n</head><body>\n", out);
	fputs("<h1>memtrace</h1>\n", out);
	put_refresh(out, pg);
	fputs("<p id=\"target\">", out);
	put_html(out, s->target);
	fputs(", ", out);
	put_html(out, s->allocator);
	fprintf(out, "</p>\n<p id=\"figures\">traced %.1f s; in use <b>", s->duration_s);
	put_bytes(out, c[MT_CNT_ALLOC_BYTES] - c[MT_CNT_FREE_BYTES]);
	fprintf(out, "</b> in %" PRIu64 " blocks; allocated ",
		c[MT_CNT_ALLOC_OBJECTS] - c[MT_CNT_FREE_OBJECTS]);
	put_bytes(out, c[MT_CNT_ALLOC_BYTES]);
	fprintf(out, " in %" PRIu64 " blocks.  Profiles: <a href=\"/debug/pprof/\">/debug/pprof/</a>, "
		"report: <a href=\"/report\">/report</a>, "
		"metrics: <a href=\"/metrics\">/metrics</a>.</p>\n",
		c[MT_CNT_ALLOC_OBJECTS]);
	fputs("<h2 id=\"timeline\">In use over time</h2>\n<div id=\"timeline-chart\">\n", out);
	if (pg->timeline)
		fwrite(pg->timeline, 1, pg->ntimeline, out);
	else
		fprintf(out, "<p>%s</p>\n", pg->timeline_err);
	fputs("</div>\n<h2 id=\"flame\">Flame graph of ", out);
	put_html(out, mt_value_name(pg->q->metric));
	fputs(" now</h2>\n<p>", out);
	for (int i = 0; i < MT_NVALUES; i++)
		fprintf(out, "%s<a href=\"/?metric=%s&amp;refresh=%u%s\">%s</a>",
			i ? " | " : "", mt_value_name((enum mt_value)i),
			pg->refresh, pg->rest, mt_value_name((enum mt_value)i));
	fprintf(out, " | <a href=\"/flame.svg?metric=%s%s\">interactive (zoom, search)</a></p>\n<div id=\"flame-graph\">\n",
		mt_value_name(pg->q->metric), pg->rest);
	ret = mt_write_flame_svg_embedded(out, pg->prof, pg->q->metric);
	fputs("</div>\n", out);
	put_snapshots(out, pg);
	fprintf(out, "<script nonce=\"%s\">\n%s</script>\n</body></html>\n",
		pg->nonce, mt_http_page_script);
	return ret ? ret : ferror(out) ? -EIO : 0;
}

/* A new nonce for the page's script: 32 hex digits.  0 or -errno. */
static int make_nonce(char *buf)
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -errno;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static enum MHD_Result page(struct mt_http *h, struct MHD_Connection *c)
{
	struct page pg = { .h = h, .refresh = REFRESH_DEFAULT_S };
	const char *every = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
							"refresh");
	struct mt_http_query q;
	struct mt_http_result tl;
	struct mt_profile prof;
	char err[160], csp[256], *data;
	unsigned long v;
	size_t len;
	int ret;

	if (mt_http_query_parse(c, MT_INUSE_SPACE, &q, err, sizeof(err)))
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST, "%s\n", err);
	if (every && *every) {
		if (mt_parse_decimal(every, MT_HTTP_MAX_SECONDS, &v))
			return mt_http_text(c, MHD_HTTP_BAD_REQUEST,
					    "refresh: expected seconds, from 0 (never) to %d\n",
					    MT_HTTP_MAX_SECONDS);
		pg.refresh = (unsigned)v;
	}
	{
		static const char *const skip[] = { "metric", "refresh", NULL };

		mt_http_query_link(c, skip, pg.rest, sizeof(pg.rest));
	}
	ret = make_nonce(pg.nonce);
	if (ret)
		return mt_http_fail(c, ret);
	q.seconds = 0;
	ret = mt_http_profile(h, &q, &prof);
	if (ret)
		return mt_http_profile_fail(c, &q, ret);
	ret = mt_http_bridge_call(&h->bridge, MT_HTTP_JOB_TIMELINE,
				  MT_HTTP_WAIT_S, &tl);
	pg.q = &q;
	pg.prof = &prof;
	pg.timeline = tl.text;
	pg.ntimeline = tl.len;
	pg.timeline_err = ret == -ENODATA ? "No timeline: --timeline-interval 0."
					  : "The timeline could not be read.";
	pg.nsnaps = mt_ring_list(&h->ring, pg.snaps);
	ret = mt_http_memtext(write_page, &pg, &data, &len);
	mt_http_result_free(&h->bridge, &tl);
	mt_profile_free(&prof);
	if (ret)
		return mt_http_fail(c, ret);
	/* Its script alone (fetching the page again), inline styles, forms
	 * to itself; nothing from elsewhere, no frame around it. */
	snprintf(csp, sizeof(csp), "default-src 'none'; script-src 'nonce-%s'; "
		 "style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; "
		 "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		 pg.nonce);
	return mt_http_send_html(c, data, len, csp);
}

struct flame_arg {
	const struct mt_profile *p;
	enum mt_value metric;
};

static int write_flame(FILE *out, const void *arg)
{
	const struct flame_arg *a = arg;

	return mt_write_flame_svg(out, a->p, a->metric, NULL);
}

static enum MHD_Result flame(struct mt_http *h, struct MHD_Connection *c)
{
	struct mt_http_query q;
	struct mt_profile prof;
	struct flame_arg a;
	char err[160], *data;
	size_t len;
	int ret;

	if (mt_http_query_parse(c, MT_INUSE_SPACE, &q, err, sizeof(err)))
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST, "%s\n", err);
	ret = mt_http_profile(h, &q, &prof);
	if (ret)
		return mt_http_profile_fail(c, &q, ret);
	a = (struct flame_arg){ &prof, q.metric };
	ret = mt_http_memtext(write_flame, &a, &data, &len);
	mt_profile_free(&prof);
	if (ret)
		return mt_http_fail(c, ret);
	return mt_http_send(c, MHD_HTTP_OK, "image/svg+xml", data, len);
}

/* memtrace's text report of now, as the query asks. */
static enum MHD_Result report(struct mt_http *h, struct MHD_Connection *c)
{
	struct mt_text_opts o = mt_reports_opts(h->o, false).text;
	struct mt_http_query q;
	struct mt_profile prof;
	char err[160], *data = NULL;
	size_t len = 0;
	int ret;

	if (mt_http_query_parse(c, MT_INUSE_SPACE, &q, err, sizeof(err)))
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST, "%s\n", err);
	ret = mt_http_profile(h, &q, &prof);
	if (ret)
		return mt_http_profile_fail(c, &q, ret);
	o.metric = q.metric;
	ret = mt_http_text_report(&prof, &o, &data, &len);
	mt_profile_free(&prof);
	if (ret)
		return mt_http_fail(c, ret);
	return mt_http_send(c, MHD_HTTP_OK, "text/plain; charset=utf-8", data,
			    len);
}

static enum MHD_Result timeline(struct mt_http *h, struct MHD_Connection *c)
{
	struct mt_http_result tl;
	int ret = mt_http_bridge_call(&h->bridge, MT_HTTP_JOB_TIMELINE,
				      MT_HTTP_WAIT_S, &tl);
	char *data = tl.text;

	if (ret)
		return mt_http_fail(c, ret);
	tl.text = NULL;
	return mt_http_send(c, MHD_HTTP_OK, "image/svg+xml", data, tl.len);
}

/* "N.pb.gz" after "/snapshots/": N, or 0. */
static unsigned snapshot_number(const char *s)
{
	char *end;
	unsigned long v;

	if (*s < '1' || *s > '9')
		return 0;
	v = strtoul(s, &end, 10);
	return v <= 0xffffffffUL && !strcmp(end, ".pb.gz") ? (unsigned)v : 0;
}

static enum MHD_Result snapshot_file(struct mt_http *h,
				     struct MHD_Connection *c, const char *name)
{
	unsigned seq = snapshot_number(name);
	struct mt_ring_entry e;
	char file[64];

	if (!seq || mt_ring_get(&h->ring, seq, &e))
		return mt_http_text(c, MHD_HTTP_NOT_FOUND,
				    "no such snapshot (the last %d are kept)\n",
				    MT_RING_SNAPSHOTS);
	snprintf(file, sizeof(file), "snapshot-%u.pb.gz", seq);
	return mt_http_send_file(c, (char *)e.pb, e.len, file);
}

static enum MHD_Result take(struct mt_http *h, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result res;
	unsigned seq;
	char where[64];
	int ret = mt_http_take_snapshot(h, "button", &seq);

	if (ret)
		return mt_http_fail(c, ret);
	/* Back to the page (303: the browser GETs it). */
	snprintf(where, sizeof(where), "/#snapshots");
	r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, where);
	snprintf(where, sizeof(where), "%u", seq);
	MHD_add_response_header(r, "X-Memtrace-Snapshot", where);
	res = MHD_queue_response(c, MHD_HTTP_SEE_OTHER, r);
	MHD_destroy_response(r);
	return res;
}

enum MHD_Result mt_http_page(struct mt_http *h, struct MHD_Connection *c,
			     const char *url, bool post)
{
	if (post)
		return take(h, c);
	if (!strcmp(url, "/"))
		return page(h, c);
	if (!strcmp(url, "/flame.svg"))
		return flame(h, c);
	if (!strcmp(url, "/timeline.svg"))
		return timeline(h, c);
	if (!strcmp(url, "/report"))
		return report(h, c);
	if (!strcmp(url, "/diff"))
		return mt_http_diff(h, c, MT_HTTP_DIFF_PAGE);
	if (!strcmp(url, "/diff.svg"))
		return mt_http_diff(h, c, MT_HTTP_DIFF_SVG);
	if (!strcmp(url, "/diff.txt"))
		return mt_http_diff(h, c, MT_HTTP_DIFF_TEXT);
	if (!strncmp(url, "/snapshots/", 11))
		return snapshot_file(h, c, url + 11);
	return mt_http_text(c, MHD_HTTP_NOT_FOUND,
			    "not found: see / and /debug/pprof/\n");
}
