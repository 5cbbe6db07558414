/* SPDX-License-Identifier: MIT */
/*
 * view.h: pprof's views of a profile (--focus, --ignore, --hide, --show,
 * --show-from, --tagfocus, --tagignore), with pprof's semantics
 * (github.com/google/pprof, profile/filter.go, driver_focus.go):
 *
 *   focus      keep the samples with a frame that matches
 *   ignore     drop the samples with a frame that matches
 *   hide       remove the frames that match from every stack
 *   show       keep only the frames that match
 *   show_from  drop the frames above (callers of) the matching frame
 *              nearest the root; samples with none are dropped
 *   tagfocus   keep the samples whose tags match: "[KEY=]VALUE", VALUE a
 *              comma-separated list of regular expressions or a numeric
 *              range (N, N:, :N, N:M); the tags are pid (a number) and
 *              comm (a string), those of memtrace's pprof profiles
 *   tagignore  drop the samples whose tags match (the same forms)
 *
 * A frame matches when the expression matches its function name, its
 * source file, or the path of its module (as pprof's Function.Name,
 * Function.Filename, Mapping.File).  Expressions are POSIX extended
 * regular expressions, unanchored (as Go's MatchString).  A stack's
 * inlined frames and their caller make one pprof location; show_from
 * trims a matching location's callers inside it too, as pprof does.
 */
#ifndef MEMTRACE_VIEW_H
#define MEMTRACE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

enum mt_view_kind {
	MT_VIEW_FOCUS, MT_VIEW_IGNORE, MT_VIEW_HIDE, MT_VIEW_SHOW,
	MT_VIEW_SHOW_FROM, MT_VIEW_TAGFOCUS, MT_VIEW_TAGIGNORE,
	MT_VIEW__COUNT
};

/* The expressions given, by kind (NULL: not given). */
struct mt_view_spec {
	const char *expr[MT_VIEW__COUNT];
	bool quiet;   /* say nothing on standard error (--http's requests) */
};

/* Is any view asked for? */
bool mt_view_any(const struct mt_view_spec *s);

/*
 * Check EXPR for KIND (it compiles); on error write a one-line reason to
 * ERR and return -1.
 */
int mt_view_check(enum mt_view_kind kind, const char *expr, char *err,
		  size_t len);

/*
 * Apply S to P: samples dropped, frames removed, the blocks of dropped
 * samples dropped, the header's totals summed again from what is left.
 * An expression that matched nothing is said on standard error, as pprof
 * does (unless S->quiet).  Returns 0, -ENOMEM, or -EINVAL (an expression does not compile:
 * checked by mt_view_check first).
 */
int mt_profile_view(struct mt_profile *p, const struct mt_view_spec *s);

/* "focus=X ignore=Y": the views of S for a header ("" when none). */
void mt_view_describe(const struct mt_view_spec *s, char *buf, size_t len);

#endif
