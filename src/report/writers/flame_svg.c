// SPDX-License-Identifier: MIT
/* flame_svg.c: the flame graph writer (layout, XML text, colours). */
#include "flame_svg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flame_svg_script.h"
#include "itab.h"
#include "units.h"

#define XPAD 10                 /* margin left and right of the frames */
#define DRAW_W (MT_FLAME_WIDTH - 2 * XPAD)
#define FRAME_H 16              /* a row; the rectangle is 1 less */
#define TOP 62                  /* title, subtitle and buttons above */
#define BOTTOM 34               /* the details line below */
#define CHAR_W 7.25             /* advance of a 12px monospace character */
#define EMPTY_H 150

/* --- XML text ----------------------------------------------------------- */

/*
 * The character at S (NUL-terminated) as XML 1.0 can hold it: a valid
 * UTF-8 sequence is itself, any other byte U+FFFD, a control character
 * (tab and line breaks too: names are one line) a space or U+FFFD.
 * Returns the bytes of S it stands for; *CP gets the character.
 */
static size_t next_char(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len;
	uint32_t c = s[0];

	if (c < 0x80) {
		*cp = c >= 0x20 ? c : (c == '\t' || c == '\n' || c == '\r') ? ' ' : 0xfffd;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {  /* also stops at the NUL */
			*cp = 0xfffd;
			return 1;
		}
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
	    c == 0xfffe || c == 0xffff) {
		*cp = 0xfffd;
		return 1;
	}
	*cp = c;
	return len;
}

/* Characters of S as put_text writes them. */
static size_t text_chars(const char *s)
{
	size_t n = 0;
	uint32_t cp;

	for (const unsigned char *u = (const unsigned char *)s; *u; n++)
		u += next_char(u, &cp);
	return n;
}

static void put_char(FILE *out, uint32_t cp)
{
	switch (cp) {
	case '&':
		fputs("&amp;", out);
		return;
	case '<':
		fputs("&lt;", out);
		return;
	case '>':
		fputs("&gt;", out);
		return;
	case '"':
		fputs("&quot;", out);
		return;
	case '\'':
		fputs("&apos;", out);
		return;
	default:
		break;
	}
	if (cp < 0x80) {
		putc((int)cp, out);
	} else if (cp < 0x800) {
		putc((int)(0xc0 | (cp >> 6)), out);
		putc((int)(0x80 | (cp & 0x3f)), out);
	} else if (cp < 0x10000) {
		putc((int)(0xe0 | (cp >> 12)), out);
		putc((int)(0x80 | ((cp >> 6) & 0x3f)), out);
		putc((int)(0x80 | (cp & 0x3f)), out);
	} else {
		putc((int)(0xf0 | (cp >> 18)), out);
		putc((int)(0x80 | ((cp >> 12) & 0x3f)), out);
		putc((int)(0x80 | ((cp >> 6) & 0x3f)), out);
		putc((int)(0x80 | (cp & 0x3f)), out);
	}
}

/* The first MAX characters of S, escaped for XML text or attributes. */
static void put_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;

	for (size_t n = 0; *u && n < max; n++) {
		u += next_char(u, &cp);
		put_char(out, cp);
	}
}

/*
 * S as a label W pixels wide: whole if it fits, else cut short with ".."
 * when at least 3 of its characters fit before that, else nothing.
 */
static void put_label(FILE *out, const char *s, double w)
{
	double fit = floor((w - 6) / CHAR_W);
	size_t n;

	if (fit < 1)
		return;
	n = fit > 1e6 ? 1000000 : (size_t)fit;
	if (text_chars(s) <= n) {
		put_text(out, s, SIZE_MAX);
	} else if (n >= 5) {
		put_text(out, s, n - 2);
		fputs("..", out);
	}
}

/* --- values ------------------------------------------------------------- */

/* What the metric counts, as the titles say it. */
static const char *what_of(enum mt_value m)
{
	switch (m) {
	case MT_ALLOC_OBJECTS:
		return "objects allocated";
	case MT_ALLOC_SPACE:
		return "bytes allocated";
	case MT_INUSE_OBJECTS:
		return "objects in use";
	case MT_INUSE_SPACE:
	default:
		return "bytes in use";
	}
}

/* "1.50KiB (1536 bytes)", "300B (300 bytes)", "12 objects". */
static void put_value(FILE *out, int64_t v, bool bytes)
{
	char buf[32];

	if (!bytes) {
		fprintf(out, "%" PRId64 " object%s", v, v == 1 ? "" : "s");
		return;
	}
	fprintf(out, "%s (%" PRId64 " byte%s)",
		mt_format_bytes(buf, sizeof(buf), v, MT_UNIT_AUTO), v,
		v == 1 ? "" : "s");
}

static double share(int64_t v, int64_t total)
{
	return total > 0 ? 100.0 * (double)v / (double)total : 0;
}

/* --- colours ------------------------------------------------------------ */

/* Warm colours from a hash of the name: the same name, the same colour. */
static void put_fill(FILE *out, const char *name, enum mt_flame_kind kind)
{
	uint64_t h = mt_hash_str(MT_HASH_SEED, name);
	double a = (double)(h & 0xffff) / 65536.0;
	double b = (double)((h >> 16) & 0xffff) / 65536.0;
	double c = (double)((h >> 32) & 0xffff) / 65536.0;

	switch (kind) {
	case MT_FLAME_ROOT:
		fputs("rgb(205,205,205)", out);
		return;
	case MT_FLAME_PROCESS:
		fprintf(out, "rgb(%d,%d,%d)", 160 + (int)(40 * a),
			160 + (int)(40 * a), 200 + (int)(40 * b));
		return;
	case MT_FLAME_UNRESOLVED:
		fprintf(out, "rgb(%d,%d,%d)", 170 + (int)(40 * a),
			170 + (int)(40 * a), 170 + (int)(40 * a));
		return;
	case MT_FLAME_FUNCTION:
	default:
		/* flamegraph.pl's "hot" palette: red to yellow. */
		fprintf(out, "rgb(%d,%d,%d)", 205 + (int)(50 * c),
			(int)(230 * a), (int)(55 * b));
		return;
	}
}

/*
 * A frame of a difference: red when what is under it grew, blue when it
 * shrank, white when it did not change in all (as flamegraph.pl's
 * difffolded colours); the deeper, the larger DELTA against MAX, the
 * largest |delta| of any frame.
 */
static void put_diff_fill(FILE *out, int64_t delta, int64_t max)
{
	double r = max > 0 ? fabs((double)delta) / (double)max : 0;
	int light = 225 - (int)(185 * (r > 1 ? 1 : r));

	if (delta > 0)
		fprintf(out, "rgb(255,%d,%d)", light, light);
	else if (delta < 0)
		fprintf(out, "rgb(%d,%d,255)", light, light);
	else
		fputs("rgb(235,235,235)", out);
}

/* "+1.50KiB (+1536 bytes)", "-12 objects": a change, signed. */
static void put_change(FILE *out, int64_t v, bool bytes)
{
	char buf[32];

	if (!bytes) {
		fprintf(out, "%+" PRId64 " object%s", v, v == 1 || v == -1 ? "" : "s");
		return;
	}
	mt_format_bytes(buf, sizeof(buf), v, MT_UNIT_AUTO);
	fprintf(out, "%s%s (%+" PRId64 " byte%s)", v > 0 ? "+" : "", buf, v,
		v == 1 || v == -1 ? "" : "s");
}

/* "+1.50KiB", "-12": a change in few characters. */
static void put_short_change(FILE *out, int64_t v, bool bytes)
{
	char buf[32];

	if (!bytes) {
		fprintf(out, "%+" PRId64, v);
		return;
	}
	fprintf(out, "%s%s", v > 0 ? "+" : "",
		mt_format_bytes(buf, sizeof(buf), v, MT_UNIT_AUTO));
}

/* --- the document ------------------------------------------------------- */

struct doc {
	FILE *out;
	const struct mt_profile *p;
	const struct mt_flame_tree *t;
	enum mt_value metric;
	bool bytes;
	unsigned rows;     /* depths drawn */
	int height;
	bool embedded;     /* inside an HTML page: no XML declaration, no script */
	bool diff;         /* a difference: widths |change|, colours its sign */
	int64_t max_delta; /* of the frames drawn, the largest |delta| */
	int64_t grew, shrank; /* the samples' increases, decreases (> 0) */
};

static bool drawn(const struct mt_flame_tree *t, const struct mt_flame_node *n)
{
	return n->value > 0 &&
	       (double)DRAW_W * (double)n->value / (double)t->total >= MT_FLAME_MIN_WIDTH;
}

/* "bytes in use of pid 1 (prog)": the metric, then the target if known. */
static void put_subject(const struct doc *d)
{
	fputs(what_of(d->metric), d->out);
	if (d->p->sum.target[0]) {
		fputs(", ", d->out);
		put_text(d->out, d->p->sum.target, SIZE_MAX);
	}
}

static void put_head(const struct doc *d, size_t ndrawn, size_t elided)
{
	FILE *out = d->out;
	const struct mt_summary *s = &d->p->sum;
	char buf[32];

	if (!d->embedded)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n",
		      out);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"data-total=\"%" PRId64 "\" data-unit=\"%s\" data-what=\"%s\" "
		"data-x0=\"%d\" data-w=\"%d\" data-min=\"%g\" data-charw=\"%g\">\n",
		MT_FLAME_WIDTH, d->height, MT_FLAME_WIDTH, d->height,
		d->t->total, d->bytes ? "bytes" : "objects", what_of(d->metric),
		XPAD, DRAW_W, MT_FLAME_MIN_WIDTH, CHAR_W);
	fprintf(out, "<title>memtrace %sflame graph: ", d->diff ? "differential " : "");
	put_subject(d);
	fputs("</title>\n", out);
	fprintf(out, "<desc>memtrace %s flame graph of %s: %zu stacks, %zu frames "
		"drawn, %zu narrower than %g px not drawn (their values are in "
		"their parents').</desc>\n",
		MEMTRACE_VERSION, mt_value_name(d->metric), d->t->nstacks,
		ndrawn, elided, MT_FLAME_MIN_WIDTH);
	fprintf(out, "<style><![CDATA[\n%s]]></style>\n", mt_flame_svg_style);
	fprintf(out, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\"/>\n",
		MT_FLAME_WIDTH, d->height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">%s of %s</text>\n",
		MT_FLAME_WIDTH / 2,
		d->diff ? "Differential flame graph" : "Flame graph",
		what_of(d->metric));
	fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"44\">", MT_FLAME_WIDTH / 2);
	if (s->target[0] && !d->diff) { /* a diff's says what less what: long */
		put_text(out, s->target, SIZE_MAX);
		fputs(": ", out);
	}
	if (d->diff) {
		fputs("net ", out);
		put_short_change(out, d->grew - d->shrank, d->bytes);
		fputs(": grew ", out);
		put_short_change(out, d->grew, d->bytes);
		fputs(", shrank ", out);
		put_short_change(out, -d->shrank, d->bytes);
		fprintf(out, " in %zu stack%s (red grew, blue shrank; width: "
			"how much changed)", d->t->nstacks,
			d->t->nstacks == 1 ? "" : "s");
	} else {
		put_value(out, d->t->total, d->bytes);
		fprintf(out, " in %zu stack%s", d->t->nstacks,
			d->t->nstacks == 1 ? "" : "s");
	}
	if (s->sample_bytes)
		fprintf(out, ", estimated from samples (one per %s allocated)",
			mt_format_bytes(buf, sizeof(buf), (int64_t)s->sample_bytes,
					MT_UNIT_AUTO));
	if (d->t->left_out) {
		fputs("; decreases not drawn: ", out);
		put_value(out, d->t->left_out, d->bytes);
	}
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"reset\" class=\"btn off\" x=\"%d\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
		XPAD, MT_FLAME_WIDTH - XPAD, XPAD, d->height - 12,
		MT_FLAME_WIDTH - XPAD, d->height - 12);
}

static void put_frame(const struct doc *d, const struct mt_flame_node *n)
{
	FILE *out = d->out;
	const char *name = d->t->names[n->name];
	double x = XPAD + (double)DRAW_W * (double)n->x / (double)d->t->total;
	double w = (double)DRAW_W * (double)n->value / (double)d->t->total;
	int y = TOP + (int)(d->rows - 1 - n->depth) * FRAME_H;

	fprintf(out, "<g data-x=\"%" PRId64 "\" data-v=\"%" PRId64 "\"",
		n->x, n->value);
	if (d->diff)
		fprintf(out, " data-d=\"%" PRId64 "\"", n->delta);
	fputs("><title>", out);
	put_text(out, name, SIZE_MAX);
	putc('\n', out);
	if (d->diff) {
		put_change(out, n->delta, d->bytes);
		fprintf(out, " net, of %.2f%% of all the change in %s</title>",
			share(n->value, d->t->total), what_of(d->metric));
	} else {
		put_value(out, n->value, d->bytes);
		fprintf(out, ", %.2f%% of %s</title>",
			share(n->value, d->t->total), what_of(d->metric));
	}
	fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"",
		x, y, w, FRAME_H - 1);
	if (d->diff)
		put_diff_fill(out, n->delta, d->max_delta);
	else
		put_fill(out, name, n->kind);
	fprintf(out, "\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">", x + 3, y + 11);
	put_label(out, name, w);
	fputs("</text></g>\n", out);
}

static void put_nothing(const struct doc *d)
{
	fprintf(d->out, "<text id=\"nothing\" x=\"%d\" y=\"%d\">Nothing to show: "
		"no %s in this profile.</text>\n<g id=\"frames\"/>\n",
		MT_FLAME_WIDTH / 2, TOP + 32, what_of(d->metric));
}

static int write_svg(FILE *out, const struct mt_profile *p,
		     enum mt_value metric, struct mt_flame_svg_stats *stats,
		     bool embedded, bool diff)
{
	struct mt_flame_tree t;
	struct doc d = { .out = out, .p = p, .t = &t, .metric = metric,
			 .bytes = mt_value_is_bytes(metric),
			 .embedded = embedded, .diff = diff };
	size_t ndrawn = 0, elided = 0;
	int ret = diff ? mt_flame_tree_build_diff(&t, p, metric)
		       : mt_flame_tree_build(&t, p, metric);

	if (ret)
		return ret;
	for (size_t i = 0; diff && i < p->nsamples; i++) {
		int64_t v = p->samples[i].v[metric];

		if (v > 0)
			d.grew += v;
		else if (v < 0)
			d.shrank -= v;
	}
	/* An empty profile has its root alone, of value 0: nothing drawn. */
	for (size_t i = 0; i < t.nnodes && t.total > 0; i++) {
		if (!drawn(&t, &t.nodes[i])) {
			elided++;
			continue;
		}
		ndrawn++;
		if (llabs(t.nodes[i].delta) > d.max_delta)
			d.max_delta = llabs(t.nodes[i].delta);
		if (t.nodes[i].depth + 1 > d.rows)
			d.rows = t.nodes[i].depth + 1;
	}
	d.height = d.rows ? TOP + (int)d.rows * FRAME_H + BOTTOM : EMPTY_H;
	put_head(&d, ndrawn, elided);
	if (t.total > 0) {
		fputs("<g id=\"frames\">\n", out);
		/* Depth first, siblings by name. */
		for (size_t i = 0; i < t.nnodes; i++)
			if (drawn(&t, &t.nodes[i]))
				put_frame(&d, &t.nodes[i]);
		fputs("</g>\n", out);
	} else {
		put_nothing(&d);
	}
	if (!embedded)
		fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
			mt_flame_svg_script);
	fputs("</svg>\n", out);
	if (stats) {
		stats->drawn = ndrawn;
		stats->elided = elided;
	}
	mt_flame_tree_free(&t);
	return ferror(out) ? -EIO : 0;
}

int mt_write_flame_svg(FILE *out, const struct mt_profile *p,
		       enum mt_value metric, struct mt_flame_svg_stats *stats)
{
	return write_svg(out, p, metric, stats, false, false);
}

int mt_write_flame_svg_embedded(FILE *out, const struct mt_profile *p,
				enum mt_value metric)
{
	return write_svg(out, p, metric, NULL, true, false);
}

int mt_write_flame_svg_diff(FILE *out, const struct mt_profile *p,
			    enum mt_value metric, bool embedded)
{
	return write_svg(out, p, metric, NULL, embedded, true);
}
