/* SPDX-License-Identifier: MIT */
/* http_diff.h: /diff, /diff.svg, /diff.txt of --http (http_diff.c). */
#ifndef MEMTRACE_HTTP_DIFF_H
#define MEMTRACE_HTTP_DIFF_H

#include "http_request.h"

enum mt_http_diff_kind {
	MT_HTTP_DIFF_PAGE,   /* /diff: a table and the flame graph (HTML) */
	MT_HTTP_DIFF_SVG,    /* /diff.svg: the differential flame graph */
	MT_HTTP_DIFF_TEXT,   /* /diff.txt: memtrace report B --base A */
};

/* Answer C's /diff?a=N&b=M (and ?metric=, the views) as KIND. */
enum MHD_Result mt_http_diff(struct mt_http *h, struct MHD_Connection *c,
			     enum mt_http_diff_kind kind);

#endif
