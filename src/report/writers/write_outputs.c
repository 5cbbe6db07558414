// SPDX-License-Identifier: MIT
/* write_outputs.c: dispatch to the writers, one destination at a time. */
#include "write_outputs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "flame_svg.h"
#include "folded.h"
#include "json.h"
#include "outfile.h"
#include "pprof_write.h"
#include "raw.h"
#include "source_list.h"

static bool same_dest(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A document that cannot follow another in one file. */
static bool alone(enum mt_format fmt)
{
	return fmt == MT_FMT_PPROF || fmt == MT_FMT_SVG;
}

static int write_one(FILE *f, const struct mt_output *out,
		     const struct mt_profile *p,
		     const struct mt_raw_profile *raw,
		     const struct mt_render_opts *o)
{
	switch (out->fmt) {
	case MT_FMT_TEXT:
		return mt_write_text(f, p, &o->text);
	case MT_FMT_FOLDED:
		return mt_write_folded(f, p, o->text.metric);
	case MT_FMT_LEAKS:
		return mt_write_leaks(f, p, &o->leaks);
	case MT_FMT_RAW:
		return mt_write_raw(f, raw, p);
	case MT_FMT_SVG:
		if (o->diff)
			return mt_write_flame_svg_diff(f, p, o->text.metric,
						       false);
		return mt_write_flame_svg(f, p, o->text.metric, NULL);
	case MT_FMT_JSON:
		return mt_write_json(f, p, o->text.metric, o->text.cum);
	case MT_FMT_LIST:
		return mt_write_source_list(f, p, o->list, o->text.metric,
					    o->text.unit);
	case MT_FMT_PPROF:
		break;
	}
	return -EINVAL;
}

static int fail(const char *path, int err)
{
	if (!path && (err == -EPIPE || err == EPIPE)) /* its reader gone */
		fprintf(stderr, "memtrace: the report was not written: the program reading standard output has exited (Ctrl-C stops a whole pipeline: stop memtrace alone with q or Enter, or kill -INT)\n");
	else
		fprintf(stderr, "memtrace: cannot write '%s': %s\n",
			path ? path : "standard output", mt_outfile_strerror(err));
	return -1;
}

/* Standard output (PATH NULL), or a new file put in place by close_dest. */
static int open_dest(const char *path, struct mt_outfile *of, FILE **f)
{
	int ret;

	of->fd = of->dirfd = -1;
	of->dest = of->tmp = of->name = NULL;
	*f = stdout;
	if (!path)
		return 0;
	ret = mt_outfile_open(of, path);
	if (ret)
		return ret;
	*f = fdopen(of->fd, "w");
	if (!*f) {
		ret = -errno;
		mt_outfile_abort(of);
		return ret;
	}
	of->fd = -1; /* fclose closes it */
	return 0;
}

/* Flush F and, when all went well (RET 0), put its file in place. */
static int close_dest(struct mt_outfile *of, FILE *f, int ret)
{
	if (ret > 0)
		ret = -EIO;
	/* A write failed (ferror, -EIO): flushed again, it says why (ENOSPC). */
	if (ret == -EIO && ferror(f))
		clearerr(f);
	if (fflush(f) && (!ret || ret == -EIO))
		ret = -errno;
	if (f == stdout)
		return ret;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret) {
		mt_outfile_abort(of);
		return ret;
	}
	return mt_outfile_commit(of);
}

int mt_render(const struct mt_output *outs, size_t n,
	      const struct mt_profile *p, const struct mt_raw_profile *raw,
	      const struct mt_render_opts *o)
{
	for (size_t i = 0; i < n; i++) {
		struct mt_outfile of;
		bool first = true;
		FILE *f;
		int ret = 0;

		if (outs[i].fmt == MT_FMT_PPROF) {
			ret = mt_pprof_write(outs[i].path, p);
			if (ret)
				return fail(outs[i].path, -ret);
			continue;
		}
		/* Only the first output to a destination opens it. */
		for (size_t j = 0; j < i && first && !alone(outs[i].fmt); j++)
			if (!alone(outs[j].fmt) &&
			    same_dest(outs[j].path, outs[i].path))
				first = false;
		if (!first)
			continue;
		ret = open_dest(outs[i].path, &of, &f);
		if (ret)
			return fail(outs[i].path, ret);
		for (size_t j = i; j < n && ret == 0; j++) {
			if (j > i && (alone(outs[i].fmt) || alone(outs[j].fmt) ||
				      !same_dest(outs[j].path, outs[i].path)))
				continue;
			if (j > i)
				fputc('\n', f);
			ret = write_one(f, &outs[j], p, raw, o);
		}
		ret = close_dest(&of, f, ret);
		if (ret == -ESRCH) /* --list matched nothing: said */
			return -1;
		if (ret)
			return fail(outs[i].path, ret);
	}
	return 0;
}
