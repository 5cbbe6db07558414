/* SPDX-License-Identifier: MIT */
/*
 * private_text.h: memtrace's own copy of the code of its allocator.
 *
 * System-wide, memtrace probes every process's libc (and libstdc++), its
 * own included: each of its own malloc and free then traps into the
 * kernel, to be ignored there (the BPF program skips memtrace's pid).
 * Building an unwind table calls malloc for each row: libsqlite3's took
 * 374 ms system-wide against 14 ms under -- CMD.  Uprobes live in a
 * file's mappings, so memtrace runs that code from an anonymous copy
 * instead, read from the file (pristine, whatever breakpoints another
 * tracer has placed in memory), at the same address: no probe can reach
 * it.
 */
#ifndef MEMTRACE_PRIVATE_TEXT_H
#define MEMTRACE_PRIVATE_TEXT_H

/*
 * Replace the executable file mapping of this process that holds ADDR by
 * an anonymous copy of the same bytes at the same address.  Returns 1
 * when replaced, 0 when ADDR is not in an executable file mapping (or is
 * already in a copy), -errno on failure (nothing changed).
 */
int mt_private_text(const void *addr);

#endif
