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
 * Resolve return address IP, which lies in module MM of its process (NULL:
 * in none of its files), using DWFL, the session of MM's file
 * (mt_file_dwfl_open, at the file's ELF addresses; may be NULL), and
 * append at least one frame to OUT.  Source information is looked up at
 * IP - 1, the call instruction, less MM's load bias; each frame keeps IP as
 * its addr and MM's path as its module.  A function known by several
 * symbols at its address (glibc's __GI___strdup, __strdup, strdup) is
 * named by its public one, as valgrind and perf name it (sym_index.h).
 * Unresolvable addresses become a frame named "MODULE+0xOFFSET" (OFFSET:
 * the ELF address of IP - 1, on the call) or "[unknown]+0xPC" (PC = IP -
 * 1), marked unresolved.  Returns 0 or -ENOMEM.
 */
int mt_resolve_ip(Dwfl *dwfl, const struct mt_module *mm, uint64_t ip,
		  struct mt_frame_vec *out);

#endif /* MEMTRACE_RESOLVE_H */
