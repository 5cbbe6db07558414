/* SPDX-License-Identifier: MIT */
/* profile_input.c: a profile file's bytes within the budget (profile_input.h). */
#include "profile_input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZLIB_CONST
#include <zlib.h>

#define HEAD ((size_t)4096)        /* read by mt_input_open */
#define CHUNK ((size_t)64 << 10)   /* compressed bytes read at a time */

static const struct mt_pprof_limits defaults = {
	MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO, MT_PPROF_MAX_MEMORY, 0,
};

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

bool mt_input_is_gzip(const void *d, size_t len)
{
	const uint8_t *b = d;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Grow IN's buffer to hold at least one more byte, up to LIMIT + 1 bytes
 * (a byte past LIMIT says the input is larger).  0, -EFBIG or -ENOMEM. */
static int grow(struct mt_input *in, size_t limit)
{
	size_t cap = in->cap < 4096 ? 4096 : in->cap;
	char *d;

	if (limit > SIZE_MAX / 4)
		limit = SIZE_MAX / 4;
	if (in->cap > limit)
		return -EFBIG;
	if (in->cap >= 4096)
		cap = in->cap > (limit + 1) / 2 ? limit + 1 : in->cap * 2;
	d = realloc(in->data, cap);
	if (!d)
		return -ENOMEM;
	in->data = d;
	in->cap = cap;
	return 0;
}

/* The NUL after the bytes. */
static int terminate(struct mt_input *in, char *err, size_t errlen)
{
	if (in->len == in->cap) {
		size_t n = in->len < SIZE_MAX ? in->len + 1 : 0;
		char *d = n ? realloc(in->data, n) : NULL;

		if (!d)
			return fail(err, errlen, -ENOMEM, "out of memory");
		in->data = d;
		in->cap = in->len + 1;
	}
	in->data[in->len] = '\0';
	return 0;
}

/* Read FD into IN's buffer until it holds WANT bytes or the file ends, at
 * most MAX (one more byte is -EFBIG).  *END says it ended. */
static int read_upto(struct mt_input *in, size_t want, size_t max, bool *end,
		     char *err, size_t errlen)
{
	*end = false;
	while (in->len < want) {
		ssize_t n;

		if (in->len == in->cap) {
			int e = grow(in, max);

			if (e == -ENOMEM)
				return fail(err, errlen, e, "out of memory");
			if (e)
				return e;
		}
		n = read(in->fd, in->data + in->len, in->cap - in->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(err, errlen, -errno, "read: %s", strerror(errno));
		if (n == 0) {
			*end = true;
			return 0;
		}
		in->len += (size_t)n;
		if (in->len > max)
			return -EFBIG;
	}
	return 0;
}

/* What a file that is not gzip may hold: max_file, and the budget. */
static size_t plain_max(const struct mt_pprof_limits *lim)
{
	return lim->budget && lim->budget < lim->max_file ? lim->budget
							  : lim->max_file;
}

static int too_large(const struct mt_pprof_limits *lim, size_t max, char *err,
		     size_t errlen)
{
	return fail(err, errlen, -EFBIG, "file is larger than %zu bytes%s", max,
		    max < lim->max_file ? " (--max-memory)" : "");
}

int mt_input_open(struct mt_input *in, const char *path,
		  const struct mt_pprof_limits *lim, char *err, size_t errlen)
{
	struct stat st;
	bool end;
	int ret;

	memset(in, 0, sizeof(*in));
	in->size = MT_INPUT_SIZE_UNKNOWN;
	if (!lim)
		lim = &defaults;
	in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (in->fd < 0)
		return fail(err, errlen, -errno, "cannot open: %s", strerror(errno));
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
		in->size = (uint64_t)st.st_size;
	/* Its size first: nothing of a file too large is read. */
	if (in->size != MT_INPUT_SIZE_UNKNOWN && in->size > lim->max_file) {
		ret = too_large(lim, lim->max_file, err, errlen);
		goto out;
	}
	ret = read_upto(in, HEAD, lim->max_file, &end, err, errlen);
	if (ret == -EFBIG)
		ret = too_large(lim, lim->max_file, err, errlen);
	if (ret)
		goto out;
	in->gzip = mt_input_is_gzip(in->data, in->len);
	/* Held whole unless it is gzip: not past the budget. */
	if (!in->gzip && in->size != MT_INPUT_SIZE_UNKNOWN &&
	    in->size > plain_max(lim))
		ret = too_large(lim, plain_max(lim), err, errlen);
	else
		ret = terminate(in, err, errlen);
out:
	if (ret)
		mt_input_close(in);
	return ret;
}

/* ---- gunzip, from memory or as the file is read ---- */

struct source {
	const uint8_t *p;      /* compressed bytes not yet given to zlib */
	size_t n;
	int fd;                /* -1: all of it is at p */
	uint8_t *chunk;        /* CHUNK bytes, read from fd */
	uint64_t size;         /* the compressed size, if known */
	uint64_t consumed;     /* compressed bytes read so far */
	bool eof;
};

/* At least NEED (<= CHUNK) bytes at s->p, unless the input ends first. */
static int fill(struct source *s, size_t need, size_t max_file, char *err,
		size_t errlen)
{
	while (s->n < need && !s->eof) {
		ssize_t r;

		if (s->fd < 0) {
			s->eof = true;
			break;
		}
		if (s->n)
			memmove(s->chunk, s->p, s->n);
		s->p = s->chunk;
		r = read(s->fd, s->chunk + s->n, CHUNK - s->n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail(err, errlen, -errno, "read: %s", strerror(errno));
		if (r == 0)
			s->eof = true;
		s->n += (size_t)r;
		s->consumed += (uint64_t)r;
		if (s->consumed > max_file)
			return fail(err, errlen, -EFBIG, "file is larger than %zu bytes",
				    max_file);
	}
	return 0;
}

/* BASE + RATIO x LEN, saturating, at most CAP. */
static size_t scaled(size_t base, size_t ratio, uint64_t len, size_t cap)
{
	size_t v;

	if (len > SIZE_MAX || __builtin_mul_overflow((size_t)len, ratio, &v) ||
	    __builtin_add_overflow(v, base, &v))
		v = SIZE_MAX;
	return v < cap ? v : cap;
}

/* What the inflated output may hold, the compressed input read so far
 * being s->consumed (all of it, s->size, when known). */
static size_t inflate_max(const struct mt_pprof_limits *lim,
			  const struct source *s)
{
	uint64_t len = s->size != MT_INPUT_SIZE_UNKNOWN ? s->size : s->consumed;

	if (lim->budget)
		return lim->budget < lim->max_proto ? lim->budget : lim->max_proto;
	return scaled(MT_PPROF_INFLATE_BASE, MT_PPROF_INFLATE_RATIO, len,
		      lim->max_proto);
}

static int inflated_too_large(const struct mt_pprof_limits *lim,
			      const struct source *s, size_t max, char *err,
			      size_t errlen)
{
	if (lim->budget && max < lim->max_proto)
		return fail(err, errlen, -EFBIG, "decompressed profile is larger "
			    "than %zu bytes (--max-memory)", max);
	if (!lim->budget && max < lim->max_proto)
		return fail(err, errlen, -EFBIG,
			    "decompressed profile is larger than %zu bytes, "
			    "16 MiB + %d x the file's %llu (a gzip bomb?); "
			    "--max-memory raises the limit", max,
			    MT_PPROF_INFLATE_RATIO,
			    (unsigned long long)(s->size != MT_INPUT_SIZE_UNKNOWN
						 ? s->size : s->consumed));
	return fail(err, errlen, -EFBIG,
		    "decompressed profile is larger than %zu bytes", max);
}

static int corrupt(int zret, char *err, size_t errlen)
{
	if (zret == Z_MEM_ERROR)
		return fail(err, errlen, -ENOMEM, "out of memory");
	return fail(err, errlen, -EINVAL, "truncated or corrupt gzip data");
}

/* One inflate call, from S into OUT: 1 at the end of a member, 0 to go
 * on, or a negative errno. */
static int inflate_once(z_stream *zs, struct source *s, struct mt_input *out,
			const struct mt_pprof_limits *lim, char *err,
			size_t errlen)
{
	size_t max = inflate_max(lim, s), room;
	unsigned feed = s->n > UINT_MAX ? UINT_MAX : (unsigned)s->n;
	int zret, e;

	if (out->len == out->cap) {
		e = grow(out, max);
		if (e == -EFBIG)
			return inflated_too_large(lim, s, max, err, errlen);
		if (e)
			return fail(err, errlen, e, "out of memory");
	}
	room = out->cap - out->len;
	zs->next_out = (uint8_t *)out->data + out->len;
	zs->avail_out = room > UINT_MAX ? UINT_MAX : (unsigned)room;
	room = zs->avail_out;
	zs->next_in = s->p;
	zs->avail_in = feed;
	zret = inflate(zs, Z_NO_FLUSH);
	s->p += feed - zs->avail_in;
	s->n -= feed - zs->avail_in;
	out->len += room - zs->avail_out;
	if (out->len > max)
		return inflated_too_large(lim, s, max, err, errlen);
	if (zret == Z_STREAM_END)
		return 1;
	if (zret == Z_OK || (zret == Z_BUF_ERROR && s->n == 0))
		return 0;
	return corrupt(zret, err, errlen);
}

static int gunzip(struct source *s, const struct mt_pprof_limits *lim,
		  struct mt_input *out, char *err, size_t errlen)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return fail(err, errlen, -ENOMEM, "out of memory");
	for (;;) {
		ret = fill(s, 1, lim->max_file, err, errlen);
		if (!ret && s->n == 0)
			ret = corrupt(Z_DATA_ERROR, err, errlen);
		if (!ret)
			ret = inflate_once(&zs, s, out, lim, err, errlen);
		if (ret <= 0) {
			if (ret)
				break;
			continue;
		}
		/* A member ended: another may follow (gzip(1) concatenates). */
		ret = fill(s, 2, lim->max_file, err, errlen);
		if (ret || s->n == 0)
			break;
		if (!mt_input_is_gzip(s->p, s->n)) {
			ret = fail(err, errlen, -EINVAL, "trailing garbage after gzip data");
			break;
		}
		if (inflateReset(&zs) != Z_OK) {
			ret = corrupt(Z_DATA_ERROR, err, errlen);
			break;
		}
	}
	inflateEnd(&zs);
	return ret ? ret : terminate(out, err, errlen);
}

int mt_input_gunzip(const void *data, size_t len,
		    const struct mt_pprof_limits *lim, struct mt_input *out,
		    char *err, size_t errlen)
{
	struct source s = { .p = data, .n = len, .fd = -1, .size = len,
			    .consumed = len, .eof = true };
	int ret;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->gzip = true;
	out->size = len;
	ret = gunzip(&s, lim ? lim : &defaults, out, err, errlen);
	if (ret)
		mt_input_close(out);
	return ret;
}

int mt_input_read(struct mt_input *in, const struct mt_pprof_limits *lim,
		  char *err, size_t errlen)
{
	struct mt_input out = { .fd = -1, .size = in->size, .gzip = true };
	struct source s = { .fd = in->fd, .size = in->size, .consumed = in->len };
	bool end;
	int ret;

	if (!lim)
		lim = &defaults;
	if (in->fd < 0)
		return 0;
	if (!in->gzip) {
		/* A regular file: one buffer of its size (and the NUL). */
		if (in->size != MT_INPUT_SIZE_UNKNOWN && in->size >= in->cap &&
		    in->size < plain_max(lim)) {
			char *d = realloc(in->data, (size_t)in->size + 1);

			if (!d)
				return fail(err, errlen, -ENOMEM, "out of memory");
			in->data = d;
			in->cap = (size_t)in->size + 1;
		}
		ret = read_upto(in, SIZE_MAX, plain_max(lim), &end, err, errlen);
		if (ret == -EFBIG)
			ret = too_large(lim, plain_max(lim), err, errlen);
		if (!ret)
			ret = terminate(in, err, errlen);
	} else {
		/* The first bytes, already read, are inflated first. */
		s.chunk = malloc(CHUNK);
		if (!s.chunk)
			return fail(err, errlen, -ENOMEM, "out of memory");
		memcpy(s.chunk, in->data, in->len);
		s.p = s.chunk;
		s.n = in->len;
		ret = gunzip(&s, lim, &out, err, errlen);
		free(s.chunk);
		free(in->data);
		in->data = out.data;
		in->len = out.len;
		in->cap = out.cap;
	}
	close(in->fd);
	in->fd = -1;
	return ret;
}

void mt_input_close(struct mt_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	free(in->data);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}
