// SPDX-License-Identifier: MIT
/* view.c: pprof's focus, ignore, hide, show, show_from and tag filters. */
#include "view.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

static const char *const option_names[MT_VIEW__COUNT] = {
	[MT_VIEW_FOCUS] = "--focus", [MT_VIEW_IGNORE] = "--ignore",
	[MT_VIEW_HIDE] = "--hide", [MT_VIEW_SHOW] = "--show",
	[MT_VIEW_SHOW_FROM] = "--show-from", [MT_VIEW_TAGFOCUS] = "--tagfocus",
	[MT_VIEW_TAGIGNORE] = "--tagignore",
};

bool mt_view_any(const struct mt_view_spec *s)
{
	for (int k = 0; k < MT_VIEW__COUNT; k++)
		if (s->expr[k])
			return true;
	return false;
}

/* ---- tag filters (pprof's compileTagFilter) ---- */

#define MAX_TAG_RES 16

enum range_kind { RANGE_EQ, RANGE_GE, RANGE_LE, RANGE_BETWEEN };

struct tag_filter {
	char key[64];            /* "" : any tag */
	bool numeric;
	enum range_kind kind;    /* numeric: a range of values */
	int64_t lo, hi;
	regex_t re[MAX_TAG_RES]; /* otherwise: comma-separated expressions */
	size_t nre;
};

/* One "[+-]DIGITS[LETTERS]" at S, as pprof's tagFilterRangeRx. */
static const char *number_at(const char *s, int64_t *v, bool *unit)
{
	const char *p = s;
	char *end;

	if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]))
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno)
		return NULL;
	p = end;
	*unit = isalpha((unsigned char)*p);
	while (isalpha((unsigned char)*p))
		p++;
	return p;
}

/* The first number of S at or after S (pprof finds them anywhere). */
static const char *find_number(const char *s, const char **start)
{
	for (; *s; s++) {
		int64_t v;
		bool u;

		if ((isdigit((unsigned char)*s) ||
		     ((*s == '+' || *s == '-') && isdigit((unsigned char)s[1]))) &&
		    number_at(s, &v, &u)) {
			*start = s;
			return s;
		}
	}
	return NULL;
}

/*
 * pprof's parseTagFilterRange: "N", "N:", ":N", "N:M" (units after the
 * numbers).  Returns false when VALUE is not one of those: it is then a
 * list of regular expressions.
 */
static bool parse_range(const char *value, struct tag_filter *t)
{
	const char *start, *end, *end2;
	bool u1, u2 = false;
	int64_t a, b;

	if (!find_number(value, &start))
		return false;
	end = number_at(start, &a, &u1);
	if (!end)
		return false;
	if (start == value && !*end) {
		t->kind = RANGE_EQ;
	} else if (start == value && strcmp(end, ":") == 0) {
		t->kind = RANGE_GE;
	} else if (start == value + 1 && value[0] == ':' && !*end) {
		t->kind = RANGE_LE;
	} else if (start == value && end[0] == ':' &&
		   (end2 = number_at(end + 1, &b, &u2)) && !*end2) {
		t->kind = RANGE_BETWEEN;
		t->hi = b;
	} else {
		return false;
	}
	t->numeric = true;
	t->lo = a;
	if (t->kind == RANGE_LE)
		t->hi = a;
	(void)u1;
	(void)u2;
	return true;
}

static void tag_free(struct tag_filter *t)
{
	for (size_t i = 0; i < t->nre; i++)
		regfree(&t->re[i]);
	t->nre = 0;
}

static int compile(regex_t *re, const char *expr, const char *opt, char *err,
		   size_t len)
{
	int r = regcomp(re, expr, REG_EXTENDED | REG_NOSUB);

	if (r) {
		char why[160];

		regerror(r, re, why, sizeof(why));
		snprintf(err, len, "invalid regular expression '%s' for %s: %s",
			 expr, opt, why);
		return -1;
	}
	return 0;
}

static int tag_compile(struct tag_filter *t, const char *expr, const char *opt,
		       char *err, size_t len)
{
	const char *eq = strchr(expr, '=');
	const char *value = eq ? eq + 1 : expr;
	char *copy;

	memset(t, 0, sizeof(*t));
	if (eq) {
		if ((size_t)(eq - expr) >= sizeof(t->key)) {
			snprintf(err, len, "tag name too long in '%s' for %s", expr, opt);
			return -1;
		}
		memcpy(t->key, expr, (size_t)(eq - expr));
	}
	if (parse_range(value, t))
		return 0;
	copy = strdup(value);
	if (!copy) {
		snprintf(err, len, "%s", strerror(ENOMEM));
		return -1;
	}
	/* Go's strings.Split: "a,,b" has an empty expression (matching all). */
	for (char *p = copy, *c;; p = c + 1) {
		c = strchr(p, ',');
		if (c)
			*c = '\0';
		if (t->nre == MAX_TAG_RES) {
			snprintf(err, len, "at most %d expressions in '%s' for %s",
				 MAX_TAG_RES, expr, opt);
			break;
		}
		if (compile(&t->re[t->nre], p, opt, err, len))
			break;
		t->nre++;
		if (!c) {
			free(copy);
			return 0;
		}
	}
	free(copy);
	tag_free(t);
	return -1;
}

static bool rx_match(const regex_t *re, const char *s)
{
	return s && regexec(re, s, 0, NULL, 0) == 0;
}

static bool in_range(const struct tag_filter *t, int64_t v)
{
	/* pprof scales both sides to the filter's unit; pid's own unit
	 * ("pid") is none it knows, so its value is compared as it is. */
	switch (t->kind) {
	case RANGE_EQ:
		return v == t->lo;
	case RANGE_GE:
		return v >= t->lo;
	case RANGE_LE:
		return v <= t->hi;
	case RANGE_BETWEEN:
		return v >= t->lo && v <= t->hi;
	}
	return false;
}

/*
 * Does a sample of process PID named COMM match T?  Its tags are those
 * memtrace's pprof profiles carry: pid (numeric, when known) and comm
 * (when known).
 */
static bool tag_match(const struct tag_filter *t, uint32_t pid,
		      const char *comm)
{
	bool has_comm = comm && comm[0];

	if (t->numeric) {
		if (t->key[0] && strcmp(t->key, "pid") != 0)
			return false;
		return pid && in_range(t, pid);
	}
	if (t->key[0]) {
		if (strcmp(t->key, "comm") != 0 || !has_comm)
			return false;
		for (size_t i = 0; i < t->nre; i++)
			if (rx_match(&t->re[i], comm))
				return true;
		return false;
	}
	/* No key: every expression matches some "key:value" string tag. */
	for (size_t i = 0; i < t->nre; i++) {
		char kv[80];

		if (!has_comm)
			return false;
		snprintf(kv, sizeof(kv), "comm:%s", comm);
		if (!rx_match(&t->re[i], kv))
			return false;
	}
	return true;
}

/* ---- frame filters ---- */

struct view {
	const struct mt_view_spec *spec;
	regex_t re[MT_VIEW__COUNT];
	bool have[MT_VIEW__COUNT];
	struct tag_filter tag[2];     /* tagfocus, tagignore */
	bool matched[MT_VIEW__COUNT];
};

static void view_free(struct view *v)
{
	for (int k = 0; k < MT_VIEW__COUNT; k++) {
		if (!v->have[k])
			continue;
		if (k == MT_VIEW_TAGFOCUS || k == MT_VIEW_TAGIGNORE)
			tag_free(&v->tag[k - MT_VIEW_TAGFOCUS]);
		else
			regfree(&v->re[k]);
	}
}

static int view_compile(struct view *v, const struct mt_view_spec *s,
			char *err, size_t len)
{
	memset(v, 0, sizeof(*v));
	v->spec = s;
	for (int k = 0; k < MT_VIEW__COUNT; k++) {
		int r;

		if (!s->expr[k])
			continue;
		if (k == MT_VIEW_TAGFOCUS || k == MT_VIEW_TAGIGNORE)
			r = tag_compile(&v->tag[k - MT_VIEW_TAGFOCUS], s->expr[k],
					option_names[k], err, len);
		else
			r = compile(&v->re[k], s->expr[k], option_names[k], err,
				    len);
		if (r) {
			view_free(v);
			return -1;
		}
		v->have[k] = true;
	}
	return 0;
}

int mt_view_check(enum mt_view_kind kind, const char *expr, char *err,
		  size_t len)
{
	struct mt_view_spec s = { 0 };
	struct view v;

	s.expr[kind] = expr;
	if (view_compile(&v, &s, err, len))
		return -1;
	view_free(&v);
	return 0;
}

/* pprof's Line match: the function's name or its file. */
static bool line_matches(const regex_t *re, const struct mt_frame *f)
{
	return rx_match(re, f->function ? f->function : "??") ||
	       rx_match(re, f->file ? f->file : f->decl_file);
}

/* pprof's Mapping match: the module's path. */
static bool module_matches(const regex_t *re, const struct mt_frame *f)
{
	return rx_match(re, f->module);
}

static bool frame_matches(const regex_t *re, const struct mt_frame *f)
{
	return line_matches(re, f) || module_matches(re, f);
}

/* A frame of a sample and the pprof location it belongs to. */
struct vframe {
	uint32_t frame;
	uint32_t loc;
};

/* focus and ignore, on the sample's frames as they came. */
static bool focused(struct view *v, const struct mt_profile *p,
		    const struct mt_sample *s)
{
	bool any = !v->have[MT_VIEW_FOCUS];

	for (size_t i = 0; i < s->nframes; i++) {
		const struct mt_frame *f = &p->frames[s->frames[i]];

		if (v->have[MT_VIEW_IGNORE] &&
		    frame_matches(&v->re[MT_VIEW_IGNORE], f)) {
			v->matched[MT_VIEW_IGNORE] = true;
			return false;
		}
		if (v->have[MT_VIEW_FOCUS] && !any &&
		    frame_matches(&v->re[MT_VIEW_FOCUS], f))
			any = v->matched[MT_VIEW_FOCUS] = true;
	}
	/* pprof: a sample without a location is neither focused nor kept. */
	return any && (s->nframes || !v->have[MT_VIEW_FOCUS]);
}

/* hide and show: the frames kept, in VF (N of them); returns the count. */
static size_t hide_show(struct view *v, const struct mt_profile *p,
			struct vframe *vf, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		const struct mt_frame *f = &p->frames[vf[i].frame];

		if (v->have[MT_VIEW_HIDE] &&
		    frame_matches(&v->re[MT_VIEW_HIDE], f)) {
			v->matched[MT_VIEW_HIDE] = true;
			continue;
		}
		if (v->have[MT_VIEW_SHOW]) {
			if (!frame_matches(&v->re[MT_VIEW_SHOW], f))
				continue;
			v->matched[MT_VIEW_SHOW] = true;
		}
		vf[m++] = vf[i];
	}
	return m;
}

/*
 * show_from: pprof keeps, of each location that matches, its lines up to
 * the last (outermost) that matches (all of them when its module does),
 * and of each stack the locations up to the outermost that matches.
 * Returns the frames kept (0: the sample is dropped).
 */
static size_t show_from(struct view *v, const struct mt_profile *p,
			struct vframe *vf, size_t n)
{
	const regex_t *re = &v->re[MT_VIEW_SHOW_FROM];
	size_t m = 0, keep = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i, last = SIZE_MAX;
		bool mod = false;

		while (j < n && vf[j].loc == vf[i].loc)
			j++;
		for (size_t k = i; k < j; k++) {
			mod |= module_matches(re, &p->frames[vf[k].frame]);
			if (line_matches(re, &p->frames[vf[k].frame]))
				last = k;
		}
		if (mod)
			last = j - 1;
		if (last == SIZE_MAX) {
			for (size_t k = i; k < j; k++)
				vf[m++] = vf[k];
		} else {
			for (size_t k = i; k <= last; k++)
				vf[m++] = vf[k];
			keep = m;
		}
		i = j;
	}
	if (keep)
		v->matched[MT_VIEW_SHOW_FROM] = true;
	return keep;
}

static bool tags_kept(struct view *v, const struct mt_profile *p,
		      uint32_t pid)
{
	const char *comm = mt_procs_comm(p->procs, p->nprocs, pid);
	bool f = true, ig = false;

	if (v->have[MT_VIEW_TAGFOCUS]) {
		f = tag_match(&v->tag[0], pid, comm);
		v->matched[MT_VIEW_TAGFOCUS] |= f;
	}
	if (v->have[MT_VIEW_TAGIGNORE]) {
		ig = tag_match(&v->tag[1], pid, comm);
		v->matched[MT_VIEW_TAGIGNORE] |= ig;
	}
	return f && !ig;
}

/* Apply the view to sample S (frames in VF, room for its frames). */
static bool view_sample(struct view *v, const struct mt_profile *p,
			struct mt_sample *s, struct vframe *vf)
{
	size_t n = s->nframes;
	uint32_t loc = 0;

	if (!focused(v, p, s) || !tags_kept(v, p, s->pid))
		return false;
	/* Locations: inlined frames and the caller they are inlined into. */
	for (size_t i = 0; i < n; i++) {
		vf[i] = (struct vframe){ s->frames[i], loc };
		if (!p->frames[s->frames[i]].inlined)
			loc++;
	}
	if (v->have[MT_VIEW_HIDE] || v->have[MT_VIEW_SHOW]) {
		n = hide_show(v, p, vf, n);
		if (!n)
			return false;
	}
	if (v->have[MT_VIEW_SHOW_FROM]) {
		n = show_from(v, p, vf, n);
		if (!n)
			return false;
	}
	for (size_t i = 0; i < n; i++)
		s->frames[i] = vf[i].frame;
	s->nframes = n;
	return true;
}

static void warn_unmatched(const struct view *v)
{
	if (v->spec->quiet)
		return;
	for (int k = 0; k < MT_VIEW__COUNT; k++)
		if (v->have[k] && !v->matched[k])
			fprintf(stderr, "memtrace: %s '%s' matched no samples\n",
				option_names[k], v->spec->expr[k]);
}

int mt_profile_view(struct mt_profile *p, const struct mt_view_spec *s)
{
	size_t maxf = 1, n = 0;
	struct vframe *vf;
	size_t *moved;
	struct view v;
	char err[256];

	if (!mt_view_any(s))
		return 0;
	if (view_compile(&v, s, err, sizeof(err))) {
		fprintf(stderr, "memtrace: %s\n", err);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].nframes > maxf)
			maxf = p->samples[i].nframes;
	vf = malloc(maxf * sizeof(*vf));
	moved = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*moved));
	if (!vf || !moved) {
		free(vf);
		free(moved);
		view_free(&v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		struct mt_sample smp = p->samples[i];

		if (view_sample(&v, p, &smp, vf)) {
			moved[i] = n;
			p->samples[n++] = smp;
		} else {
			moved[i] = SIZE_MAX;
			free(smp.frames);
		}
	}
	p->nsamples = n;
	n = 0;
	for (size_t i = 0; i < p->nblocks; i++) {
		struct mt_block b = p->blocks[i];

		if (b.sample < SIZE_MAX) {
			if (moved[b.sample] == SIZE_MAX)
				continue;
			b.sample = moved[b.sample];
		}
		p->blocks[n++] = b;
	}
	p->nblocks = n;
	free(moved);
	free(vf);
	warn_unmatched(&v);
	view_free(&v);
	mt_profile_recount(p);
	mt_view_describe(s, p->sum.view, sizeof(p->sum.view));
	return 0;
}

void mt_view_describe(const struct mt_view_spec *s, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (int k = 0; k < MT_VIEW__COUNT && off < len; k++) {
		int r;

		if (!s->expr[k])
			continue;
		r = snprintf(buf + off, len - off, "%s%s=%s", off ? " " : "",
			     option_names[k] + 2, s->expr[k]);
		if (r < 0)
			break;
		off += (size_t)r;
	}
}
