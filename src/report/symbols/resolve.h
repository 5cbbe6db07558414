/* SPDX-License-Identifier: MIT */
/*
 * resolve.h: turning one return address into source-level frames with
 * libdw, one frame per inlined function, innermost first.
 */
#ifndef MEMTRACE_RESOLVE_H
#define MEMTRACE_RESOLVE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>
#include "frame.h"
#include "profile.h"

/*
 * Resolve return address IP of process PROC (may be NULL) using DWFL (from
 * mt_proc_dwfl_open, may be NULL) and append at least one frame to OUT.
 * Source information is looked up at IP - 1, the call instruction; each
 * frame keeps IP as its addr.  A function known by several symbols at its
 * address (glibc's __GI___strdup, __strdup, strdup) is named by its public
 * one, as valgrind and perf name it (sym_index.h).  Unresolvable addresses
 * become a frame named "MODULE+0xOFFSET" (OFFSET: the ELF address of IP - 1,
 * on the call) or "[unknown]+0xPC" (PC = IP - 1), marked unresolved.
 * Returns 0 or -ENOMEM.
 */
int mt_resolve_ip(Dwfl *dwfl, const struct mt_process *proc, uint64_t ip,
		  struct mt_frame_vec *out);

#endif /* MEMTRACE_RESOLVE_H */
