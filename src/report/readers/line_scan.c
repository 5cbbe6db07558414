/* SPDX-License-Identifier: MIT */
/* line_scan.c: text profiles line by line, numbers checked (line_scan.h). */
#include "line_scan.h"

#include <string.h>

bool mt_line_next(const char *text, size_t len, size_t *pos, struct mt_line *l)
{
	const char *s, *nl;

	if (*pos >= len)
		return false;
	s = text + *pos;
	nl = memchr(s, '\n', len - *pos);
	l->p = s;
	l->end = nl ? nl : text + len;
	*pos = nl ? (size_t)(nl - text) + 1 : len;
	if (l->end > l->p && l->end[-1] == '\r')
		l->end--;
	return true;
}

void mt_line_skip_blanks(struct mt_line *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
		l->p++;
}

bool mt_line_blank(const struct mt_line *l)
{
	struct mt_line c = *l;

	mt_line_skip_blanks(&c);
	return c.p == c.end;
}

bool mt_line_starts(struct mt_line *l, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(l->end - l->p) < n || memcmp(l->p, lit, n) != 0)
		return false;
	l->p += n;
	return true;
}

bool mt_line_lit(struct mt_line *l, const char *lit)
{
	struct mt_line c = *l;

	mt_line_skip_blanks(&c);
	if (!mt_line_starts(&c, lit))
		return false;
	*l = c;
	return true;
}

bool mt_line_u64(struct mt_line *l, uint64_t max, uint64_t *v)
{
	struct mt_line c = *l;
	uint64_t n = 0;

	mt_line_skip_blanks(&c);
	if (c.p == c.end || *c.p < '0' || *c.p > '9')
		return false;
	for (; c.p < c.end && *c.p >= '0' && *c.p <= '9'; c.p++) {
		if (__builtin_mul_overflow(n, 10, &n) ||
		    __builtin_add_overflow(n, (uint64_t)(*c.p - '0'), &n) || n > max)
			return false;
	}
	*v = n;
	*l = c;
	return true;
}

bool mt_line_i64(struct mt_line *l, int64_t *v)
{
	struct mt_line c = *l;
	bool neg;
	uint64_t n;

	mt_line_skip_blanks(&c);
	neg = c.p < c.end && *c.p == '-';
	if (neg)
		c.p++;
	if (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
		return false;  /* "- 1" */
	if (!mt_line_u64(&c, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &n))
		return false;
	*v = neg ? (int64_t)(0 - n) : (int64_t)n;
	*l = c;
	return true;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

bool mt_line_hex(struct mt_line *l, bool bare, uint64_t *v)
{
	struct mt_line c = *l;
	uint64_t n = 0;
	int d;

	mt_line_skip_blanks(&c);
	if (!mt_line_starts(&c, "0x") && !mt_line_starts(&c, "0X") && !bare)
		return false;
	if (c.p == c.end || hexval(*c.p) < 0)
		return false;
	for (; c.p < c.end && (d = hexval(*c.p)) >= 0; c.p++) {
		if (n >> 60)
			return false;  /* a 17th significant digit */
		n = n << 4 | (uint64_t)d;
	}
	*v = n;
	*l = c;
	return true;
}
