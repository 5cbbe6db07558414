/* SPDX-License-Identifier: MIT */
/*
 * http_page_script.h: the page's own script (http_page.c), inline with the
 * response's CSP nonce: it refreshes the page's parts in place every
 * #refresh[data-every] seconds, with a pause button and a choice of
 * interval, keeping the scroll position and the diff form's choices.  The
 * page is whole without it (its <noscript> refresh reloads it all).
 */
#ifndef MEMTRACE_HTTP_PAGE_SCRIPT_H
#define MEMTRACE_HTTP_PAGE_SCRIPT_H

extern const char mt_http_page_script[];

#endif
