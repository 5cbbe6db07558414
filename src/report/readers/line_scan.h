/* SPDX-License-Identifier: MIT */
/*
 * line_scan.h: the text heap profiles (tcmalloc's, jemalloc's, Go's
 * debug=1), line by line: each line is read where it lies, in time
 * proportional to its length (sscanf on the whole text would measure the
 * rest of it on every call), and every number is checked: digits only, no
 * sign where none belongs, no value beyond the type.
 */
#ifndef MEMTRACE_LINE_SCAN_H
#define MEMTRACE_LINE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What is left of one line: [p, end), without its '\n'. */
struct mt_line {
	const char *p, *end;
};

/*
 * The line of TEXT[0..LEN) at *POS into *L, and *POS past its '\n'.
 * False at the end of the text.  A final '\r' is left out.
 */
bool mt_line_next(const char *text, size_t len, size_t *pos, struct mt_line *l);

/* Skip spaces and tabs. */
void mt_line_skip_blanks(struct mt_line *l);

/* True when only spaces and tabs are left. */
bool mt_line_blank(const struct mt_line *l);

/* True (and consumed) when L starts with LIT. */
bool mt_line_starts(struct mt_line *l, const char *lit);

/* After spaces and tabs, LIT: true (and consumed) or false. */
bool mt_line_lit(struct mt_line *l, const char *lit);

/*
 * After spaces and tabs, a decimal number of at most MAX, no sign: true
 * (and consumed) or false (no digit, or larger than MAX).
 */
bool mt_line_u64(struct mt_line *l, uint64_t max, uint64_t *v);

/* The same, with an optional '-': any int64_t. */
bool mt_line_i64(struct mt_line *l, int64_t *v);

/*
 * After spaces and tabs, "0x" and 1 to 16 hex digits (leading zeros
 * aside, a uint64_t): true (and consumed) or false.  With 0x optional
 * when BARE.
 */
bool mt_line_hex(struct mt_line *l, bool bare, uint64_t *v);

#endif
