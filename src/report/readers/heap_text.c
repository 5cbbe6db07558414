/* SPDX-License-Identifier: MIT */
/* heap_text.c: text heap profile records to a raw profile (see heap_text.h). */
#include "heap_text.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"
#include "array_grow.h"
#include "local_elf.h"
#include "maps_text.h"

/* COUNT x SCALE, if it is a number an int64_t holds. */
static bool scale_fits(int64_t *v, double scale)
{
	double x = (double)*v * scale;

	if (!(x >= 0 && x < 0x1p63))
		return false;
	*v = (int64_t)x;
	return true;
}

bool mt_heap_unbias(int64_t *count, int64_t *size, uint64_t period)
{
	double scale;
	int64_t c = *count, s = *size;

	if (period <= 1 || c <= 0 || s <= 0)
		return true;
	scale = 1.0 / (1.0 - exp(-((double)s / (double)c) / (double)period));
	if (!scale_fits(&c, scale) || !scale_fits(&s, scale))
		return false;
	*count = c;
	*size = s;
	return true;
}

int mt_heap_text_add(struct mt_raw_profile *raw, size_t *cap,
		     const struct mt_heap_record *rec, uint64_t period)
{
	int64_t io = rec->inuse_objects, ib = rec->inuse_bytes;
	int64_t ao = rec->alloc_objects, ab = rec->alloc_bytes;
	struct mt_raw_stack *s;

	if (io < 0 || ib < 0 || ao < 0 || ab < 0 || (io == 0 && ib != 0) ||
	    (ao == 0 && ab != 0))
		return -EINVAL;
	if (ao == 0 && ab == 0) {
		ao = io;
		ab = ib;
	}
	if (ao == 0)
		return 0;  /* nothing allocated, nothing held: no record */
	if (ao < io || ab < ib)
		return -EINVAL;
	if (!mt_heap_unbias(&io, &ib, period) || !mt_heap_unbias(&ao, &ab, period))
		return -ERANGE;
	/* Scaled separately, the allocations stay at least what is held. */
	if (ao < io)
		ao = io;
	if (ab < ib)
		ab = ib;
	if (mt_reserve(&raw->stacks, cap, raw->nstacks + 1, sizeof(*s)))
		return -ENOMEM;
	s = &raw->stacks[raw->nstacks];
	memset(s, 0, sizeof(*s));
	if (rec->nips) {
		s->ips = malloc(rec->nips * sizeof(*s->ips));
		if (!s->ips)
			return -ENOMEM;
		memcpy(s->ips, rec->ips, rec->nips * sizeof(*s->ips));
	}
	s->nips = (uint32_t)rec->nips;
	s->stack_id = MT_STACK_NONE;
	s->alloc_objects = (uint64_t)ao;
	s->alloc_bytes = (uint64_t)ab;
	s->free_objects = (uint64_t)(ao - io);
	s->free_bytes = (uint64_t)(ab - ib);
	raw->nstacks++;
	return 0;
}

int mt_heap_text_addrs(struct mt_line *l, uint64_t **ips, size_t *n,
		       size_t *cap)
{
	uint64_t v;

	*n = 0;
	while (!mt_line_blank(l)) {
		if (!mt_line_hex(l, false, &v) ||
		    (l->p < l->end && *l->p != ' ' && *l->p != '\t') || *n == UINT32_MAX)
			return -EINVAL;
		if (mt_reserve(ips, cap, *n + 1, sizeof(**ips)))
			return -ENOMEM;
		(*ips)[(*n)++] = v;
	}
	return 0;
}

/* "C: B [AC: AB]": the four figures of a record or of a thread's line. */
bool mt_heap_text_figures(struct mt_line *l, struct mt_heap_record *rec)
{
	return mt_line_i64(l, &rec->inuse_objects) && mt_line_lit(l, ":") &&
	       mt_line_i64(l, &rec->inuse_bytes) && mt_line_lit(l, "[") &&
	       mt_line_i64(l, &rec->alloc_objects) && mt_line_lit(l, ":") &&
	       mt_line_i64(l, &rec->alloc_bytes) && mt_line_lit(l, "]");
}

void mt_heap_text_error(int ret, size_t lineno, const char *what, char *err,
			size_t errlen)
{
	if (ret == -EINVAL)
		snprintf(err, errlen, "line %zu: %s", lineno, what);
	else if (ret == -ERANGE)
		snprintf(err, errlen, "line %zu: figures too large once scaled "
			 "by the sampling period", lineno);
	else
		snprintf(err, errlen, "out of memory");
}

/* "libNAME" followed by '.', '_' or '-' (libtcmalloc_minimal.so.4). */
static bool lib_named(const char *file, const char *name)
{
	size_t n = strlen(name);

	return strncmp(file, "lib", 3) == 0 && strncmp(file + 3, name, n) == 0 &&
	       file[3 + n] && strchr("._-", file[3 + n]);
}

/*
 * Is M the allocator NAME's own library?  By its soname when the file is
 * here (an executable has none: a program called tcmalloc_test is not the
 * allocator), else by its file name; never by a name merely containing
 * NAME.
 */
static bool is_allocator(const struct mt_module *m, const char *name)
{
	char soname[256];
	int err = mt_local_elf_soname(m->path, soname, sizeof(soname));

	if (err == -ENODATA)
		return false;
	return lib_named(err ? mt_path_basename(m->path) : soname, name);
}

/* True when IP is in one of PROC's modules marked in ALLOC. */
static bool in_allocator(const struct mt_process *proc, const bool *alloc,
			 uint64_t ip)
{
	const struct mt_module *m = mt_maps_text_module(proc, ip);

	return m && alloc[m - proc->mods];
}

void mt_heap_text_strip(struct mt_raw_profile *raw, const char *name)
{
	const struct mt_process *proc = raw->nprocs ? &raw->procs[0] : NULL;
	bool *alloc, any = false;

	if (!proc || !proc->nmods)
		return;
	alloc = calloc(proc->nmods, sizeof(*alloc));
	if (!alloc)
		return;  /* nothing stripped: the frames stay, still right */
	for (size_t i = 0; i < proc->nmods; i++)
		any |= alloc[i] = is_allocator(&proc->mods[i], name);
	for (size_t i = 0; any && i < raw->nstacks; i++) {
		struct mt_raw_stack *s = &raw->stacks[i];
		uint32_t k = 0;

		while (k < s->nips && in_allocator(proc, alloc, s->ips[k]))
			k++;
		if (k) {
			memmove(s->ips, s->ips + k, (s->nips - k) * sizeof(*s->ips));
			s->nips -= k;
		}
	}
	free(alloc);
}
