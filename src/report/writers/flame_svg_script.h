/* SPDX-License-Identifier: MIT */
/*
 * flame_svg_script.h: the CSS and JavaScript that flame_svg.c puts inside
 * every flame graph (zoom, search, details line).  The script reads what
 * it needs from the document: the root <svg>'s data-total, data-unit,
 * data-what, data-x0, data-w, data-min and data-charw, and each frame's
 * <g data-x data-v> with its <title> ("NAME\nINFO"), <rect> and <text>.
 * When it has started it adds class "js" to the root (showing the
 * buttons) and sets data-ready="1"; an uncaught error sets data-error.
 * Neither text contains "]]>" (they go into CDATA sections).
 */
#ifndef MEMTRACE_FLAME_SVG_SCRIPT_H
#define MEMTRACE_FLAME_SVG_SCRIPT_H

extern const char mt_flame_svg_style[];
extern const char mt_flame_svg_script[];

#endif
