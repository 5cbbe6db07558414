/* SPDX-License-Identifier: MIT */
/*
 * capstone_lazy.h: libcapstone, opened the first time a file needs
 * disassembling (one defining operator new or delete).  Linked in, its
 * 77,000 relocations cost every start of memtrace some 375 page faults
 * and 7 ms of CPU before main(), also for C programs, which never need it.
 */
#ifndef MEMTRACE_CAPSTONE_LAZY_H
#define MEMTRACE_CAPSTONE_LAZY_H

#include <capstone/capstone.h>

/* The functions used, with capstone's own prototypes. */
struct mt_capstone {
	__typeof__(cs_open) *open;
	__typeof__(cs_option) *option;
	__typeof__(cs_disasm) *disasm;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
	__typeof__(cs_insn_group) *insn_group;
};

/* libcapstone's functions (opened once, thread-safe), or NULL if the
 * library cannot be opened. */
const struct mt_capstone *mt_capstone_get(void);

#endif
