/* SPDX-License-Identifier: MIT */
/*
 * go_text_write.h: a profile as Go's legacy text heap profile, what Go's
 * /debug/pprof/heap?debug=1 serves and go_text_read.h reads:
 *
 *   heap profile: 13: 22288 [25: 23488] @ heap/2
 *   10: 10000 [10: 10000] @ 0x55d0c1a2b3c4 0x55d0c1a2b5e6
 *   #	0x55d0c1a2b3c3	keep_small	/src/served.c:31
 *   #	0x55d0c1a2b5e5	main	/src/served.c:70
 *
 * The header's totals are those of the records; each record is in-use
 * objects and bytes [allocated objects and bytes] @ the return addresses
 * of its stack, leaf first, and a "#" line per frame (an inlined function
 * a line of its own, at its caller's address): the call's address (the
 * return address less 1), the function and file:line when known.  A
 * frame with no symbol is "#\t0xADDR" alone, as Go writes it.  Go writes
 * "name+0xOFFSET" from the function's entry, which memtrace does not
 * keep: the name is written alone.  "heap/2" (Go's MemProfileRate 1):
 * the values are not to be scaled (with -s they are estimates already).
 * Several processes' records share the one list (the format has no
 * processes).
 */
#ifndef MEMTRACE_GO_TEXT_WRITE_H
#define MEMTRACE_GO_TEXT_WRITE_H

#include <stdio.h>
#include "profile.h"

/* Write P to OUT.  0 or -EIO. */
int mt_go_text_write(FILE *out, const struct mt_profile *p);

#endif
