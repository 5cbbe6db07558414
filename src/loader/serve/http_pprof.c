// SPDX-License-Identifier: MIT
/*
 * http_pprof.c: /debug/pprof/ as Go's net/http/pprof serves it, for the
 * heap: the index, heap (inuse_space shown by default) and allocs
 * (alloc_space), each a gzipped pprof profile with all four sample types;
 * ?seconds=N the alloc values of the next N seconds (in-use values those
 * of their end; the profile's duration the window's), ?debug=1 (or 2)
 * Go's legacy text heap profile (go_text_write.h; with ?seconds refused,
 * as Go does), ?gc=1 accepted and ignored, ?pid= and ?comm= some
 * processes only (a 404 when they match none); and symbol, the symbols
 * of addresses for go tool pprof (http_symbol.c).  memtrace's text report
 * is /report (http_page.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_text_write.h"
#include "http_profile.h"
#include "http_request.h"
#include "pprof_write.h"

static int write_go_text(FILE *out, const void *arg)
{
	return mt_go_text_write(out, arg);
}

static enum MHD_Result send_profile(struct mt_http *h,
				    struct MHD_Connection *c, bool allocs)
{
	struct mt_http_query q;
	struct mt_profile prof;
	char err[160], *data = NULL;
	size_t len = 0;
	int ret;

	if (mt_http_query_parse(c, allocs ? MT_ALLOC_SPACE : MT_INUSE_SPACE,
				&q, err, sizeof(err)))
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST, "%s\n", err);
	if (q.debug && q.seconds) /* Go's words */
		return mt_http_text(c, MHD_HTTP_BAD_REQUEST,
				    "seconds and debug params are incompatible\n");
	ret = mt_http_profile(h, &q, &prof);
	if (ret)
		return mt_http_profile_fail(c, &q, ret);
	if (q.debug) {
		ret = mt_http_memtext(write_go_text, &prof, &data, &len);
	} else {
		struct mt_pprof_write_options o = { .allocs_default = allocs };

		ret = mt_pprof_encode(&prof, &o, (uint8_t **)&data, &len);
	}
	mt_profile_free(&prof);
	if (ret)
		return mt_http_fail(c, ret);
	if (q.debug)
		return mt_http_send(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
				    data, len);
	return mt_http_send_file(c, data, len, allocs ? "allocs" : "heap");
}

static const char index_html[] =
"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
"<title>/debug/pprof/</title></head><body>\n"
"<p>/debug/pprof/: memtrace's profiles of the traced processes</p>\n"
"<table><tr><th>Profile</th><th>What it shows</th></tr>\n"
"<tr><td><a href=\"heap?debug=1\">heap</a></td><td>the heap blocks in use "
"now, by allocating stack (inuse_space by default; alloc_space, "
"alloc_objects and inuse_objects too). ?seconds=N: what was allocated over "
"the next N seconds.</td></tr>\n"
"<tr><td><a href=\"allocs?debug=1\">allocs</a></td><td>the same profile, "
"alloc_space by default: everything allocated since tracing began.</td></tr>\n"
"</table>\n"
"<p>go tool pprof URL/debug/pprof/heap reads them (symbol: their "
"symbols). ?debug=1: Go's text heap profile; ?pid= and ?comm=: some "
"processes only.</p>\n"
"<p><a href=\"/report\">memtrace's report</a> (text), <a href=\"/\">the "
"page</a> (timeline, flame graph, snapshots) and "
"<a href=\"/metrics\">/metrics</a> (Prometheus).</p>\n"
"</body></html>\n";

enum MHD_Result mt_http_pprof(struct mt_http *h, struct MHD_Connection *c,
			      const char *url)
{
	const char *name = url + strlen("/debug/pprof");

	if (!*name || !strcmp(name, "/")) {
		char *page = strdup(index_html);

		if (!page)
			return MHD_NO;
		return mt_http_send(c, MHD_HTTP_OK, "text/html; charset=utf-8",
				    page, strlen(page));
	}
	if (!strcmp(name, "/heap"))
		return send_profile(h, c, false);
	if (!strcmp(name, "/allocs"))
		return send_profile(h, c, true);
	if (!strcmp(name, "/symbol"))
		return mt_http_symbol(h, c, NULL, 0);
	return mt_http_text(c, MHD_HTTP_NOT_FOUND,
			    "unknown profile: memtrace serves heap and allocs\n");
}
