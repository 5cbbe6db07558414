/* SPDX-License-Identifier: MIT */
/*
 * pprof_read.c: a pprof profile to struct mt_profile (see pprof_read.h).
 *
 * Steps: read the file (capped), gunzip it if it starts with the gzip
 * magic (capped; both profile_input.h), let protobuf-c decode it through an allocator with a
 * memory budget, check every index and id, then convert.  Nothing from the
 * file is used before it has been checked.
 */
#include "pprof_read.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"
#include "itab.h"
#include "local_elf.h"
#include "pprof_cost.h"
#include "pprof_facts.h"
#include "pprof_pb.h"
#include "profile_input.h"
#include "units.h"

/* What memtrace report tried (profile_read.c asks for pprof last). */
#define NOT_A_PROFILE \
	"not a heap profile: not pprof (protobuf decoding failed, gzipped or " \
	"not), nor gperftools/tcmalloc, jemalloc heap_v2 or Go debug=1 text"

static const struct mt_pprof_limits default_limits = {
	.max_file = MT_PPROF_MAX_FILE,
	.max_proto = MT_PPROF_MAX_PROTO,
	.max_memory = MT_PPROF_MAX_MEMORY,
};

/* Where the one-line reason of a failure goes. */
struct errbuf {
	char *s;
	size_t len;
};

__attribute__((format(printf, 3, 4)))
static int fail(const struct errbuf *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (e->s && e->len) {
		va_start(ap, fmt);
		vsnprintf(e->s, e->len, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int fail_nomem(const struct errbuf *e)
{
	return fail(e, -ENOMEM, "out of memory");
}

/* ---- protobuf decoding under a memory budget ---- */

struct budget {
	size_t used, max;
	bool over, nomem;
};

union hdr {
	size_t size;
	max_align_t align;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;
	size_t left = b->max - b->used;
	union hdr *h;

	if (size > left || sizeof(*h) > left - size) {
		b->over = true;
		return NULL;
	}
	h = malloc(sizeof(*h) + size);
	if (!h) {
		b->nomem = true;
		return NULL;
	}
	h->size = size;
	b->used += sizeof(*h) + size;
	return h + 1;
}

static void budget_free(void *data, void *ptr)
{
	struct budget *b = data;
	union hdr *h;

	if (!ptr)
		return;
	h = (union hdr *)ptr - 1;
	b->used -= sizeof(*h) + h->size;
	free(h);
}

/* ---- checks ---- */

/* Reader state while converting. */
struct rd {
	const PbProfile *pb;
	const struct mt_pprof_limits *lim;
	const char *name;
	const struct errbuf *e;
	int vidx[MT_NVALUES];   /* sample_type index of each value, or -1 */
	struct mt_itab mapidx, funcidx, locidx;
	size_t *locfirst;       /* per location: 1 + offset into locframes,
				   0 until a kept sample uses it */
	uint32_t *locframes;    /* frame indices of each location, leaf first */
	size_t nlocframes, locframecap;
	struct mt_frame_vec frames;
	struct mt_itab frameidx;
	struct mt_itab procidx;
	size_t proccap;
	size_t nrefs;           /* frame references of all samples */
	uint32_t *mappid;       /* per mapping: 1 + pid of its first sample,
				   0 while no kept sample uses it */
	uint64_t *mapbias;      /* per mapping: load bias of its file here */
	int8_t *mapelf;         /* per mapping: 0 not looked at, 1 mapbias
				   is right, -1 the file is not here */
	int64_t total[MT_NVALUES];
	struct mt_profile *out;
};

static bool str_ok(const PbProfile *pb, int64_t i)
{
	return i >= 0 && (uint64_t)i < pb->n_string_table;
}

static const char *str_at(const PbProfile *pb, int64_t i)
{
	return str_ok(pb, i) ? pb->string_table[i] : "";
}

static int check_strings(const struct rd *r)
{
	const PbProfile *pb = r->pb;

	if (pb->n_string_table == 0)
		return fail(r->e, -EINVAL, "not a pprof profile: no string table");
	if (pb->string_table[0][0] != '\0')
		return fail(r->e, -EINVAL,
			    "not a pprof profile: string_table[0] is not empty");
	if (!str_ok(pb, pb->drop_frames) || !str_ok(pb, pb->keep_frames) ||
	    !str_ok(pb, pb->default_sample_type))
		return fail(r->e, -EINVAL, "profile header has an invalid string index");
	if (pb->period_type && (!str_ok(pb, pb->period_type->type) ||
				!str_ok(pb, pb->period_type->unit)))
		return fail(r->e, -EINVAL, "period type has an invalid string index");
	for (size_t i = 0; i < pb->n_comment; i++) {
		if (!str_ok(pb, pb->comment[i]))
			return fail(r->e, -EINVAL,
				    "comment %zu has an invalid string index", i);
	}
	return 0;
}

/* Map the sample types onto enum mt_value by name. */
static int check_sample_types(struct rd *r)
{
	const PbProfile *pb = r->pb;
	bool any = false;

	for (int v = 0; v < MT_NVALUES; v++)
		r->vidx[v] = -1;
	if (pb->n_sample_type > INT_MAX)
		return fail(r->e, -EINVAL, "too many sample types");
	for (size_t i = 0; i < pb->n_sample_type; i++) {
		const char *name;

		if (!str_ok(pb, pb->sample_type[i]->type) ||
		    !str_ok(pb, pb->sample_type[i]->unit))
			return fail(r->e, -EINVAL,
				    "sample type %zu has an invalid string index", i);
		name = str_at(pb, pb->sample_type[i]->type);
		for (int v = 0; v < MT_NVALUES; v++) {
			if (strcmp(name, mt_value_name((enum mt_value)v)) != 0)
				continue;
			if (r->vidx[v] >= 0)
				return fail(r->e, -EINVAL,
					    "sample type %s appears twice",
					    mt_value_name((enum mt_value)v));
			r->vidx[v] = (int)i;
			any = true;
		}
	}
	if (!any)
		return fail(r->e, -EINVAL,
			    "not a heap profile: no alloc_objects, alloc_space, "
			    "inuse_objects or inuse_space sample type");
	return 0;
}

enum kind { K_MAPPING, K_FUNCTION, K_LOCATION };

static const char *const kind_names[] = { "mapping", "function", "location" };

static uint64_t id_at(const PbProfile *pb, enum kind k, size_t i)
{
	switch (k) {
	case K_MAPPING:
		return pb->mapping[i]->id;
	case K_FUNCTION:
		return pb->function[i]->id;
	default:
		return pb->location[i]->id;
	}
}

struct id_key {
	const PbProfile *pb;
	enum kind kind;
	uint64_t id;
};

static bool id_eq(const void *ctx, uint32_t idx)
{
	const struct id_key *k = ctx;

	return id_at(k->pb, k->kind, idx) == k->id;
}

/* Index (into the message's array) of the KIND with ID; false if none. */
static bool find_id(const struct rd *r, enum kind kind,
		    const struct mt_itab *t, uint64_t id, uint32_t *idx)
{
	struct id_key k = { r->pb, kind, id };

	if (id == 0)
		return false;
	return mt_itab_find(t, mt_hash_u64(MT_HASH_SEED, id), id_eq, &k, idx);
}

/* Index the N ids of KIND in T: non-zero and unique. */
static int index_ids(struct rd *r, enum kind kind, size_t n, struct mt_itab *t)
{
	const char *what = kind_names[kind];

	if (n >= UINT32_MAX)
		return fail(r->e, -EFBIG, "too many %ss", what);
	for (size_t i = 0; i < n; i++) {
		uint64_t id = id_at(r->pb, kind, i);
		uint32_t found;

		if (id == 0)
			return fail(r->e, -EINVAL, "%s %zu has id 0", what, i);
		if (find_id(r, kind, t, id, &found))
			return fail(r->e, -EINVAL, "duplicate %s id %" PRIu64,
				    what, id);
		if (mt_itab_add(t, mt_hash_u64(MT_HASH_SEED, id), (uint32_t)i))
			return fail_nomem(r->e);
	}
	return 0;
}

static int check_mappings(struct rd *r)
{
	const PbProfile *pb = r->pb;

	for (size_t i = 0; i < pb->n_mapping; i++) {
		const PbMapping *m = pb->mapping[i];

		if (!str_ok(pb, m->filename) || !str_ok(pb, m->build_id))
			return fail(r->e, -EINVAL,
				    "mapping %" PRIu64 " has an invalid string index",
				    m->id);
	}
	return index_ids(r, K_MAPPING, pb->n_mapping, &r->mapidx);
}

static int check_functions(struct rd *r)
{
	const PbProfile *pb = r->pb;

	for (size_t i = 0; i < pb->n_function; i++) {
		const PbFunction *f = pb->function[i];

		if (!str_ok(pb, f->name) || !str_ok(pb, f->system_name) ||
		    !str_ok(pb, f->filename))
			return fail(r->e, -EINVAL,
				    "function %" PRIu64 " has an invalid string index",
				    f->id);
		if (f->start_line < 0 || f->start_line > INT_MAX)
			return fail(r->e, -EINVAL,
				    "function %" PRIu64 " has an invalid start line",
				    f->id);
	}
	return index_ids(r, K_FUNCTION, pb->n_function, &r->funcidx);
}

static int check_location(struct rd *r, const PbLocation *l)
{
	uint32_t idx;

	if (l->mapping_id &&
	    !find_id(r, K_MAPPING, &r->mapidx, l->mapping_id, &idx))
		return fail(r->e, -EINVAL,
			    "location %" PRIu64 " refers to missing mapping %" PRIu64,
			    l->id, l->mapping_id);
	for (size_t j = 0; j < l->n_line; j++) {
		const PbLine *ln = l->line[j];

		if (!find_id(r, K_FUNCTION, &r->funcidx, ln->function_id, &idx))
			return fail(r->e, -EINVAL,
				    "location %" PRIu64
				    " refers to missing function %" PRIu64,
				    l->id, ln->function_id);
		if (ln->line < 0 || ln->line > INT_MAX)
			return fail(r->e, -EINVAL,
				    "location %" PRIu64 " has an invalid line number",
				    l->id);
	}
	return 0;
}

static int check_locations(struct rd *r)
{
	const PbProfile *pb = r->pb;

	for (size_t i = 0; i < pb->n_location; i++) {
		int err = check_location(r, pb->location[i]);

		if (err)
			return err;
	}
	return index_ids(r, K_LOCATION, pb->n_location, &r->locidx);
}

/* ---- frames ---- */

/* strdup of S, or NULL for ""; false when out of memory. */
static bool dup_nonempty(const char *s, char **out)
{
	*out = NULL;
	if (!s[0])
		return true;
	*out = strdup(s);
	return *out != NULL;
}

static const PbMapping *mapping_of(const struct rd *r, const PbLocation *l)
{
	uint32_t idx;

	if (!find_id(r, K_MAPPING, &r->mapidx, l->mapping_id, &idx))
		return NULL;
	return r->pb->mapping[idx];
}

/* The return address a location's address (on the call) stands for. */
static uint64_t return_address(const PbLocation *l)
{
	return l->address && l->address < UINT64_MAX ? l->address + 1 : l->address;
}

/*
 * The load bias of mapping IDX's file, if the file is on this machine with
 * the build id the profile gives (if any): true and *BIAS.
 */
static bool local_bias(struct rd *r, uint32_t idx, uint64_t *bias)
{
	const PbMapping *m = r->pb->mapping[idx];

	if (!r->mapelf[idx]) {
		struct mt_module mod = {
			.fd = -1, .path = (char *)str_at(r->pb, m->filename),
			.text_start = m->memory_start, .text_end = m->memory_limit,
			.text_offset = m->file_offset,
		};
		const char *want = str_at(r->pb, m->build_id);

		r->mapelf[idx] = -1;
		if (mt_local_elf(&mod) == 0 &&
		    (!want[0] || strcmp(want, mod.build_id) == 0)) {
			r->mapelf[idx] = 1;
			r->mapbias[idx] = mod.bias;
		}
	}
	*bias = r->mapbias[idx];
	return r->mapelf[idx] > 0;
}

/*
 * Name of code without symbols, as resolve.c names it: "FILE+0xOFFSET"
 * (FILE: the mapping's base name; OFFSET: the address in the ELF file when
 * the file is here, else the offset in the file, which is the same for
 * position-independent code linked by GNU ld), or "[unknown]+0xADDR".
 */
static char *unresolved_name(struct rd *r, const PbLocation *l)
{
	const PbMapping *m = mapping_of(r, l);
	const char *file = m ? str_at(r->pb, m->filename) : "";
	uint64_t off = l->address, bias;
	uint32_t idx = 0;
	char *s = NULL;
	int n;

	if (!m || !file[0]) {
		n = asprintf(&s, "[unknown]+0x%" PRIx64, l->address);
	} else {
		find_id(r, K_MAPPING, &r->mapidx, l->mapping_id, &idx);
		if (m->memory_start <= l->address && l->address < m->memory_limit)
			off = local_bias(r, idx, &bias)
				      ? l->address - bias
				      : l->address - m->memory_start + m->file_offset;
		n = asprintf(&s, "%s+0x%" PRIx64, mt_path_basename(file), off);
	}
	return n < 0 ? NULL : s;
}

/* Frame of line J of location L (J == n_line: the location has no lines). */
static bool make_frame(struct rd *r, const PbLocation *l, size_t j,
		       struct mt_frame *f)
{
	const PbProfile *pb = r->pb;
	const PbMapping *m = mapping_of(r, l);
	bool ok = m ? dup_nonempty(str_at(pb, m->filename), &f->module) : true;

	f->addr = return_address(l);
	if (j < l->n_line) {
		const PbFunction *fn = NULL;
		uint32_t idx;

		if (find_id(r, K_FUNCTION, &r->funcidx, l->line[j]->function_id, &idx))
			fn = pb->function[idx];
		if (fn) {
			const char *name = str_at(pb, fn->name);

			if (!name[0])
				name = str_at(pb, fn->system_name);
			ok = ok && dup_nonempty(name, &f->function);
			ok = ok && dup_nonempty(str_at(pb, fn->filename), &f->file);
			if (fn->start_line > 0 && ok)
				ok = dup_nonempty(str_at(pb, fn->filename), &f->decl_file);
			f->decl_line = (int)fn->start_line;
		}
		f->line = (int)l->line[j]->line;
		f->inlined = j + 1 < l->n_line;
		/* Inlining is known where the mapping says it was expanded. */
		f->no_inlines = m && !m->has_inline_frames;
	}
	if (ok && !f->function) {
		ok = (f->function = unresolved_name(r, l)) != NULL;
		f->unresolved = true;
	}
	return ok;
}

struct frame_key {
	const struct rd *r;
	const struct mt_frame *f;
};

static bool frame_eq(const void *ctx, uint32_t idx)
{
	const struct frame_key *k = ctx;

	return mt_frame_same(&k->r->frames.v[idx], k->f);
}

/* Store F once (taking its strings) and give its index. */
static int frame_intern(struct rd *r, struct mt_frame *f, uint32_t *idx)
{
	struct frame_key k = { r, f };
	uint64_t h = mt_frame_hash(f);

	if (mt_itab_find(&r->frameidx, h, frame_eq, &k, idx)) {
		mt_frame_clear(f);
		return 0;
	}
	if (r->frames.n >= UINT32_MAX - 1) {
		mt_frame_clear(f);
		return fail(r->e, -EFBIG, "too many frames");
	}
	if (mt_frame_vec_push(&r->frames, f))
		return fail_nomem(r->e);
	*idx = (uint32_t)(r->frames.n - 1);
	if (mt_itab_add(&r->frameidx, h, *idx))
		return fail_nomem(r->e);
	return 0;
}

static size_t location_depth(const PbLocation *l)
{
	return l->n_line ? l->n_line : 1;
}

/* Note that PID's samples use the mapping of L (the first pid stays). */
static void use_mapping(struct rd *r, const PbLocation *l, uint32_t pid)
{
	uint32_t idx;

	if (find_id(r, K_MAPPING, &r->mapidx, l->mapping_id, &idx) &&
	    !r->mappid[idx])
		r->mappid[idx] = pid + 1;
}

/* Append the frames of location I (of a sample of PID) to r->locframes. */
static int convert_location(struct rd *r, size_t i, uint32_t pid)
{
	const PbLocation *l = r->pb->location[i];
	size_t n = location_depth(l);
	uint32_t *v = r->locframes;

	use_mapping(r, l, pid);
	if (r->nlocframes + n > r->locframecap) {
		size_t cap = r->locframecap ? r->locframecap : 64;

		while (cap < r->nlocframes + n)
			cap *= 2;
		v = reallocarray(v, cap, sizeof(*v));
		if (!v)
			return fail_nomem(r->e);
		r->locframes = v;
		r->locframecap = cap;
	}
	for (size_t j = 0; j < n; j++) {
		struct mt_frame f = { 0 };
		int err;

		if (!make_frame(r, l, l->n_line ? j : 0, &f)) {
			mt_frame_clear(&f);
			return fail_nomem(r->e);
		}
		err = frame_intern(r, &f, &v[r->nlocframes + j]);
		if (err)
			return err;
	}
	r->locfirst[i] = r->nlocframes + 1;
	r->nlocframes += n;
	return 0;
}

/* The frame indices of location I (converted on first use), or NULL. */
static const uint32_t *location_frames(struct rd *r, size_t i, uint32_t pid,
				       int *err)
{
	*err = 0;
	if (!r->locfirst[i])
		*err = convert_location(r, i, pid);
	if (*err || !r->locframes)
		return NULL;
	return r->locframes + r->locfirst[i] - 1;
}

/* ---- samples ---- */

struct sample_proc {
	uint32_t pid;
	const char *comm;  /* "" if none */
};

static int sample_labels(const struct rd *r, size_t si, const PbSample *s,
			 struct sample_proc *sp)
{
	const PbProfile *pb = r->pb;
	bool have_pid = false;

	sp->pid = 0;
	sp->comm = "";
	for (size_t i = 0; i < s->n_label; i++) {
		const PbLabel *l = s->label[i];
		const char *key;

		if (!str_ok(pb, l->key) || !str_ok(pb, l->str) ||
		    !str_ok(pb, l->num_unit))
			return fail(r->e, -EINVAL,
				    "sample %zu has a label with an invalid string index",
				    si);
		key = str_at(pb, l->key);
		if (!have_pid && l->str == 0 && strcmp(key, "pid") == 0) {
			if (l->num < 0 || l->num > UINT32_MAX)
				return fail(r->e, -EINVAL,
					    "sample %zu has an invalid pid label", si);
			sp->pid = (uint32_t)l->num;
			have_pid = true;
		} else if (!sp->comm[0] && l->str && strcmp(key, "comm") == 0) {
			sp->comm = str_at(pb, l->str);
		}
	}
	return 0;
}

/* Number of frames of sample SI (checking its location ids). */
static int sample_depth(struct rd *r, size_t si, const PbSample *s,
			size_t *depth)
{
	*depth = 0;
	for (size_t i = 0; i < s->n_location_id; i++) {
		uint32_t idx;

		if (!find_id(r, K_LOCATION, &r->locidx, s->location_id[i], &idx))
			return fail(r->e, -EINVAL,
				    "sample %zu refers to missing location %" PRIu64,
				    si, s->location_id[i]);
		*depth += location_depth(r->pb->location[idx]);
		if (*depth > MT_PPROF_MAX_DEPTH)
			return fail(r->e, -EFBIG,
				    "sample %zu has more than %d frames", si,
				    MT_PPROF_MAX_DEPTH);
	}
	r->nrefs += *depth;
	if (r->nrefs > r->lim->max_memory / sizeof(uint32_t))
		return fail(r->e, -EFBIG, "samples have too many frames");
	return 0;
}

/* The frames of sample S of PID (its location ids were checked) into OUT. */
static int fill_frames(struct rd *r, const PbSample *s, uint32_t pid,
		       uint32_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_location_id; i++) {
		const uint32_t *frames;
		uint32_t idx = 0;
		int err;

		find_id(r, K_LOCATION, &r->locidx, s->location_id[i], &idx);
		frames = location_frames(r, idx, pid, &err);
		if (!frames)
			return err ? err : fail_nomem(r->e);
		memcpy(out + n, frames,
		       location_depth(r->pb->location[idx]) * sizeof(*out));
		n += location_depth(r->pb->location[idx]);
	}
	return 0;
}

static int add_proc(struct rd *r, const struct sample_proc *sp)
{
	struct mt_profile *p = r->out;
	struct mt_pid_key k = { p->procs, sp->pid };
	uint64_t h = mt_hash_u64(MT_HASH_SEED, sp->pid);
	struct mt_process *pr;
	uint32_t idx;

	if (mt_itab_find(&r->procidx, h, mt_pid_key_eq, &k, &idx)) {
		pr = &p->procs[idx];
	} else {
		if (p->nprocs == r->proccap) {
			size_t cap = r->proccap ? r->proccap * 2 : 8;
			struct mt_process *v = reallocarray(p->procs, cap, sizeof(*v));

			if (!v)
				return fail_nomem(r->e);
			p->procs = v;
			r->proccap = cap;
		}
		if (mt_itab_add(&r->procidx, h, (uint32_t)p->nprocs))
			return fail_nomem(r->e);
		pr = &p->procs[p->nprocs++];
		memset(pr, 0, sizeof(*pr));
		pr->pid = sp->pid;
	}
	if (!pr->comm[0] && sp->comm[0])
		snprintf(pr->comm, sizeof(pr->comm), "%s", sp->comm);
	return 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;

	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return s;
}

/* The values of sample SI into *OUT; false if all four are zero. */
static bool sample_values(const struct rd *r, const PbSample *s,
			  struct mt_sample *out)
{
	bool any = false;

	for (int v = 0; v < MT_NVALUES; v++) {
		out->v[v] = r->vidx[v] >= 0 ? s->value[r->vidx[v]] : 0;
		any = any || out->v[v] != 0;
	}
	return any;
}

static int convert_sample(struct rd *r, size_t si)
{
	const PbSample *s = r->pb->sample[si];
	struct mt_sample *out = &r->out->samples[r->out->nsamples];
	struct sample_proc sp = { 0, "" };
	size_t depth = 0;
	int err;

	if (s->n_value != r->pb->n_sample_type)
		return fail(r->e, -EINVAL,
			    "sample %zu has %zu values for %zu sample types", si,
			    s->n_value, r->pb->n_sample_type);
	memset(out, 0, sizeof(*out));
	err = sample_labels(r, si, s, &sp);
	if (!err)
		err = sample_depth(r, si, s, &depth);
	if (err || !sample_values(r, s, out))
		return err;
	if (depth) {
		out->frames = calloc(depth, sizeof(*out->frames));
		if (!out->frames)
			return fail_nomem(r->e);
		err = fill_frames(r, s, sp.pid, out->frames);
		if (err) {
			free(out->frames);
			out->frames = NULL;
			return err;
		}
	}
	out->nframes = depth;
	out->pid = sp.pid;
	r->out->nsamples++;
	for (int v = 0; v < MT_NVALUES; v++)
		r->total[v] = sat_add(r->total[v], out->v[v]);
	return add_proc(r, &sp);
}

/* The samples; only the locations they use become frames. */
static int convert_samples(struct rd *r)
{
	size_t n = r->pb->n_sample;

	r->out->samples = calloc(n ? n : 1, sizeof(*r->out->samples));
	r->locfirst = calloc(r->pb->n_location ? r->pb->n_location : 1,
			     sizeof(*r->locfirst));
	r->mappid = calloc(r->pb->n_mapping ? r->pb->n_mapping : 1,
			   sizeof(*r->mappid));
	r->mapbias = calloc(r->pb->n_mapping ? r->pb->n_mapping : 1,
			    sizeof(*r->mapbias));
	r->mapelf = calloc(r->pb->n_mapping ? r->pb->n_mapping : 1,
			   sizeof(*r->mapelf));
	if (!r->out->samples || !r->locfirst || !r->mappid || !r->mapbias ||
	    !r->mapelf)
		return fail_nomem(r->e);
	for (size_t i = 0; i < n; i++) {
		int err = convert_sample(r, i);

		if (err)
			return err;
	}
	r->out->frames = r->frames.v;
	r->out->nframes = r->frames.n;
	memset(&r->frames, 0, sizeof(r->frames));
	return 0;
}

/* ---- summary ---- */

static uint64_t nonneg(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

static uint64_t nonneg_diff(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return a > b ? UINT64_MAX : 0;
	return nonneg(d);
}

static void set_target(struct rd *r)
{
	struct mt_summary *sum = &r->out->sum;
	const struct mt_process *pr = r->out->procs;

	if (r->out->nprocs != 1 || (!pr->pid && !pr->comm[0]))
		snprintf(sum->target, sizeof(sum->target), "profile %s", r->name);
	else if (pr->pid && pr->comm[0])
		snprintf(sum->target, sizeof(sum->target), "pid %" PRIu32 " (%s)",
			 pr->pid, pr->comm);
	else if (pr->pid)
		snprintf(sum->target, sizeof(sum->target), "pid %" PRIu32, pr->pid);
	else
		snprintf(sum->target, sizeof(sum->target), "%s", pr->comm);
}

/* The mappings the kept samples use, with the pid of the first of them. */
static int set_maps(struct rd *r)
{
	const PbProfile *pb = r->pb;
	struct mt_profile *p = r->out;
	size_t n = 0;

	for (size_t i = 0; i < pb->n_mapping; i++)
		n += r->mappid[i] && str_at(pb, pb->mapping[i]->filename)[0];
	if (!n)
		return 0;
	p->maps = calloc(n, sizeof(*p->maps));
	if (!p->maps)
		return fail_nomem(r->e);
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const PbMapping *m = pb->mapping[i];
		struct mt_map *o = &p->maps[p->nmaps];
		const char *file = str_at(pb, m->filename);

		if (!r->mappid[i] || !file[0])
			continue;
		o->path = strdup(file);
		if (!o->path)
			return fail_nomem(r->e);
		o->pid = r->mappid[i] - 1;
		o->start = m->memory_start;
		o->limit = m->memory_limit;
		o->offset = m->file_offset;
		snprintf(o->build_id, sizeof(o->build_id), "%s",
			 str_at(pb, m->build_id));
		p->nmaps++;
	}
	return 0;
}

/*
 * A period in bytes above 1 means a sampled profile (memtrace -s, Go's
 * heap profiles, ...) whose values are estimates already.
 */
static void set_sampling(struct rd *r)
{
	const PbValueType *pt = r->pb->period_type;

	if (!pt || r->pb->period <= 1 ||
	    strcmp(str_at(r->pb, pt->type), "space") != 0 ||
	    strcmp(str_at(r->pb, pt->unit), "bytes") != 0)
		return;
	r->out->sum.sample_bytes = (uint64_t)r->pb->period;
}

static int set_summary(struct rd *r)
{
	struct mt_summary *sum = &r->out->sum;
	const int64_t *t = r->total;
	bool counters;

	set_target(r);
	/* protobuf-c only reads the table. */
	mt_facts_read((const char *const *)r->pb->string_table,
		      r->pb->n_string_table, sum, &counters);
	set_sampling(r);
	/* A window's profile (pprof_write.c): its duration, after its start. */
	if (r->pb->duration_nanos > 0)
		sum->duration_s = (double)r->pb->duration_nanos / 1e9 +
				  (sum->delta ? sum->delta_since_s : 0);
	else
		sum->missing |= MT_FACT_DURATION;
	if (counters)
		return 0;
	sum->counters[MT_CNT_ALLOC_OBJECTS] = nonneg(t[MT_ALLOC_OBJECTS]);
	sum->counters[MT_CNT_ALLOC_BYTES] = nonneg(t[MT_ALLOC_SPACE]);
	sum->counters[MT_CNT_FREE_OBJECTS] =
		nonneg_diff(t[MT_ALLOC_OBJECTS], t[MT_INUSE_OBJECTS]);
	sum->counters[MT_CNT_FREE_BYTES] =
		nonneg_diff(t[MT_ALLOC_SPACE], t[MT_INUSE_SPACE]);
	return 0;
}

/* ---- putting it together ---- */

static int convert(struct rd *r)
{
	int err = check_strings(r);

	if (!err)
		err = check_sample_types(r);
	if (!err)
		err = check_mappings(r);
	if (!err)
		err = check_functions(r);
	if (!err)
		err = check_locations(r);
	if (!err)
		err = convert_samples(r);
	if (!err)
		err = set_maps(r);
	if (!err)
		err = set_summary(r);
	return err;
}

static void rd_free(struct rd *r)
{
	mt_itab_free(&r->mapidx);
	mt_itab_free(&r->funcidx);
	mt_itab_free(&r->locidx);
	mt_itab_free(&r->frameidx);
	mt_itab_free(&r->procidx);
	mt_frame_vec_free(&r->frames);
	free(r->locfirst);
	free(r->locframes);
	free(r->mappid);
	free(r->mapbias);
	free(r->mapelf);
}

/* BASE + RATIO x LEN, saturating, at most CAP. */
static size_t scaled(size_t base, size_t ratio, size_t len, size_t cap)
{
	size_t v;

	if (__builtin_mul_overflow(len, ratio, &v) ||
	    __builtin_add_overflow(v, base, &v))
		v = SIZE_MAX;
	return v < cap ? v : cap;
}

/* What decoding LEN bytes of protobuf may use (pprof_read.h). */
static size_t decode_budget(const struct mt_pprof_limits *lim, size_t len)
{
	if (lim->budget)
		return lim->budget < lim->max_memory ? lim->budget : lim->max_memory;
	return scaled(MT_PPROF_DECODE_BASE, MT_PPROF_DECODE_RATIO, len,
		      lim->max_memory);
}

static int over_budget(const struct errbuf *e, const struct mt_pprof_limits *lim,
		       size_t max, size_t len, uint64_t need)
{
	if (lim->budget || max == lim->max_memory)
		return fail(e, -EFBIG,
			    "decoding the profile needs more than %zu bytes%s",
			    max, lim->budget ? " (--max-memory)" : "");
	return fail(e, -EFBIG,
		    "decoding the profile needs more than %zu bytes (about %" PRIu64
		    "), its budget (64 MiB + %d x its %zu bytes of protobuf); "
		    "--max-memory raises it",
		    max, need, MT_PPROF_DECODE_RATIO, len);
}

static int decode(const uint8_t *data, size_t len, const char *name,
		  const struct mt_pprof_limits *lim, struct mt_profile *p,
		  const struct errbuf *e)
{
	struct budget b = { .max = decode_budget(lim, len) };
	ProtobufCAllocator alloc = { budget_alloc, budget_free, &b };
	struct rd r = { .lim = lim, .name = name, .e = e, .out = p };
	PbProfile *pb;
	uint64_t need;
	int err;

	if (len > lim->max_proto)
		return fail(e, -EFBIG, "profile is larger than %zu bytes",
			    lim->max_proto);
	/* What protobuf-c would allocate, and one mt_sample per sample:
	 * rejected before anything is decoded. */
	err = mt_pprof_cost(data, len, sizeof(union hdr), sizeof(struct mt_sample),
			    b.max, &need);
	if (err)
		return fail(e, -EINVAL, NOT_A_PROFILE);
	if (need > b.max)
		return over_budget(e, lim, b.max, len, need);
	pb = perftools__profiles__profile__unpack(&alloc, len, data);
	if (!pb && b.over)
		return over_budget(e, lim, b.max, len, need);
	if (!pb)
		return b.nomem ? fail_nomem(e)
			       : fail(e, -EINVAL,
				      NOT_A_PROFILE);
	r.pb = pb;
	err = convert(&r);
	rd_free(&r);
	perftools__profiles__profile__free_unpacked(pb, &alloc);
	return err;
}

/* LEN bytes of protobuf (inflated, if they were gzip) at DATA into P. */
static int parse_plain(const void *data, size_t len, const char *name,
		       const struct mt_pprof_limits *lim, struct mt_profile *p,
		       const struct errbuf *e)
{
	int ret;

	if (e->s && e->len)
		e->s[0] = '\0';
	if (!p)
		return fail(e, -EINVAL, "no profile to read into");
	memset(p, 0, sizeof(*p));
	if (!data || len == 0)
		return fail(e, -EINVAL, "empty file");
	ret = decode(data, len, name ? name : "?", lim ? lim : &default_limits, p, e);
	if (ret)
		mt_profile_free(p);
	return ret;
}

int mt_pprof_decode(const void *data, size_t len, const char *name,
		    const struct mt_pprof_limits *lim, struct mt_profile *p,
		    char *err, size_t errlen)
{
	struct errbuf e = { err, errlen };

	return parse_plain(data, len, name, lim, p, &e);
}

int mt_pprof_parse(const void *data, size_t len, const char *name,
		   const struct mt_pprof_limits *lim, struct mt_profile *p,
		   char *err, size_t errlen)
{
	struct errbuf e = { err, errlen };
	struct mt_input raw;
	int ret;

	if (!lim)
		lim = &default_limits;
	if (p)
		memset(p, 0, sizeof(*p));
	if (len > lim->max_file)
		return fail(&e, -EFBIG, "file is larger than %zu bytes",
			    lim->max_file);
	if (!data || !mt_input_is_gzip(data, len))
		return parse_plain(data, len, name, lim, p, &e);
	ret = mt_input_gunzip(data, len, lim, &raw, err, errlen);
	if (!ret)
		ret = parse_plain(raw.data, raw.len, name, lim, p, &e);
	mt_input_close(&raw);
	return ret;
}

int mt_pprof_read_limits(const char *path, const struct mt_pprof_limits *lim,
			 struct mt_profile *p, char *err, size_t errlen)
{
	struct errbuf e = { err, errlen };
	struct mt_input in;
	int ret;

	if (p)
		memset(p, 0, sizeof(*p));
	if (!path || !p)
		return fail(&e, -EINVAL, "no file or profile");
	if (!lim)
		lim = &default_limits;
	ret = mt_input_open(&in, path, lim, err, errlen);
	if (ret)
		return ret;
	ret = mt_input_read(&in, lim, err, errlen);
	if (!ret)
		ret = parse_plain(in.data, in.len, path, lim, p, &e);
	mt_input_close(&in);
	return ret;
}

int mt_pprof_read(const char *path, struct mt_profile *p, char *err,
		  size_t errlen)
{
	return mt_pprof_read_limits(path, NULL, p, err, errlen);
}
