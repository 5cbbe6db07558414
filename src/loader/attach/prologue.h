/* SPDX-License-Identifier: MIT */
/*
 * prologue.h: where in an allocator function to put its entry uprobe so
 * that the kernel emulates the probed instruction instead of
 * single-stepping it out of line (x86-64 only).
 *
 * On x86 the kernel emulates a probed `push %reg` (50-57, 41 50-57), a NOP
 * (90, 0f 1f /0 and the other forms insn_is_nop() knows) and a relative
 * jmp, jcc or call (without 66 prefix); any other instruction is copied out
 * of line and single-stepped: a second trap, about 4 times the cost of a
 * hit on this machine.  glibc's free() begins with `test %rdi,%rdi; je`,
 * then `push %rbp`: probing the push is cheap, probing free's first byte
 * is not.
 *
 * jemalloc's malloc starts `cmp $0x1000,%rdi; ja`, its free with nine
 * loads and register operations before a `jne`: the probe goes on the
 * branch.  The place returned is reached, on every path that can allocate
 * or free, exactly once per call and with the function's argument
 * registers (of rdi, rsi, rdx, rcx, r8, r9), rsp, rbp and the return
 * address at [rsp] as they were at the function's first byte (see
 * prologue.c for the argument).
 */
#ifndef MEMTRACE_PROLOGUE_H
#define MEMTRACE_PROLOGUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Where to put the entry uprobe of the function at file offset FUNC_OFF of
 * the ELF file at PATH; KIND is its enum mt_call_kind (bpf/memleak.h),
 * NARGS how many integer arguments it takes (mt_prologue_nargs(); out of
 * 0..6: unknown, all six argument registers are kept).  *PROBE_OFF is
 * FUNC_OFF itself when nothing better is proven, else a later offset
 * within the function's first instructions (up to its first branch).
 * Returns 0, or -errno when the file cannot be opened or read
 * (*PROBE_OFF = FUNC_OFF).
 *
 * The instructions skipped write neither memory nor rsp, rbp or the
 * function's argument registers; the others (rax, r10, ..., and
 * callee-saved ones like rbx or r12) may change: nothing the entry program
 * reads.  Only for FREE and DELETE kinds may the result skip a branch: the
 * `test %rdi,%rdi; je` NULL check, when its target returns at once; so a
 * free(NULL) no longer reaches the probe.  A kind with a return probe keeps
 * that probe's breakpoint at FUNC_OFF unless the caller moves it too (it
 * may: [rsp] is still the return address at *PROBE_OFF); a separate entry
 * breakpoint there would add a trap, not save one.
 */
int mt_prologue_entry_offset(const char *path, uint64_t func_off, int kind,
			     int nargs, uint64_t *probe_off);

/*
 * The same for the N functions at FUNC_OFFS[i] (kinds KINDS[i], NARGS[i]
 * arguments; NARGS NULL: unknown) of one file, reading it once:
 * PROBE_OFFS[i] for each.  Where a probe moves, the whole executable part
 * of the file is searched for branches into the skipped bytes, so asking
 * for all of a file's functions at once is cheaper (libc: about 2 ms per
 * file instead of per function).
 */
int mt_prologue_entry_offsets(const char *path, size_t n,
			      const uint64_t *func_offs, const int *kinds,
			      const int *nargs, uint64_t *probe_offs);

/* True when the kernel emulates the instruction at file offset OFF of PATH. */
bool mt_prologue_emulated(const char *path, uint64_t off);

/*
 * How many integer arguments (rdi, rsi, rdx, rcx, r8, r9 in turn) the
 * probed function NAME takes: the malloc family's, jemalloc's and
 * tcmalloc's by a table, C++ operator new and delete by their mangled
 * parameter types (_ZdlPvm: 2).  -1 for a name not known.
 */
int mt_prologue_nargs(const char *name);

/*
 * The decoding behind both, on CODE[0..LEN) holding a function's first
 * bytes (exposed for tests).  mt_prologue_scan() stores in *ADVANCE how
 * far into CODE the entry probe can go and returns true when an emulated
 * instruction is there; false (and *ADVANCE = 0) when none was found.  It
 * does not look at the rest of the file: mt_prologue_entry_offset() also
 * checks that no branch or symbol leads into the skipped bytes.
 */
bool mt_prologue_scan(const uint8_t *code, size_t len, int kind, int nargs,
		      size_t *advance);

/* Length of the instruction at CODE when the kernel emulates it, else 0. */
size_t mt_prologue_emulated_len(const uint8_t *code, size_t len);

#endif
