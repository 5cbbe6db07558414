/* SPDX-License-Identifier: MIT */
/*
 * test_flame_svg.c: the flame graph (src/report/writers/flame_tree.c, flame_svg.c)
 * on profiles built in memory: merging into a tree, totals and shares in
 * the titles, XML escaping of any bytes, elision of frames narrower than
 * 0.1 px, an empty profile, deep stacks and 100k stacks.  The SVG is
 * written to a buffer (open_memstream) and searched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flame_svg.h"
#include "flame_tree.h"

/* --- building profiles -------------------------------------------------- */

static uint32_t add_frame(struct mt_profile *p, const char *function, int line)
{
	struct mt_frame *v = reallocarray(p->frames, p->nframes + 1, sizeof(*v));

	assert_non_null(v);
	p->frames = v;
	v[p->nframes] = (struct mt_frame){
		.function = strdup(function),
		.line = line,
		.addr = 0x1000 + p->nframes,
	};
	assert_non_null(v[p->nframes].function);
	return (uint32_t)p->nframes++;
}

/* FRAMES leaf first; V sets every metric (objects: V / 10). */
static void add_sample(struct mt_profile *p, uint32_t pid, const uint32_t *frames,
		       size_t n, int64_t v)
{
	struct mt_sample *s;

	if ((p->nsamples & (p->nsamples - 1)) == 0) {
		size_t cap = p->nsamples ? p->nsamples * 2 : 1;

		s = reallocarray(p->samples, cap, sizeof(*s));
		assert_non_null(s);
		p->samples = s;
	}
	s = &p->samples[p->nsamples++];
	*s = (struct mt_sample){
		.pid = pid,
		.nframes = n,
		.frames = calloc(n ? n : 1, sizeof(uint32_t)),
		.v = { v / 10, v, v / 10, v },
	};
	assert_non_null(s->frames);
	memcpy(s->frames, frames, n * sizeof(*frames));
}

static void add_proc(struct mt_profile *p, uint32_t pid, const char *comm)
{
	struct mt_process *v = reallocarray(p->procs, p->nprocs + 1, sizeof(*v));

	assert_non_null(v);
	p->procs = v;
	v[p->nprocs] = (struct mt_process){ .pid = pid };
	snprintf(v[p->nprocs].comm, sizeof(v[p->nprocs].comm), "%s", comm);
	p->nprocs++;
}

#define FRAMES(...) (const uint32_t[]){ __VA_ARGS__ }, \
	sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t)

/* --- writing ------------------------------------------------------------ */

struct svg {
	char *text;
	size_t len;
	struct mt_flame_svg_stats stats;
};

static void render(const struct mt_profile *p, enum mt_value m, struct svg *out)
{
	FILE *f = open_memstream(&out->text, &out->len);

	assert_non_null(f);
	assert_int_equal(mt_write_flame_svg(f, p, m, &out->stats), 0);
	assert_int_equal(fclose(f), 0);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

/* The <title> of the frame named NAME (escaped as in the file), or fail. */
static const char *title_of(const struct svg *s, const char *name)
{
	static char want[512];
	const char *hit;

	snprintf(want, sizeof(want), "<title>%s\n", name);
	hit = strstr(s->text, want);
	if (!hit)
		fail_msg("no frame titled \"%s\" in:\n%s", name, s->text);
	return hit + strlen("<title>");
}

/* The title of NAME says exactly INFO on its second line. */
static void assert_info(const struct svg *s, const char *name, const char *info)
{
	const char *t = title_of(s, name) + strlen(name) + 1;
	size_t n = strlen(info);

	if (strncmp(t, info, n) != 0 || strncmp(t + n, "</title>", 8) != 0)
		fail_msg("title of %s: expected \"%s\", got \"%.*s\"", name, info,
			 (int)(strcspn(t, "<")), t);
}

/* The label of the frame titled NAME (malloc'ed): its <text>'s content. */
static char *label_of(const struct svg *s, const char *name)
{
	const char *t = strstr(title_of(s, name), "<text ");
	const char *start = t ? strchr(t, '>') : NULL;
	const char *end = start ? strstr(start, "</text>") : NULL;
	char *label;

	assert_non_null(end);
	label = strndup(start + 1, (size_t)(end - start - 1));
	assert_non_null(label);
	return label;
}

/* Every byte sequence valid UTF-8, and no control character but '\n'. */
static void assert_clean_utf8(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = u[i] < 0x80 ? 1 : (u[i] >> 5) == 6 ? 2 :
			   (u[i] >> 4) == 14 ? 3 : (u[i] >> 3) == 30 ? 4 : 0;

		if (n == 0 || i + n > len)
			fail_msg("byte 0x%02x at %zu starts no UTF-8 character", u[i], i);
		if (n == 1 && u[i] < 0x20 && u[i] != '\n')
			fail_msg("control character 0x%02x at %zu", u[i], i);
		for (size_t k = 1; k < n; k++)
			if ((u[i + k] & 0xc0) != 0x80)
				fail_msg("bad continuation byte at %zu", i + k);
		i += n;
	}
}

static void svg_free(struct svg *s)
{
	free(s->text);
	memset(s, 0, sizeof(*s));
}

/* --- tests -------------------------------------------------------------- */

/*
 * main -> a -> x 100, main -> a -> y 50, main -> b 25: a is 150 of 175.
 * a is reached through two frames (lines 10 and 11): one node.  A sample
 * of 0 adds nothing, a negative one (a profile less a base) is left out.
 */
static void test_totals_and_merging(void **state)
{
	struct mt_profile p = { 0 };
	uint32_t main_ = add_frame(&p, "main", 5);
	uint32_t a10 = add_frame(&p, "a", 10), a11 = add_frame(&p, "a", 11);
	uint32_t x = add_frame(&p, "x", 20), y = add_frame(&p, "y", 30);
	uint32_t b = add_frame(&p, "b", 40), z = add_frame(&p, "zero", 50);
	struct mt_flame_tree t;
	struct svg s = { 0 };

	(void)state;
	add_sample(&p, 1, FRAMES(x, a10, main_), 100);
	add_sample(&p, 1, FRAMES(y, a11, main_), 50);
	add_sample(&p, 1, FRAMES(b, main_), 25);
	add_sample(&p, 1, FRAMES(z, main_), 0);
	add_sample(&p, 1, FRAMES(b, main_), -30);
	snprintf(p.sum.target, sizeof(p.sum.target), "pid 1 (prog)");

	assert_int_equal(mt_flame_tree_build(&t, &p, MT_INUSE_SPACE), 0);
	assert_int_equal(t.total, 175);
	assert_int_equal(t.left_out, 30);
	assert_int_equal(t.nstacks, 3);
	assert_int_equal(t.nnodes, 6);   /* all, main, a, x, y, b */
	assert_int_equal(t.max_depth, 3);
	/* Depth first, children by name: main's a (x 0), then b (x 150). */
	{
		static const struct { const char *name; uint32_t parent; int64_t value, x; } want[] = {
			{ "all", MT_FLAME_NONE, 175, 0 }, { "main", 0, 175, 0 },
			{ "a", 1, 150, 0 }, { "x", 2, 100, 0 }, { "y", 2, 50, 100 },
			{ "b", 1, 25, 150 },
		};

		for (size_t i = 0; i < t.nnodes; i++) {
			assert_string_equal(t.names[t.nodes[i].name], want[i].name);
			assert_int_equal(t.nodes[i].parent, want[i].parent);
			assert_int_equal(t.nodes[i].value, want[i].value);
			assert_int_equal(t.nodes[i].x, want[i].x);
		}
	}
	mt_flame_tree_free(&t);

	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(s.stats.drawn, 6);
	assert_int_equal(s.stats.elided, 0);
	assert_int_equal(count(s.text, "<g data-x="), 6);
	assert_non_null(strstr(s.text, "data-total=\"175\""));
	assert_info(&s, "all", "175B (175 bytes), 100.00% of bytes in use");
	assert_info(&s, "a", "150B (150 bytes), 85.71% of bytes in use");
	assert_info(&s, "b", "25B (25 bytes), 14.29% of bytes in use");
	assert_null(strstr(s.text, "<title>zero\n"));
	assert_non_null(strstr(s.text, "<title>memtrace flame graph: bytes in use, pid 1 (prog)</title>"));
	assert_non_null(strstr(s.text, "decreases not drawn: 30B (30 bytes)"));
	assert_clean_utf8(s.text, s.len);
	svg_free(&s);

	/* The objects metric (V / 10 here): counted, not in bytes. */
	render(&p, MT_ALLOC_OBJECTS, &s);
	assert_info(&s, "a", "15 objects, 88.24% of objects allocated");
	assert_non_null(strstr(s.text, "data-unit=\"objects\""));
	svg_free(&s);
	mt_profile_free(&p);
}

/*
 * A difference: main -> grow +100, main -> shrink -40, main -> same 0.
 * Widths are |change| (main 140), deltas signed (main +60); grow is red,
 * shrink blue, nothing is left out.
 */
static void test_difference(void **state)
{
	struct mt_profile p = { 0 };
	uint32_t main_ = add_frame(&p, "main", 5);
	uint32_t g = add_frame(&p, "grow", 10), sh = add_frame(&p, "shrink", 20);
	uint32_t same = add_frame(&p, "same", 30);
	struct mt_flame_tree t;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	add_sample(&p, 1, FRAMES(g, main_), 100);
	add_sample(&p, 1, FRAMES(sh, main_), -40);
	add_sample(&p, 1, FRAMES(same, main_), 0);
	assert_int_equal(mt_flame_tree_build_diff(&t, &p, MT_INUSE_SPACE), 0);
	assert_int_equal(t.total, 140);
	assert_int_equal(t.left_out, 0);
	assert_int_equal(t.nstacks, 2);
	assert_int_equal(t.nnodes, 4);   /* all, main, grow, shrink */
	assert_int_equal(t.nodes[1].value, 140);
	assert_int_equal(t.nodes[1].delta, 60);
	assert_string_equal(t.names[t.nodes[2].name], "grow");
	assert_int_equal(t.nodes[2].delta, 100);
	assert_int_equal(t.nodes[3].value, 40);
	assert_int_equal(t.nodes[3].delta, -40);
	assert_int_equal(t.nodes[3].x, 100);
	mt_flame_tree_free(&t);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(mt_write_flame_svg_diff(f, &p, MT_INUSE_SPACE, false), 0);
	fclose(f);
	/* The largest change (grow's, main's is 60) is the deepest colour. */
	assert_non_null(strstr(text, "data-d=\"100\"><title>grow\n+100B (+100 bytes) net, of 71.43% of all the change in bytes in use</title>"
			       "<rect x=\"10.00\" y=\"62\" width=\"842.86\" height=\"15\" fill=\"rgb(255,40,40)\""));
	assert_non_null(strstr(text, "data-d=\"-40\"><title>shrink\n-40B (-40 bytes) net"));
	assert_non_null(strstr(text, "fill=\"rgb(151,151,255)\""));
	assert_non_null(strstr(text, ">net +60B: grew +100B, shrank -40B in 2 stacks (red grew"));
	assert_null(strstr(text, "decreases not drawn"));
	assert_null(strstr(text, "<title>same\n"));
	free(text);
	mt_profile_free(&p);
}

/* Whatever a symbol holds comes out as well-formed XML text. */
static void test_escaping(void **state)
{
	struct mt_profile p = { 0 };
	uint32_t main_ = add_frame(&p, "main", 1);
	uint32_t tmpl = add_frame(&p, "std::map<int, std::string>::operator[](int const&)", 2);
	uint32_t quotes = add_frame(&p, "a\"b'c]]>d", 3);
	uint32_t bad = add_frame(&p, "bad\xff\xfe" "name", 4);
	uint32_t overlong = add_frame(&p, "over\xc0\xaflong", 5);
	uint32_t surrogate = add_frame(&p, "sur\xed\xa0\x80rogate", 6);
	uint32_t cut = add_frame(&p, "cut\xe2\x82", 7);
	uint32_t ctrl = add_frame(&p, "ctl\x01\ttab\nline", 8);
	uint32_t utf8 = add_frame(&p, "caf\xc3\xa9::\xf0\x9f\x94\xa5", 9);
	struct svg s = { 0 };
	char *label;

	(void)state;
	add_sample(&p, 1, FRAMES(tmpl, main_), 10000);  /* wide: whole label */
	add_sample(&p, 1, FRAMES(quotes, main_), 100);
	add_sample(&p, 1, FRAMES(bad, main_), 100);
	add_sample(&p, 1, FRAMES(overlong, main_), 100);
	add_sample(&p, 1, FRAMES(surrogate, main_), 100);
	add_sample(&p, 1, FRAMES(cut, main_), 100);
	add_sample(&p, 1, FRAMES(ctrl, main_), 100);
	add_sample(&p, 1, FRAMES(utf8, main_), 100);
	snprintf(p.sum.target, sizeof(p.sum.target), "pid 2 (<&>)");
	render(&p, MT_INUSE_SPACE, &s);

	title_of(&s, "std::map&lt;int, std::string&gt;::operator[](int const&amp;)");
	title_of(&s, "a&quot;b&apos;c]]&gt;d");
	title_of(&s, "bad\xef\xbf\xbd\xef\xbf\xbdname");
	title_of(&s, "over\xef\xbf\xbd\xef\xbf\xbdlong");
	title_of(&s, "sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdrogate");
	title_of(&s, "cut\xef\xbf\xbd\xef\xbf\xbd");
	title_of(&s, "ctl\xef\xbf\xbd tab line");
	title_of(&s, "caf\xc3\xa9::\xf0\x9f\x94\xa5");
	assert_non_null(strstr(s.text, "pid 2 (&lt;&amp;&gt;)"));
	/* The labels too: a wide frame shows its whole name. */
	label = label_of(&s, "std::map&lt;int, std::string&gt;::operator[](int const&amp;)");
	assert_string_equal(label, "std::map&lt;int, std::string&gt;::operator[](int const&amp;)");
	free(label);
	assert_null(strstr(s.text, "<int"));
	/* One CDATA end for the style and one for the script, no other. */
	assert_int_equal(count(s.text, "]]>"), 2);
	assert_clean_utf8(s.text, s.len);
	svg_free(&s);
	mt_profile_free(&p);
}

/*
 * 1180 px for the total: a frame of 1 in 11800 is 0.1 px, drawn; 1 in
 * 11801 is narrower, not drawn, and neither is anything above it; its
 * value stays in its parent's.
 */
static void test_elision(void **state)
{
	struct mt_profile p = { 0 };
	uint32_t main_ = add_frame(&p, "main", 1), big = add_frame(&p, "big", 2);
	uint32_t t1 = add_frame(&p, "tiny1", 3), t2 = add_frame(&p, "tiny2", 4);
	uint32_t t3 = add_frame(&p, "tiny3", 5);
	struct svg s = { 0 };

	(void)state;
	add_sample(&p, 1, FRAMES(big, main_), 11799);
	add_sample(&p, 1, FRAMES(t3, t2, t1, main_), 1);
	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(s.stats.elided, 0);
	assert_int_equal(s.stats.drawn, 6);
	title_of(&s, "tiny3");
	svg_free(&s);

	p.samples[0].v[MT_INUSE_SPACE] = 11800;
	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(s.stats.elided, 3);
	assert_int_equal(s.stats.drawn, 3);   /* all, main, big */
	assert_null(strstr(s.text, "tiny"));
	assert_info(&s, "main", "11.52KiB (11801 bytes), 100.00% of bytes in use");
	assert_non_null(strstr(s.text, "3 narrower than 0.1 px not drawn"));
	/* Three rows drawn: the image is no taller than they need. */
	assert_non_null(strstr(s.text, "height=\"144\""));  /* 62 + 3 x 16 + 34 */
	svg_free(&s);
	mt_profile_free(&p);
}

/* Nothing to draw: still a whole document, saying so. */
static void test_empty(void **state)
{
	struct mt_profile p = { 0 };
	struct svg s = { 0 };
	uint32_t f;

	(void)state;
	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(s.stats.drawn, 0);
	assert_int_equal(s.stats.elided, 0);
	assert_non_null(strstr(s.text, "Nothing to show: no bytes in use in this profile."));
	assert_non_null(strstr(s.text, "data-total=\"0\""));
	assert_int_equal(count(s.text, "<g data-x="), 0);
	assert_non_null(strstr(s.text, "<g id=\"frames\"/>"));
	assert_non_null(strstr(s.text, "</script>\n</svg>\n"));
	assert_clean_utf8(s.text, s.len);
	svg_free(&s);

	/* Samples of 0 and below only: the same. */
	f = add_frame(&p, "freed", 1);
	add_sample(&p, 1, FRAMES(f), 0);
	add_sample(&p, 1, FRAMES(f), -5);
	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(count(s.text, "<g data-x="), 0);
	assert_non_null(strstr(s.text, "Nothing to show"));
	svg_free(&s);
	mt_profile_free(&p);

	assert_int_equal(mt_write_flame_svg(stdout, &p, MT_NVALUES, NULL), -EINVAL);
}

/* Names longer than their frame: cut at a character, "..", or none. */
static void test_labels(void **state)
{
	struct mt_profile p = { 0 };
	char longname[2 * 200 + 1] = "", want[2 * 160 + 16] = "";
	uint32_t wide, narrow, main_ = add_frame(&p, "main", 1);
	struct svg s = { 0 };
	char *label;

	(void)state;
	/* 200 x "é" in 1180 x 100000 / 101715 = 1160.1 px, which hold
	 * floor((1160.1 - 6) / 7.25) = 159 characters: 157, then "..". */
	for (int i = 0; i < 200; i++)
		strcat(longname, "\xc3\xa9");
	wide = add_frame(&p, longname, 2);
	narrow = add_frame(&p, "narrow_function", 3);
	add_sample(&p, 1, FRAMES(wide, main_), 100000);
	/* 19.9 px: floor(13.9 / 7.25) = 1 character: no label (a cut one
	 * shows 3 characters and ".." at least). */
	add_sample(&p, 1, FRAMES(narrow, main_), 1715);
	render(&p, MT_INUSE_SPACE, &s);
	for (int i = 0; i < 157; i++)
		strcat(want, "\xc3\xa9");
	strcat(want, "..");
	label = label_of(&s, longname);
	assert_string_equal(label, want);
	free(label);
	label = label_of(&s, "narrow_function");
	assert_string_equal(label, "");
	free(label);
	svg_free(&s);
	mt_profile_free(&p);

	/* 1 px per 1000: 38 px hold 4 characters, 45 px 5. */
	memset(&p, 0, sizeof(p));
	main_ = add_frame(&p, "main", 1);
	add_sample(&p, 1, FRAMES(add_frame(&p, "ab", 2), main_), 38000);
	add_sample(&p, 1, FRAMES(add_frame(&p, "abcdefghij", 3), main_), 38000);
	add_sample(&p, 1, FRAMES(add_frame(&p, "klmnopqrst", 4), main_), 45000);
	add_sample(&p, 1, FRAMES(add_frame(&p, "rest", 5), main_), 1180000 - 121000);
	render(&p, MT_INUSE_SPACE, &s);
	label = label_of(&s, "ab");
	assert_string_equal(label, "ab");
	free(label);
	label = label_of(&s, "abcdefghij");
	assert_string_equal(label, "");
	free(label);
	label = label_of(&s, "klmnopqrst");
	assert_string_equal(label, "klm..");
	free(label);
	svg_free(&s);
	mt_profile_free(&p);
}

/* Several processes: a "COMM (PID)" frame above each one's stacks. */
static void test_processes(void **state)
{
	struct mt_profile p = { 0 };
	uint32_t f = add_frame(&p, "work", 1);
	struct svg s = { 0 };

	(void)state;
	add_proc(&p, 10, "server");
	add_proc(&p, 11, "worker");
	add_sample(&p, 10, FRAMES(f), 300);
	add_sample(&p, 11, FRAMES(f), 100);
	add_sample(&p, 12, FRAMES(f), 100);   /* a pid without a name */
	render(&p, MT_INUSE_SPACE, &s);
	assert_info(&s, "server (10)", "300B (300 bytes), 60.00% of bytes in use");
	assert_info(&s, "worker (11)", "100B (100 bytes), 20.00% of bytes in use");
	title_of(&s, "? (12)");
	assert_int_equal(count(s.text, "<title>work\n"), 3);
	svg_free(&s);
	mt_profile_free(&p);
}

/* 5000 frames deep: one row each, no recursion. */
static void test_deep(void **state)
{
	enum { DEPTH = 5000 };
	struct mt_profile p = { 0 };
	uint32_t *frames = calloc(DEPTH, sizeof(*frames));
	char name[32], height[64];
	struct svg s = { 0 };

	(void)state;
	assert_non_null(frames);
	for (int i = 0; i < DEPTH; i++) {
		snprintf(name, sizeof(name), "level%d", DEPTH - 1 - i);
		frames[i] = add_frame(&p, name, i);  /* leaf first */
	}
	add_sample(&p, 1, frames, DEPTH, 4096);
	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(s.stats.drawn, DEPTH + 1);
	snprintf(height, sizeof(height), "height=\"%d\"", 62 + (DEPTH + 1) * 16 + 34);
	assert_non_null(strstr(s.text, height));
	/* The leaf on the top row, the root on the bottom one. */
	assert_non_null(strstr(s.text, "<title>level4999\n4.00KiB (4096 bytes), 100.00% of bytes in use</title><rect x=\"10.00\" y=\"62\""));
	assert_non_null(strstr(s.text, "<title>all\n4.00KiB (4096 bytes), 100.00% of bytes in use</title><rect x=\"10.00\" y=\"80062\""));
	free(frames);
	svg_free(&s);
	mt_profile_free(&p);
}

/*
 * 100000 stacks over 30 functions, up to 12 deep (a fixed pseudo-random
 * sequence): the tree's totals add up, siblings tile their parent from
 * its left edge, and every node is drawn or elided.
 */
static void test_many_stacks(void **state)
{
	enum { NSTACKS = 100000, NFUNCS = 30 };
	struct mt_profile p = { 0 };
	uint32_t funcs[NFUNCS], stack[12];
	uint64_t rng = 42, total = 0;
	struct mt_flame_tree t;
	int64_t *kids;
	struct svg s = { 0 };
	char name[32];

	(void)state;
	for (int i = 0; i < NFUNCS; i++) {
		snprintf(name, sizeof(name), "fn_%02d", i);
		funcs[i] = add_frame(&p, name, i);
	}
	for (int i = 0; i < NSTACKS; i++) {
		size_t depth;
		int64_t v;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		depth = 1 + (rng >> 33) % 12;
		v = 1 + (int64_t)((rng >> 17) % 5000);
		for (size_t k = 0; k < depth; k++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			stack[k] = funcs[(rng >> 33) % (k < depth - 1 ? 4 : NFUNCS)];
		}
		add_sample(&p, 1, stack, depth, v);
		total += (uint64_t)v;
	}
	assert_int_equal(mt_flame_tree_build(&t, &p, MT_INUSE_SPACE), 0);
	assert_int_equal(t.total, (int64_t)total);
	assert_int_equal(t.nstacks, NSTACKS);
	kids = calloc(t.nnodes, sizeof(*kids));
	assert_non_null(kids);
	for (size_t i = 1; i < t.nnodes; i++) {
		const struct mt_flame_node *n = &t.nodes[i], *par = &t.nodes[n->parent];

		assert_true(n->parent < i);
		assert_int_equal(n->depth, par->depth + 1);
		assert_true(n->x >= par->x && n->x + n->value <= par->x + par->value);
		kids[n->parent] += n->value;
	}
	for (size_t i = 0; i < t.nnodes; i++)
		assert_true(kids[i] <= t.nodes[i].value);
	/* Depth first: a node's children follow it, each subtree whole, one
	 * after the other from its left edge, by name; no name twice. */
	for (size_t i = 0; i < t.nnodes; i++) {
		int64_t x = t.nodes[i].x;
		const char *prev = NULL;

		for (size_t c = i + 1; c < t.nnodes && t.nodes[c].depth > t.nodes[i].depth; c++) {
			if (t.nodes[c].parent != i)
				continue;
			assert_int_equal(t.nodes[c].x, x);
			x += t.nodes[c].value;
			kids[i] -= t.nodes[c].value;
			if (prev)
				assert_true(strcmp(prev, t.names[t.nodes[c].name]) < 0);
			prev = t.names[t.nodes[c].name];
		}
		assert_true(x <= t.nodes[i].x + t.nodes[i].value);
		assert_int_equal(kids[i], 0);  /* every child was in the range */
	}
	render(&p, MT_INUSE_SPACE, &s);
	assert_int_equal(s.stats.drawn + s.stats.elided, t.nnodes);
	assert_true(s.stats.elided > 0);
	assert_int_equal(count(s.text, "<g data-x="), s.stats.drawn);
	free(kids);
	mt_flame_tree_free(&t);
	svg_free(&s);
	mt_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals_and_merging),
		cmocka_unit_test(test_difference),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_elision),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_many_stacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
