/* SPDX-License-Identifier: MIT */
/*
 * go_exe.h: is an executable a Go program?  Go allocates its heap itself
 * (not with malloc), so a trace of one sees only its C allocations (cgo):
 * memtrace says so rather than report 0 bytes without a word.
 */
#ifndef MEMTRACE_GO_EXE_H
#define MEMTRACE_GO_EXE_H

#include <stdbool.h>

/*
 * True when the ELF file PATH was built by Go: it has a .go.buildinfo
 * section (Go 1.13 and later) or a runtime.main symbol.  False when it
 * cannot be read.
 */
bool mt_go_exe(const char *path);

/* The one-line note (no "memtrace: " prefix, no newline) about NAME. */
#define MT_GO_NOTE \
	"%s is a Go program: Go allocates its heap itself, not with malloc, " \
	"so memtrace sees only its C allocations (cgo); for Go's heap, " \
	"`memtrace report` reads its /debug/pprof/heap profile"

#endif
