/* SPDX-License-Identifier: MIT */
/*
 * pprof_write.c: struct mt_profile to a pprof profile (see pprof_write.h).
 *
 * Two passes.  The first deduplicates strings, mappings, functions and
 * locations into plain arrays (hash sets from itab.h index them).  The
 * second lays the protobuf-c messages over those arrays, and the packed
 * message is streamed through zlib into the file.
 */
#include "pprof_write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "itab.h"
#include "outfile.h"
#include "pprof_facts.h"
#include "pprof_pb.h"
#include "units.h"

/* The unit of a sample type (enum mt_value is Go's heap profile order). */
static const char *value_unit(enum mt_value v)
{
	return mt_value_is_bytes(v) ? "bytes" : "count";
}

#define LABELS_PER_SAMPLE 2

/* The string table: borrowed strings, plus the ones it owns. */
struct strtab {
	const char **s;
	size_t n, cap;
	char **owned;
	size_t nowned, ownedcap;
	struct mt_itab idx;
};

struct wmapping {
	uint32_t pid;
	int64_t file;      /* string index */
	int64_t build_id;  /* string index */
	const struct mt_map *m;  /* its range, or NULL if not known */
	/* What every location in it has (pprof's has_* flags). */
	bool functions, filenames, line_numbers, inline_frames;
};

struct wfunction {
	int64_t name, file, start_line;
};

/* One line of a location, and the mt_frame it came from. */
struct wline {
	uint64_t function_id;
	int64_t line;
	uint32_t frame;
};

struct wlocation {
	uint32_t pid;
	uint64_t mapping_id;  /* 0: none */
	uint64_t addr;
	size_t first;         /* into writer.lines */
	size_t nlines;
};

struct wsample {
	const struct mt_sample *s;
	size_t first;         /* into writer.locids */
	size_t nlocs;
	int64_t comm;         /* string index, 0 if unknown */
};

struct writer {
	const struct mt_profile *p;
	const struct mt_pprof_write_options *o;
	struct strtab st;
	struct wmapping *maps;
	size_t nmaps, mapcap;
	struct mt_itab mapidx;   /* (pid, file) */
	struct mt_itab infoidx;  /* p->maps by (pid, path) */
	struct wfunction *funcs;
	size_t nfuncs, funccap;
	struct mt_itab funcidx;
	struct wlocation *locs;
	size_t nlocs, loccap;
	struct mt_itab locidx;
	struct wline *lines;
	size_t nlines, linecap;
	uint64_t *locids;
	size_t nlocids, locidcap;
	struct wsample *samples;
	size_t nsamples, samplecap;
	int64_t *proc_comm;      /* per process: string index of its name */
	struct mt_itab procidx;  /* pid: first named process */
};

/*
 * Make room for NEED elements of ELEM bytes in V (capacity *CAP).  Returns
 * the (possibly moved) array, or NULL with V untouched.
 */
static void *reserve(void *v, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *nv;

	if (need <= *cap)
		return v;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	nv = reallocarray(v, n, elem);
	if (nv)
		*cap = n;
	return nv;
}

/* ---- strings ---- */

struct str_key {
	const struct strtab *st;
	const char *s;
};

static bool str_eq(const void *ctx, uint32_t idx)
{
	const struct str_key *k = ctx;

	return strcmp(k->st->s[idx], k->s) == 0;
}

static int str_push(struct strtab *st, const char *s, uint64_t hash)
{
	const char **v = reserve(st->s, &st->cap, st->n + 1, sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	st->s = v;
	if (st->n >= UINT32_MAX || st->n > (size_t)INT64_MAX)
		return -EOVERFLOW;
	err = mt_itab_add(&st->idx, hash, (uint32_t)st->n);
	if (err)
		return err;
	st->s[st->n++] = s;
	return 0;
}

/* Index of S (which must outlive the table) in *IDX; NULL is "". */
static int str_intern(struct strtab *st, const char *s, int64_t *idx)
{
	struct str_key k = { st, s ? s : "" };
	uint64_t h = mt_hash_str(MT_HASH_SEED, k.s);
	uint32_t found;
	int err;

	if (mt_itab_find(&st->idx, h, str_eq, &k, &found)) {
		*idx = found;
		return 0;
	}
	err = str_push(st, k.s, h);
	if (err)
		return err;
	*idx = (int64_t)(st->n - 1);
	return 0;
}

/* Like str_intern, but takes ownership of malloc'd S (NULL: -ENOMEM). */
static int str_intern_owned(struct strtab *st, char *s, int64_t *idx)
{
	char **v;
	size_t before = st->n;
	int err;

	if (!s)
		return -ENOMEM;
	v = reserve(st->owned, &st->ownedcap, st->nowned + 1, sizeof(*v));
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	st->owned = v;
	err = str_intern(st, s, idx);
	if (err || st->n == before) {
		free(s);
		return err;
	}
	st->owned[st->nowned++] = s;
	return 0;
}

static void strtab_free(struct strtab *st)
{
	for (size_t i = 0; i < st->nowned; i++)
		free(st->owned[i]);
	free(st->owned);
	free(st->s);
	mt_itab_free(&st->idx);
}

/* ---- mappings ---- */

struct map_key {
	const struct writer *w;
	uint32_t pid;
	int64_t file;
};

static bool map_eq(const void *ctx, uint32_t idx)
{
	const struct map_key *k = ctx;

	return k->w->maps[idx].pid == k->pid && k->w->maps[idx].file == k->file;
}

struct info_key {
	const struct mt_profile *p;
	uint32_t pid;
	const char *path;
};

static bool info_eq(const void *ctx, uint32_t idx)
{
	const struct info_key *k = ctx;
	const struct mt_map *m = &k->p->maps[idx];

	return m->pid == k->pid && strcmp(m->path, k->path) == 0;
}

static uint64_t info_hash(uint32_t pid, const char *path)
{
	return mt_hash_str(mt_hash_u64(MT_HASH_SEED, pid), path);
}

/* Index P's maps by (pid, path); the first of duplicates wins. */
static int index_maps(struct writer *w)
{
	const struct mt_profile *p = w->p;

	if (p->nmaps >= UINT32_MAX)
		return -EOVERFLOW;
	for (size_t i = 0; p->maps && i < p->nmaps; i++) {
		struct info_key k = { p, p->maps[i].pid, p->maps[i].path };
		uint64_t h;
		uint32_t found;
		int err;

		if (!k.path)
			continue;
		h = info_hash(k.pid, k.path);
		if (mt_itab_find(&w->infoidx, h, info_eq, &k, &found))
			continue;
		err = mt_itab_add(&w->infoidx, h, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

/* What the profile says about file PATH of process PID, or NULL. */
static const struct mt_map *map_info(const struct writer *w, uint32_t pid,
				     const char *path)
{
	struct info_key k = { w->p, pid, path };
	uint32_t found;

	if (!mt_itab_find(&w->infoidx, info_hash(pid, path), info_eq, &k, &found))
		return NULL;
	return &w->p->maps[found];
}

static int map_add(struct writer *w, const struct map_key *k, uint64_t hash,
		   const char *path)
{
	struct wmapping m = { .pid = k->pid, .file = k->file, .functions = true,
			      .filenames = true, .line_numbers = true,
			      .inline_frames = true };
	struct wmapping *v;
	int err;

	if (w->nmaps >= UINT32_MAX)
		return -EOVERFLOW;
	m.m = map_info(w, k->pid, path);
	if (m.m && m.m->build_id[0] && !w->o->no_build_ids) {
		err = str_intern(&w->st, m.m->build_id, &m.build_id);
		if (err)
			return err;
	}
	v = reserve(w->maps, &w->mapcap, w->nmaps + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->maps = v;
	err = mt_itab_add(&w->mapidx, hash, (uint32_t)w->nmaps);
	if (err)
		return err;
	w->maps[w->nmaps++] = m;
	return 0;
}

/* Mapping id (1-based; 0 for no module) of MODULE in process PID. */
static int mapping_id(struct writer *w, uint32_t pid, const char *module,
		      uint64_t *id)
{
	struct map_key k = { w, pid, 0 };
	uint64_t h;
	uint32_t found;
	int err;

	*id = 0;
	if (!module || !*module)
		return 0;
	err = str_intern(&w->st, module, &k.file);
	if (err)
		return err;
	h = mt_hash_u64(mt_hash_u64(MT_HASH_SEED, pid), (uint64_t)k.file);
	if (!mt_itab_find(&w->mapidx, h, map_eq, &k, &found)) {
		err = map_add(w, &k, h, module);
		if (err)
			return err;
		found = (uint32_t)(w->nmaps - 1);
	}
	*id = (uint64_t)found + 1;
	return 0;
}

/* ---- functions ---- */

struct func_key {
	const struct writer *w;
	struct wfunction f;
};

static bool func_eq(const void *ctx, uint32_t idx)
{
	const struct func_key *k = ctx;
	const struct wfunction *f = &k->w->funcs[idx];

	return f->name == k->f.name && f->file == k->f.file &&
	       f->start_line == k->f.start_line;
}

/*
 * Function id of frame F.  Its file is the file of F's line (pprof pairs
 * Line.line with Function.filename), else the declaration's.
 */
static int function_id(struct writer *w, const struct mt_frame *f,
		       uint64_t *id)
{
	struct func_key k = { w, { 0, 0, f->decl_line > 0 ? f->decl_line : 0 } };
	const char *file = f->file ? f->file : f->decl_file;
	struct wfunction *v;
	uint64_t h;
	uint32_t found;
	int err = str_intern(&w->st, f->function ? f->function : "??", &k.f.name);

	if (!err)
		err = str_intern(&w->st, file, &k.f.file);
	if (err)
		return err;
	h = mt_hash_u64(mt_hash_u64(mt_hash_u64(MT_HASH_SEED, (uint64_t)k.f.name),
				    (uint64_t)k.f.file),
			(uint64_t)k.f.start_line);
	if (!mt_itab_find(&w->funcidx, h, func_eq, &k, &found)) {
		if (w->nfuncs >= UINT32_MAX)
			return -EOVERFLOW;
		v = reserve(w->funcs, &w->funccap, w->nfuncs + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		w->funcs = v;
		found = (uint32_t)w->nfuncs;
		err = mt_itab_add(&w->funcidx, h, found);
		if (err)
			return err;
		w->funcs[w->nfuncs++] = k.f;
	}
	*id = (uint64_t)found + 1;
	return 0;
}

/* ---- locations ---- */

/*
 * A location's address is on the call instruction, as pprof expects: the
 * frames' addresses are return addresses, one byte past it at least.
 */
static uint64_t call_address(uint64_t ret)
{
	return ret ? ret - 1 : 0;
}


/* A location is identified by its process and its frames (leaf first). */
struct loc_key {
	const struct writer *w;
	uint32_t pid;
	const uint32_t *frames;
	size_t n;
};

static bool loc_eq(const void *ctx, uint32_t idx)
{
	const struct loc_key *k = ctx;
	const struct wlocation *l = &k->w->locs[idx];

	if (l->pid != k->pid)
		return false;
	/* An address-only location: the one unresolved frame. */
	if (l->nlines == 0)
		return k->n == 1 && k->w->p->frames[k->frames[0]].unresolved &&
		       l->addr == call_address(k->w->p->frames[k->frames[0]].addr) &&
		       l->first == k->frames[0];
	if (l->nlines != k->n)
		return false;
	for (size_t i = 0; i < k->n; i++) {
		if (k->w->lines[l->first + i].frame != k->frames[i])
			return false;
	}
	return true;
}

static uint64_t loc_hash(const struct loc_key *k)
{
	uint64_t h = mt_hash_u64(MT_HASH_SEED, k->pid);

	for (size_t i = 0; i < k->n; i++)
		h = mt_hash_u64(h, k->frames[i]);
	return h;
}

/* Append the lines of location K (its frames were checked by the caller). */
static int loc_lines(struct writer *w, const struct loc_key *k)
{
	struct wline *v = reserve(w->lines, &w->linecap, w->nlines + k->n,
				  sizeof(*v));

	if (!v)
		return -ENOMEM;
	w->lines = v;
	for (size_t i = 0; i < k->n; i++) {
		const struct mt_frame *f = &w->p->frames[k->frames[i]];
		struct wline *ln = &w->lines[w->nlines + i];
		int err = function_id(w, f, &ln->function_id);

		if (err)
			return err;
		ln->line = f->line > 0 ? f->line : 0;
		ln->frame = k->frames[i];
	}
	w->nlines += k->n;
	return 0;
}

/* Clear the has_* flags of mapping ID that location K's frames lack. */
static void map_flags(struct writer *w, uint64_t id, const struct loc_key *k)
{
	struct wmapping *m = id ? &w->maps[id - 1] : NULL;

	for (size_t i = 0; m && i < k->n; i++) {
		const struct mt_frame *f = &w->p->frames[k->frames[i]];

		m->functions &= !f->unresolved;
		m->filenames &= !f->unresolved && f->file;
		m->line_numbers &= !f->unresolved && f->line > 0;
		m->inline_frames &= !f->unresolved && !f->no_inlines;
	}
}

static int loc_add(struct writer *w, const struct loc_key *k, uint64_t h)
{
	const struct mt_frame *outer = &w->p->frames[k->frames[k->n - 1]];
	struct wlocation l = { .pid = k->pid, .addr = call_address(outer->addr),
			       .first = w->nlines, .nlines = k->n };
	struct wlocation *v;
	int err;

	if (w->nlocs >= UINT32_MAX)
		return -EOVERFLOW;
	err = mapping_id(w, k->pid, outer->module, &l.mapping_id);
	/* An unresolved frame is an address only, for pprof to symbolise. */
	if (!err && k->n == 1 && outer->unresolved) {
		l.nlines = 0;
		l.first = k->frames[0];  /* the frame, for loc_eq */
	} else if (!err) {
		err = loc_lines(w, k);
	}
	if (err)
		return err;
	map_flags(w, l.mapping_id, k);
	v = reserve(w->locs, &w->loccap, w->nlocs + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->locs = v;
	err = mt_itab_add(&w->locidx, h, (uint32_t)w->nlocs);
	if (err)
		return err;
	w->locs[w->nlocs++] = l;
	return 0;
}

/* Location id (1-based) of frames FRAMES[0..N) of process PID. */
static int location_id(struct writer *w, uint32_t pid, const uint32_t *frames,
		       size_t n, uint64_t *id)
{
	struct loc_key k = { w, pid, frames, n };
	uint64_t h = loc_hash(&k);
	uint32_t found;

	if (!mt_itab_find(&w->locidx, h, loc_eq, &k, &found)) {
		int err = loc_add(w, &k, h);

		if (err)
			return err;
		found = (uint32_t)(w->nlocs - 1);
	}
	*id = (uint64_t)found + 1;
	return 0;
}

/* ---- samples ---- */

static bool all_zero(const struct mt_sample *s)
{
	for (int i = 0; i < MT_NVALUES; i++) {
		if (s->v[i] != 0)
			return false;
	}
	return true;
}

/* Length of the location starting at frame I: inlined frames and their caller. */
static size_t group_len(const struct mt_profile *p, const struct mt_sample *s,
			size_t i)
{
	size_t j = i;

	while (j + 1 < s->nframes && p->frames[s->frames[j]].inlined)
		j++;
	return j - i + 1;
}

static int sample_locations(struct writer *w, const struct mt_sample *s)
{
	for (size_t i = 0; i < s->nframes;) {
		size_t n = group_len(w->p, s, i);
		uint64_t *v = reserve(w->locids, &w->locidcap, w->nlocids + 1,
				      sizeof(*v));
		int err;

		if (!v)
			return -ENOMEM;
		w->locids = v;
		err = location_id(w, s->pid, s->frames + i, n,
				  &w->locids[w->nlocids]);
		if (err)
			return err;
		w->nlocids++;
		i += n;
	}
	return 0;
}

/* Index the named processes by pid (the first of a pid wins). */
static int add_procs(struct writer *w)
{
	const struct mt_profile *p = w->p;

	if (p->nprocs >= UINT32_MAX)
		return -EOVERFLOW;
	w->proc_comm = calloc(p->nprocs ? p->nprocs : 1, sizeof(*w->proc_comm));
	if (!w->proc_comm)
		return -ENOMEM;
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct mt_process *pr = &p->procs[i];
		struct mt_pid_key k = { p->procs, pr->pid };
		uint64_t h = mt_hash_u64(MT_HASH_SEED, pr->pid);
		uint32_t found;
		int err;

		if (!pr->comm[0] || mt_itab_find(&w->procidx, h, mt_pid_key_eq, &k, &found))
			continue;
		err = str_intern_owned(&w->st, strndup(pr->comm, sizeof(pr->comm)),
				       &w->proc_comm[i]);
		if (!err)
			err = mt_itab_add(&w->procidx, h, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

/* String index of the name of process PID (0 if unknown). */
static int64_t comm_of(const struct writer *w, uint32_t pid)
{
	struct mt_pid_key k = { w->p->procs, pid };
	uint32_t found;

	if (!mt_itab_find(&w->procidx, mt_hash_u64(MT_HASH_SEED, pid), mt_pid_key_eq,
			  &k, &found))
		return 0;
	return w->proc_comm[found];
}

static int check_frames(const struct mt_profile *p, const struct mt_sample *s)
{
	if (s->nframes && !s->frames)
		return -EINVAL;
	for (size_t i = 0; i < s->nframes; i++) {
		if (s->frames[i] >= p->nframes)
			return -EINVAL;
	}
	return 0;
}

static int add_sample(struct writer *w, const struct mt_sample *s)
{
	struct wsample ws = { .s = s, .first = w->nlocids,
			      .comm = comm_of(w, s->pid) };
	struct wsample *v;
	int err = check_frames(w->p, s);

	if (!err)
		err = sample_locations(w, s);
	if (err)
		return err;
	ws.nlocs = w->nlocids - ws.first;
	v = reserve(w->samples, &w->samplecap, w->nsamples + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->samples = v;
	w->samples[w->nsamples++] = ws;
	return 0;
}

static int add_samples(struct writer *w)
{
	for (size_t i = 0; i < w->p->nsamples; i++) {
		const struct mt_sample *s = &w->p->samples[i];
		int err;

		if (all_zero(s))
			continue;
		err = add_sample(w, s);
		if (err)
			return err;
	}
	return 0;
}

/* memtrace's header facts: strings nothing refers to (pprof_facts.h). */
static int add_facts(struct writer *w)
{
	for (size_t i = 0; i < mt_facts_count(); i++) {
		char *c;
		int64_t idx;
		int err = mt_facts_string(&w->p->sum, i, &c);

		if (!err && c)
			err = str_intern_owned(&w->st, c, &idx);
		if (err)
			return err;
	}
	return 0;
}

/* The first pass: everything into the writer's tables. */
static int collect(struct writer *w)
{
	int64_t idx;
	int err = str_intern(&w->st, "", &idx);

	/* Strings the second pass looks up again (they are found, not added). */
	for (int i = 0; !err && i < MT_NVALUES; i++) {
		err = str_intern(&w->st, mt_value_name((enum mt_value)i), &idx);
		if (!err)
			err = str_intern(&w->st, value_unit((enum mt_value)i), &idx);
	}
	if (!err)
		err = str_intern(&w->st, "space", &idx);
	if (!err)
		err = str_intern(&w->st, "pid", &idx);
	if (!err)
		err = str_intern(&w->st, "comm", &idx);
	if (!err)
		err = add_facts(w);
	if (!err)
		err = index_maps(w);
	if (!err)
		err = add_procs(w);
	if (!err)
		err = add_samples(w);
	return err;
}

static void writer_free(struct writer *w)
{
	strtab_free(&w->st);
	free(w->maps);
	mt_itab_free(&w->mapidx);
	mt_itab_free(&w->infoidx);
	free(w->funcs);
	mt_itab_free(&w->funcidx);
	free(w->locs);
	mt_itab_free(&w->locidx);
	free(w->lines);
	free(w->locids);
	free(w->samples);
	free(w->proc_comm);
	mt_itab_free(&w->procidx);
}

/* ---- the second pass: protobuf-c messages ---- */

struct pb {
	PbProfile prof;
	PbValueType types[MT_NVALUES], *typep[MT_NVALUES], period_type;
	PbSample *samples, **samplep;
	PbLabel *labels, **labelp;
	PbMapping *maps, **mapp;
	PbFunction *funcs, **funcp;
	PbLocation *locs, **locp;
	PbLine *lines, **linep;
};

static void pb_free(struct pb *b)
{
	free(b->samples);
	free(b->samplep);
	free(b->labels);
	free(b->labelp);
	free(b->maps);
	free(b->mapp);
	free(b->funcs);
	free(b->funcp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
}

static int pb_alloc(struct pb *b, const struct writer *w)
{
	size_t nlabels = w->nsamples * LABELS_PER_SAMPLE;

	b->samples = calloc(w->nsamples ? w->nsamples : 1, sizeof(*b->samples));
	b->samplep = calloc(w->nsamples ? w->nsamples : 1, sizeof(*b->samplep));
	b->labels = calloc(nlabels ? nlabels : 1, sizeof(*b->labels));
	b->labelp = calloc(nlabels ? nlabels : 1, sizeof(*b->labelp));
	b->maps = calloc(w->nmaps ? w->nmaps : 1, sizeof(*b->maps));
	b->mapp = calloc(w->nmaps ? w->nmaps : 1, sizeof(*b->mapp));
	b->funcs = calloc(w->nfuncs ? w->nfuncs : 1, sizeof(*b->funcs));
	b->funcp = calloc(w->nfuncs ? w->nfuncs : 1, sizeof(*b->funcp));
	b->locs = calloc(w->nlocs ? w->nlocs : 1, sizeof(*b->locs));
	b->locp = calloc(w->nlocs ? w->nlocs : 1, sizeof(*b->locp));
	b->lines = calloc(w->nlines ? w->nlines : 1, sizeof(*b->lines));
	b->linep = calloc(w->nlines ? w->nlines : 1, sizeof(*b->linep));
	if (!b->samples || !b->samplep || !b->labels || !b->labelp ||
	    !b->maps || !b->mapp || !b->funcs || !b->funcp || !b->locs ||
	    !b->locp || !b->lines || !b->linep)
		return -ENOMEM;
	return 0;
}

/* Index of S, which collect() interned. */
static int64_t str_find(const struct strtab *st, const char *s)
{
	struct str_key k = { st, s };
	uint32_t found = 0;

	mt_itab_find(&st->idx, mt_hash_str(MT_HASH_SEED, s), str_eq, &k, &found);
	return found;
}

static void pb_mappings(struct pb *b, const struct writer *w)
{
	for (size_t i = 0; i < w->nmaps; i++) {
		PbMapping *m = &b->maps[i];

		*m = (PbMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		m->id = i + 1;
		m->filename = w->maps[i].file;
		m->build_id = w->maps[i].build_id;
		if (w->maps[i].m) {
			m->memory_start = w->maps[i].m->start;
			m->memory_limit = w->maps[i].m->limit;
			m->file_offset = w->maps[i].m->offset;
		}
		m->has_functions = w->maps[i].functions;
		m->has_filenames = w->maps[i].filenames;
		m->has_line_numbers = w->maps[i].line_numbers;
		m->has_inline_frames = w->maps[i].inline_frames;
		b->mapp[i] = m;
	}
}

static void pb_functions(struct pb *b, const struct writer *w)
{
	for (size_t i = 0; i < w->nfuncs; i++) {
		PbFunction *f = &b->funcs[i];

		*f = (PbFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
		f->id = i + 1;
		f->name = w->funcs[i].name;
		f->system_name = w->funcs[i].name;
		f->filename = w->funcs[i].file;
		f->start_line = w->funcs[i].start_line;
		b->funcp[i] = f;
	}
}

static void pb_locations(struct pb *b, const struct writer *w)
{
	for (size_t i = 0; i < w->nlines; i++) {
		PbLine *ln = &b->lines[i];

		*ln = (PbLine)PERFTOOLS__PROFILES__LINE__INIT;
		ln->function_id = w->lines[i].function_id;
		ln->line = w->lines[i].line;
		b->linep[i] = ln;
	}
	for (size_t i = 0; i < w->nlocs; i++) {
		PbLocation *l = &b->locs[i];

		*l = (PbLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
		l->id = i + 1;
		l->mapping_id = w->locs[i].mapping_id;
		l->address = w->locs[i].addr;
		l->n_line = w->locs[i].nlines;
		l->line = l->n_line ? b->linep + w->locs[i].first : NULL;
		b->locp[i] = l;
	}
}

static void pb_labels(PbSample *ps, PbLabel *lab, PbLabel **labp,
		      const struct wsample *ws, int64_t pid_key,
		      int64_t comm_key)
{
	ps->label = labp;
	if (ws->s->pid) {
		lab[ps->n_label] = (PbLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		lab[ps->n_label].key = pid_key;
		lab[ps->n_label].num = ws->s->pid;
		labp[ps->n_label] = &lab[ps->n_label];
		ps->n_label++;
	}
	if (ws->comm) {
		lab[ps->n_label] = (PbLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		lab[ps->n_label].key = comm_key;
		lab[ps->n_label].str = ws->comm;
		labp[ps->n_label] = &lab[ps->n_label];
		ps->n_label++;
	}
}

static void pb_samples(struct pb *b, const struct writer *w)
{
	int64_t pid_key = str_find(&w->st, "pid");
	int64_t comm_key = str_find(&w->st, "comm");

	for (size_t i = 0; i < w->nsamples; i++) {
		const struct wsample *ws = &w->samples[i];
		PbSample *s = &b->samples[i];

		*s = (PbSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		s->n_location_id = ws->nlocs;
		s->location_id = w->locids + ws->first;
		s->n_value = MT_NVALUES;
		/* protobuf-c does not write through it. */
		s->value = (int64_t *)ws->s->v;
		pb_labels(s, b->labels + i * LABELS_PER_SAMPLE,
			  b->labelp + i * LABELS_PER_SAMPLE, ws, pid_key,
			  comm_key);
		b->samplep[i] = s;
	}
}

static int64_t now_nanos(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t duration_nanos(double s)
{
	if (!(s > 0))  /* also NaN */
		return 0;
	if (s >= 9.2e9)
		return INT64_MAX;
	return (int64_t)(s * 1e9 + 0.5);
}

static void pb_header(struct pb *b, struct writer *w)
{
	PbProfile *pr = &b->prof;

	*pr = (PbProfile)PERFTOOLS__PROFILES__PROFILE__INIT;
	for (int i = 0; i < MT_NVALUES; i++) {
		b->types[i] = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		b->types[i].type = str_find(&w->st, mt_value_name((enum mt_value)i));
		b->types[i].unit = str_find(&w->st, value_unit((enum mt_value)i));
		b->typep[i] = &b->types[i];
	}
	pr->n_sample_type = MT_NVALUES;
	pr->sample_type = b->typep;
	b->period_type = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	b->period_type.type = str_find(&w->st, "space");
	b->period_type.unit = str_find(&w->st, "bytes");
	pr->period_type = &b->period_type;
	/* Sampling (-s): one sample per period bytes on average. */
	pr->period = w->o->period ? w->o->period : (int64_t)w->p->sum.sample_bytes;
	pr->time_nanos = w->o->time_nanos ? w->o->time_nanos : now_nanos();
	/* --delta, ?seconds: the window's, as Go's delta profiles (its end
	 * the time above); pprof_read adds its start back. */
	pr->duration_nanos = duration_nanos(
		w->p->sum.duration_s -
		(w->p->sum.delta ? w->p->sum.delta_since_s : 0));
	pr->default_sample_type = str_find(
		&w->st, mt_value_name(w->o->allocs_default ? MT_ALLOC_SPACE
							   : MT_INUSE_SPACE));
	/* protobuf-c only reads the table. */
	pr->n_string_table = w->st.n;
	pr->string_table = (char **)w->st.s;
}

static int build(struct pb *b, struct writer *w)
{
	int err = pb_alloc(b, w);

	if (err)
		return err;
	pb_header(b, w);
	pb_mappings(b, w);
	pb_functions(b, w);
	pb_locations(b, w);
	pb_samples(b, w);
	b->prof.n_mapping = w->nmaps;
	b->prof.mapping = b->mapp;
	b->prof.n_function = w->nfuncs;
	b->prof.function = b->funcp;
	b->prof.n_location = w->nlocs;
	b->prof.location = b->locp;
	b->prof.n_sample = w->nsamples;
	b->prof.sample = b->samplep;
	return 0;
}

/* ---- output ---- */

/* Gzip LEN bytes at IN into a new buffer *OUT, *OUTLEN (zlib's gzip
 * wrapper, as gzwrite makes).  0 or -ENOMEM/-EIO. */
static int gzip_buf(const uint8_t *in, size_t len, uint8_t **out,
		    size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = len / 4 + 1024, n = 0;
	uint8_t *buf = malloc(cap);
	int zret, err = 0;

	if (!buf)
		return -ENOMEM;
	/* 15 + 16: a gzip header and trailer, as pprof files have. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	do {
		size_t chunk = len > (1U << 30) ? (1U << 30) : len;

		if (n == cap) {
			uint8_t *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = bigger;
			cap *= 2;
		}
		z.avail_in = (uInt)chunk;
		z.next_out = buf + n;
		z.avail_out = (uInt)((cap - n) > (1U << 30) ? (1U << 30)
							      : cap - n);
		zret = deflate(&z, chunk == len ? Z_FINISH : Z_NO_FLUSH);
		if (zret == Z_STREAM_ERROR) {
			err = -EIO;
			goto cleanup;
		}
		len -= chunk - z.avail_in;
		n = (size_t)(z.next_out - buf);
	} while (zret != Z_STREAM_END);
cleanup:
	deflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*outlen = n;
	return 0;
}

/* Write LEN bytes at DATA through a temporary file renamed over PATH when
 * complete (outfile.h). */
static int write_file(const char *path, const uint8_t *data, size_t len)
{
	struct mt_outfile f;
	int err = mt_outfile_open(&f, path);

	if (err)
		return err;
	err = mt_outfile_write(&f, data, len);
	if (err) {
		mt_outfile_abort(&f);
		return err;
	}
	return mt_outfile_commit(&f);
}

int mt_pprof_encode(const struct mt_profile *p,
		    const struct mt_pprof_write_options *opts, uint8_t **out,
		    size_t *outlen)
{
	static const struct mt_pprof_write_options defaults;
	struct writer w = { .p = p, .o = opts ? opts : &defaults };
	struct pb b = { 0 };
	uint8_t *packed = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	*outlen = 0;
	if (!p || (p->nsamples && !p->samples) ||
	    (p->nframes && !p->frames) || (p->nprocs && !p->procs))
		return -EINVAL;
	err = collect(&w);
	if (!err)
		err = build(&b, &w);
	if (!err) {
		len = perftools__profiles__profile__get_packed_size(&b.prof);
		packed = malloc(len ? len : 1);
		if (!packed)
			err = -ENOMEM;
	}
	if (!err)
		perftools__profiles__profile__pack(&b.prof, packed);
	pb_free(&b);
	writer_free(&w);
	if (err) {
		free(packed);
		return err;
	}
	if (w.o->uncompressed) {
		*out = packed;
		*outlen = len;
		return 0;
	}
	err = gzip_buf(packed, len, out, outlen);
	free(packed);
	return err;
}

int mt_pprof_write_opts(const char *path, const struct mt_profile *p,
			const struct mt_pprof_write_options *opts)
{
	uint8_t *data;
	size_t len;
	int err;

	if (!path)
		return -EINVAL;
	err = mt_pprof_encode(p, opts, &data, &len);
	if (err)
		return err;
	err = write_file(path, data, len);
	free(data);
	return err;
}

int mt_pprof_write(const char *path, const struct mt_profile *p)
{
	return mt_pprof_write_opts(path, p, NULL);
}
