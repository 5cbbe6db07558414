/* SPDX-License-Identifier: MIT */
/*
 * forwarders.h: which C++ operator new and delete functions of an ELF file
 * only pass the call on to the allocator's malloc (aligned_alloc, ...) or
 * free, as libstdc++'s do over glibc.  Those need no probe of their own:
 * the allocator's probe sees the call, and the unwinder leaves their frame
 * out (an allocation's first frame stays the caller of new).  Found by
 * disassembling them (capstone) and naming what they call, directly or
 * through the PLT.
 */
#ifndef MEMTRACE_FORWARDERS_H
#define MEMTRACE_FORWARDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_cxx_func {
	const char *name;   /* mangled, e.g. _Znwm (owned) */
	uint64_t offset;    /* file offsets of its code: [offset, end) */
	uint64_t end;
	bool forwards;      /* only passes the call on to a probed function */
};

struct mt_cxx_funcs {
	struct mt_cxx_func *v;
	size_t n;
};

/*
 * The operator new/delete functions the ELF file open on FD defines, and
 * which of them forward.  PROBED(name, via_plt, ctx) says whether a
 * function of that name (malloc, free, aligned_alloc, ...) is probed where
 * this file's calls to it lead: through the PLT (VIA_PLT: wherever the
 * dynamic linker binds the name) or to its own definition.  Returns 0 (a
 * file without them gives none) or -errno.
 */
int mt_cxx_funcs_read(int fd,
		      bool (*probed)(const char *name, bool via_plt, void *ctx),
		      void *ctx, struct mt_cxx_funcs *out);

/* The function of FUNCS named NAME, or NULL. */
const struct mt_cxx_func *mt_cxx_funcs_find(const struct mt_cxx_funcs *funcs,
					    const char *name);

void mt_cxx_funcs_free(struct mt_cxx_funcs *funcs);

/* Whether NAME is one of the C++ allocation functions (new or delete). */
bool mt_is_cxx_alloc_name(const char *name);

#endif
