/* SPDX-License-Identifier: MIT */
/*
 * go_text_read.h: Go's text heap profile, as
 * pprof.Lookup("heap").WriteTo(w, 1) (or /debug/pprof/heap?debug=1)
 * writes it:
 *
 *   heap profile: 108: 1059456 [158: 1065856] @ heap/1048576
 *   1: 1048576 [1: 1048576] @ 0x4b420c 0x4b4494 0x437452 0x461181
 *   #	0x4b420b	main.allocLarge+0x2b	./main.go:47
 *   #	0x4b4493	main.main+0xd3		./main.go:66
 *   ...
 *   # runtime.MemStats
 *
 * Each record: objects and bytes in use [allocated] @ return addresses;
 * the "#" lines after it are its frames, leaf first, symbolised by the Go
 * runtime (inlined functions are frames of their own, not marked as
 * inlined).  "heap/N" means one sample per N/2 bytes on average (Go writes
 * twice MemProfileRate); records are unbiased with pprof's rule
 * (heap_text.h), none when N/2 is 1.
 */
#ifndef MEMTRACE_GO_TEXT_READ_H
#define MEMTRACE_GO_TEXT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

bool mt_go_text_is(const char *text, size_t len);

/*
 * Parse TEXT (LEN bytes) into P (one process, pid 0; sum.sample_bytes
 * and the alloc/free counters set, nothing else of sum).  Returns 0, or
 * -EINVAL/-ENOMEM with a one-line reason in ERR.
 */
int mt_go_text_parse(const char *text, size_t len, struct mt_profile *p,
		     char *err, size_t errlen);

#endif
