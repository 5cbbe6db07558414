/* SPDX-License-Identifier: MIT */
/*
 * growth_series.h: `memtrace report FILE... --growth`: the stacks whose value
 * grew from the first of several profiles (interval profiles, in the order
 * given) to the last, and each one's value in every profile.
 *
 * The profile made is the last less the first (as --base: go tool pprof's
 * -base), keeping only the stacks (samples grouped by frames, whatever
 * their process) whose value of the chosen metric went up: every output
 * format renders it.  For its top stacks, the value in each profile (the
 * series the text report shows) is read from the profiles one at a time,
 * so that only the first and the last are held at once.
 */
#ifndef MEMTRACE_GROWTH_SERIES_H
#define MEMTRACE_GROWTH_SERIES_H

#include <stddef.h>
#include <stdint.h>
#include "itab.h"
#include "pprof_read.h"
#include "profile.h"
#include "view.h"

struct mt_growth_opts {
	enum mt_value metric;   /* what must have grown; the series' values */
	int top_n;              /* stacks with a series; <= 0: all that grew */
	uint32_t only_pid;      /* report -p: that process only (0: all) */
	const char *comm;       /* --comm: processes of that name (NULL: all) */
	const struct mt_pprof_limits *lim;  /* for each file (NULL: defaults) */
	const struct mt_view_spec *view;    /* --focus, ... (NULL: none) */
};

/* One of the top stacks: its frames (canonical, see below), its values. */
struct mt_growth_stack {
	uint32_t *frames;
	size_t nframes;
	int64_t *v;             /* one per profile, first to last */
};

struct mt_growth {
	struct mt_profile prof;     /* the last less the first, what grew */
	size_t npoints;             /* profiles read */
	enum mt_value metric;
	/* prof's frames by value: canon[i] is the first frame equal to
	 * frame i, the one stacks are matched by. */
	uint32_t *canon;
	struct mt_itab frame_index;
	struct mt_growth_stack *stacks;
	size_t nstacks;
	struct mt_itab stack_index;
};

/*
 * Read the N (>= 2) profiles PATHS (any format mt_profile_read reads) into
 * G: G->prof is what grew, G->stacks the series of its top stacks.
 * Returns 0, or a negative errno with a one-line reason in ERR that names
 * the file; G is then empty.  Release G with mt_growth_free.
 */
int mt_growth_read(const char *const *paths, size_t n,
		   const struct mt_growth_opts *o, struct mt_growth *g,
		   char *err, size_t errlen);

/*
 * The series of G's stack with the frames of S (a sample of G->prof):
 * G->npoints values, or NULL when it is not one of the top stacks.  CTX
 * is G (the signature of struct mt_text_series).
 */
const int64_t *mt_growth_series(const void *ctx, const struct mt_sample *s);

void mt_growth_free(struct mt_growth *g);

#endif
