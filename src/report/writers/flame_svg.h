/* SPDX-License-Identifier: MIT */
/*
 * flame_svg.h: an interactive flame graph as one self-contained SVG file
 * (inline CSS and JavaScript, nothing loaded from elsewhere), the tree of
 * flame_tree.h drawn root at the bottom, children by name.
 *
 * Every frame is a <g> holding a <title> (its name, then its value in
 * human units and exactly, and its share of the total), a <rect> and a
 * <text> label; the static image is whole without JavaScript.  With it:
 * click a frame to zoom, "Reset zoom", "Search" (a regular expression:
 * matching frames highlighted, their share of the total shown).  The
 * document's query string does the same on load: ?s=REGEX searches,
 * ?zoom=NAME zooms on the widest frame named NAME.
 *
 * Frames narrower than MT_FLAME_MIN_WIDTH pixels are not drawn; their
 * value is in their parent's width and title.
 */
#ifndef MEMTRACE_FLAME_SVG_H
#define MEMTRACE_FLAME_SVG_H

#include <stdio.h>
#include "flame_tree.h"
#include "profile.h"

#define MT_FLAME_WIDTH 1200       /* the image's width in pixels */
#define MT_FLAME_MIN_WIDTH 0.1    /* narrower frames are not drawn */

/* What the writer did, for callers that say it (and for tests). */
struct mt_flame_svg_stats {
	size_t drawn;      /* frames drawn, the root included */
	size_t elided;     /* frames narrower than MT_FLAME_MIN_WIDTH */
};

/*
 * Write P's flame graph of METRIC to OUT (a file, or a buffer through
 * open_memstream).  A profile without a positive value gives a valid SVG
 * that says there is nothing to show.  STATS may be NULL.  Returns 0,
 * -EINVAL for a bad metric, -ENOMEM, -EOVERFLOW or -EIO (OUT's error).
 */
int mt_write_flame_svg(FILE *out, const struct mt_profile *p,
		       enum mt_value metric, struct mt_flame_svg_stats *stats);

/*
 * The same image for an HTML page (an <svg> element of the document): no
 * XML declaration, no script (the titles still show each frame's value).
 */
int mt_write_flame_svg_embedded(FILE *out, const struct mt_profile *p,
				enum mt_value metric);

/*
 * The differential flame graph of P, a profile less a base (diff.h), as
 * flamegraph.pl's difffolded draws one: a frame's width is how much
 * changed under it (the sum of |METRIC|: what shrank is drawn too), its
 * colour red when that grew, blue when it shrank, deeper the more (its
 * <g> has data-d, the signed change).  EMBEDDED: for an HTML page, as
 * mt_write_flame_svg_embedded.
 */
int mt_write_flame_svg_diff(FILE *out, const struct mt_profile *p,
			    enum mt_value metric, bool embedded);

#endif
