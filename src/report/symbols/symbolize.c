/* SPDX-License-Identifier: MIT */
/*
 * symbolize.c: raw stacks -> samples of deduplicated source frames.
 *
 * An address inside a file is looked up by (file, address relative to its
 * load bias): each file has one libdwfl session, at its ELF addresses,
 * and the frames its addresses expand to are cached, shared by every
 * process that maps the file and every report (file_addrs.h).  A process's
 * dlopen adds a file; no session is made again.  Frames are interned in a
 * hash table so that equal frames share one index.  An address in none of
 * the process's files (JIT-compiled code) is named by the process's perf
 * map if it has one (perf_map.h), read again for each report if it
 * changed; such addresses are cached per (pid, address) while the
 * process's files stay the same.
 */
#include "symbolize.h"
#include "array_grow.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "file_addrs.h"
#include "frame.h"
#include "itab.h"
#include "perf_map.h"
#include "resolve.h"

#define UNKNOWN_STACK "[unknown stack]"

/* An address of a process in none of its files (JIT code) and its frames
 * (in the pool). */
struct addr_entry {
	uint32_t pid;
	uint64_t ip;
	size_t first, count;
};

/* The key of the address cache. */
static uint64_t addr_hash(uint32_t pid, uint64_t ip)
{
	return mt_hash_u64(mt_hash_u64(MT_HASH_SEED, pid), ip);
}

/* What is kept of a process: its perf map, and what its files were. */
struct proc_state {
	uint32_t pid;
	uint64_t files;      /* hash of its modules' ranges and files */
	struct mt_perf_map jit;   /* its perf map, as last read */
	size_t jit_report;        /* the report that last looked at it */
	bool jit_gone;            /* then, the process had exited */
};

/*
 * What symbolising keeps from one profile to the next (struct
 * mt_symcache): the files with their sessions, the frames found so far
 * (interned), the frames each address of a file expands to and those of
 * the addresses outside files, per process.
 */
struct mt_symcache {
	pthread_mutex_t lock;      /* held by mt_symbolize_cached */
	struct proc_state *procs;
	size_t nprocs, procs_cap;
	struct mt_itab proc_tab;   /* pid -> procs */
	struct mt_frame *frames;
	size_t nframes, frames_cap;
	struct mt_itab frame_tab;  /* over frames */
	struct mt_itab addr_tab;   /* over addrs (outside files) */
	struct addr_entry *addrs;
	size_t naddrs, addrs_cap;
	uint32_t *pool;            /* frame indices of cached addresses */
	size_t npool, pool_cap;
	struct mt_file_addrs files; /* (file, relative address) -> pool */
	struct mt_symcache_stats stats;
	size_t reports;            /* mt_symbolize_cached calls so far */
};

struct symbolizer {
	const struct mt_raw_profile *raw;
	struct mt_profile *out;
	struct mt_symcache *c;
	size_t samples_cap;

	size_t *entry;       /* per raw->procs entry: its c->procs index */
	size_t *by_pid;      /* indices of raw->procs sorted by pid */
	struct span *spans;  /* every process's modules, by process, start */
	size_t *first_span;  /* per raw->procs entry: its first span, +1: end */

	struct mt_frame_vec resolved;  /* scratch for mt_resolve_ip */
	uint32_t *stack;               /* scratch: frames of one sample */
	size_t stack_cap;
};

/*
 * A module of a process as this profile's lookups see it: its range, its
 * load bias and its file in the cache's files (NO_FILE: none, it has no
 * path).  A process whose modules overlap is looked up in its modules'
 * order instead, by what each file holds (OVERLAP set on its first span).
 */
struct span {
	uint64_t start, end, bias;
	uint32_t file;
	bool overlap;
	const struct mt_module *m;
};

#define NO_FILE UINT32_MAX

/* --- processes ---------------------------------------------------------- */

static int cmp_proc_pid(const void *a, const void *b, void *ctx)
{
	const struct mt_process *procs = ctx;
	uint32_t pa = procs[*(const size_t *)a].pid;
	uint32_t pb = procs[*(const size_t *)b].pid;

	return (pa > pb) - (pa < pb);
}

/*
 * What a process's addresses outside its files are cached under: its
 * modules' ranges and files (a dlopen, or another process with its pid,
 * changes it).
 */
static uint64_t files_hash(const struct mt_process *p)
{
	uint64_t h = mt_hash_u64(MT_HASH_SEED, p->nmods);

	for (size_t i = 0; p->mods && i < p->nmods; i++) {
		const struct mt_module *m = &p->mods[i];

		h = mt_hash_u64(h, m->start);
		h = mt_hash_u64(h, m->end);
		h = mt_hash_u64(h, m->bias);
		h = mt_hash_u64(h, m->dev);
		h = mt_hash_u64(h, m->ino);
		h = mt_hash_str(h, m->path ? m->path : "");
	}
	return h;
}

struct pid_key {
	const struct proc_state *procs;
	uint32_t pid;
};

static bool pid_eq(const void *ctx, uint32_t idx)
{
	const struct pid_key *k = ctx;

	return k->procs[idx].pid == k->pid;
}

/* Rebuild the address cache without process PID's addresses. */
static int forget_addrs(struct mt_symcache *c, uint32_t pid)
{
	struct mt_itab tab = { 0 };
	size_t out = 0;
	int err = 0;

	for (size_t i = 0; i < c->naddrs && !err; i++) {
		if (c->addrs[i].pid == pid)
			continue;
		c->addrs[out] = c->addrs[i];
		err = mt_itab_add(&tab, addr_hash(c->addrs[out].pid,
						  c->addrs[out].ip),
				  (uint32_t)out);
		out++;
	}
	if (err) {
		mt_itab_free(&tab);
		return err;
	}
	mt_itab_free(&c->addr_tab);
	c->addr_tab = tab;
	c->naddrs = out;
	return 0;
}

/* The cache entry of process P, made or renewed (its files changed). */
static int proc_entry(struct mt_symcache *c, const struct mt_process *p,
		      size_t *idx)
{
	struct pid_key k = { c->procs, p->pid };
	uint64_t files = files_hash(p);
	uint32_t i;
	int err;

	if (mt_itab_find(&c->proc_tab, p->pid, pid_eq, &k, &i)) {
		*idx = i;
		if (c->procs[i].files == files)
			return 0;
		/* New files (a dlopen), or another process with its pid. */
		c->procs[i].files = files;
		return forget_addrs(c, p->pid);
	}
	err = mt_reserve(&c->procs, &c->procs_cap, c->nprocs + 1,
		      sizeof(*c->procs));
	if (!err)
		err = mt_itab_add(&c->proc_tab, p->pid, (uint32_t)c->nprocs);
	if (err)
		return err;
	c->procs[c->nprocs] = (struct proc_state){ .pid = p->pid, .files = files };
	*idx = c->nprocs++;
	return 0;
}

static int cmp_span_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_span_module(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->m > y->m) - (x->m < y->m);
}

/*
 * The spans of raw->procs[I] from *N on (*N is moved past them), each
 * module's file found, or added, in the cache's files.
 */
static int add_spans(struct symbolizer *s, size_t i, size_t *n)
{
	const struct mt_process *p = &s->raw->procs[i];
	struct span *v = s->spans + *n;
	size_t k = 0;
	uint64_t end = 0;
	bool overlap = false;
	int err = 0;

	for (size_t j = 0; p->mods && j < p->nmods && !err; j++) {
		const struct mt_module *m = &p->mods[j];
		struct mt_sym_file key;

		v[k] = (struct span){ .start = m->start, .end = m->end,
				      .bias = m->bias, .file = NO_FILE, .m = m };
		if (mt_sym_file_of(m, &key) == 0)
			err = mt_file_addrs_file(&s->c->files, &key, &v[k].file);
		k++;
	}
	qsort(v, k, sizeof(*v), cmp_span_start);
	for (size_t j = 0; j < k; j++) {
		overlap |= j && v[j].start < end;
		if (v[j].end > end)
			end = v[j].end;
	}
	/* Overlapping modules (a file's range spans another's): looked up
	 * in P's order, by what their files hold (overlapping_at). */
	if (overlap) {
		qsort(v, k, sizeof(*v), cmp_span_module);
		v[0].overlap = true;
	}
	*n += k;
	return err;
}

static int index_procs(struct symbolizer *s)
{
	size_t n = s->raw->nprocs, nspans = 0;
	int err = 0;

	if (n == 0 || !s->raw->procs)
		return 0;
	s->entry = calloc(n, sizeof(*s->entry));
	s->by_pid = calloc(n, sizeof(*s->by_pid));
	s->first_span = calloc(n + 1, sizeof(*s->first_span));
	for (size_t i = 0; i < n; i++)
		nspans += s->raw->procs[i].mods ? s->raw->procs[i].nmods : 0;
	s->spans = calloc(nspans ? nspans : 1, sizeof(*s->spans));
	if (!s->entry || !s->by_pid || !s->first_span || !s->spans)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s->by_pid[i] = i;
	qsort_r(s->by_pid, n, sizeof(*s->by_pid), cmp_proc_pid,
		s->raw->procs);
	/* A pid listed twice (system-wide: reused) keeps its last entry's
	 * files, as find_proc finds that one. */
	for (size_t i = 0; i < n && !err; i++)
		err = proc_entry(s->c, &s->raw->procs[s->by_pid[i]],
				 &s->entry[s->by_pid[i]]);
	nspans = 0;
	for (size_t i = 0; i < n && !err; i++) {
		s->first_span[i] = nspans;
		err = add_spans(s, i, &nspans);
	}
	s->first_span[n] = nspans;
	return err;
}

/*
 * True when the file of span SP has code at PC (a run-time address): its
 * session has a module there.  Opens the session.
 */
static int file_has(struct symbolizer *s, const struct span *sp, uint64_t pc,
		    bool *has)
{
	Dwfl *dwfl;
	int err = mt_file_addrs_dwfl(&s->c->files, sp->file, sp->m, &dwfl);

	*has = !err && dwfl_addrmodule(dwfl, pc - sp->bias) != NULL;
	return err;
}

/*
 * Of overlapping spans V[0..N), the one holding PC: the first (in the
 * process's order) whose file has code there, as libdwfl would find it,
 * else the first holding PC at all, else NULL.
 */
static int overlapping_at(struct symbolizer *s, const struct span *v, size_t n,
			  uint64_t pc, const struct span **out)
{
	int err = 0;

	*out = NULL;
	for (size_t j = 0; j < n && !err; j++) {
		bool has = false;

		if (pc < v[j].start || pc >= v[j].end)
			continue;
		if (!*out)
			*out = &v[j];
		if (v[j].file != NO_FILE)
			err = file_has(s, &v[j], pc, &has);
		if (has) {
			*out = &v[j];
			break;
		}
	}
	return err;
}

/* The span of raw->procs[I] holding PC in *OUT, or NULL.  0 or -ENOMEM. */
static int span_at(struct symbolizer *s, size_t i, uint64_t pc,
		   const struct span **out)
{
	const struct span *v = s->spans + s->first_span[i];
	size_t lo = 0, hi = s->first_span[i + 1] - s->first_span[i];

	if (hi && v[0].overlap)
		return overlapping_at(s, v, hi, pc, out);
	/* The last span starting at or before PC. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	*out = lo && pc < v[lo - 1].end ? &v[lo - 1] : NULL;
	return 0;
}

/* Index into raw->procs of process PID, or -1. */
static ptrdiff_t find_proc(const struct symbolizer *s, uint32_t pid)
{
	size_t lo = 0, hi = s->by_pid ? s->raw->nprocs : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t p = s->raw->procs[s->by_pid[mid]].pid;

		if (p == pid)
			return (ptrdiff_t)s->by_pid[mid];
		if (p < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int copy_procs(struct symbolizer *s)
{
	const struct mt_raw_profile *raw = s->raw;

	if (raw->nprocs == 0 || !raw->procs)
		return 0;
	s->out->procs = calloc(raw->nprocs, sizeof(*s->out->procs));
	if (!s->out->procs)
		return -ENOMEM;
	s->out->nprocs = raw->nprocs;
	for (size_t i = 0; i < raw->nprocs; i++) {
		s->out->procs[i].pid = raw->procs[i].pid;
		memcpy(s->out->procs[i].comm, raw->procs[i].comm,
		       sizeof(s->out->procs[i].comm));
		s->out->procs[i].comm[sizeof(s->out->procs[i].comm) - 1] = '\0';
	}
	return 0;
}

/* The files each process mapped, as the pprof writer describes them. */
static int copy_maps(struct symbolizer *s)
{
	const struct mt_raw_profile *raw = s->raw;
	size_t n = 0;

	for (size_t i = 0; raw->procs && i < raw->nprocs; i++)
		n += raw->procs[i].mods ? raw->procs[i].nmods : 0;
	if (n == 0)
		return 0;
	s->out->maps = calloc(n, sizeof(*s->out->maps));
	if (!s->out->maps)
		return -ENOMEM;
	for (size_t i = 0; i < raw->nprocs; i++) {
		const struct mt_process *pr = &raw->procs[i];

		for (size_t j = 0; pr->mods && j < pr->nmods; j++) {
			const struct mt_module *m = &pr->mods[j];
			struct mt_map *o = &s->out->maps[s->out->nmaps];

			if (!m->path)
				continue;
			o->path = strdup(m->path);
			if (!o->path)
				return -ENOMEM;
			o->pid = pr->pid;
			o->start = m->text_start;
			o->limit = m->text_end;
			o->offset = m->text_offset;
			memcpy(o->build_id, m->build_id, sizeof(o->build_id));
			o->build_id[sizeof(o->build_id) - 1] = '\0';
			s->out->nmaps++;
		}
	}
	return 0;
}

/* --- frames ------------------------------------------------------------- */

/*
 * Store F once in out->frames (taking its strings, which are freed if an
 * equal frame exists) and set *IDX to its index.
 */
static int intern_frame(struct symbolizer *s, struct mt_frame *f,
			uint32_t *idx)
{
	struct mt_symcache *c = s->c;
	uint64_t h = mt_frame_hash(f);
	struct mt_frame_key k = { c->frames, f };

	if (mt_itab_find(&c->frame_tab, h, mt_frame_key_eq, &k, idx)) {
		mt_frame_clear(f);
		return 0;
	}
	int err = c->nframes >= UINT32_MAX - 1 ? -EOVERFLOW : 0;

	if (!err)
		err = mt_reserve(&c->frames, &c->frames_cap, c->nframes + 1,
			      sizeof(*c->frames));
	if (!err)
		err = mt_itab_add(&c->frame_tab, h, (uint32_t)c->nframes);
	if (err) {
		mt_frame_clear(f);
		return err;
	}
	*idx = (uint32_t)c->nframes;
	c->frames[c->nframes++] = *f;
	memset(f, 0, sizeof(*f));
	return 0;
}

/* --- address cache ------------------------------------------------------ */

struct addr_key {
	const struct addr_entry *addrs;
	uint32_t pid;
	uint64_t ip;
};

static bool addr_eq(const void *ctx, uint32_t idx)
{
	const struct addr_key *k = ctx;

	return k->addrs[idx].pid == k->pid && k->addrs[idx].ip == k->ip;
}

/* Add the cache entry of (PID, IP): the frames at FIRST, COUNT in the pool. */
static int add_addr(struct mt_symcache *c, uint32_t pid, uint64_t ip,
		    size_t first, size_t count, struct addr_entry **entry)
{
	int err = mt_reserve(&c->addrs, &c->addrs_cap, c->naddrs + 1,
			  sizeof(*c->addrs));

	if (!err && c->naddrs >= UINT32_MAX - 1)
		err = -EOVERFLOW;
	if (!err)
		err = mt_itab_add(&c->addr_tab, addr_hash(pid, ip),
				  (uint32_t)c->naddrs);
	if (err)
		return err;
	*entry = &c->addrs[c->naddrs++];
	**entry = (struct addr_entry){
		.pid = pid, .ip = ip, .first = first, .count = count,
	};
	return 0;
}

/*
 * The frame of IP from the perf map of raw->procs[I] (JIT code), appended
 * to OUT if the map names it.  The map is read (again, if it changed) once
 * a report; once the process is gone, the map kept at its exit is used.
 */
static int jit_frame(struct symbolizer *s, size_t i, uint64_t ip,
		     struct mt_frame_vec *out)
{
	struct proc_state *e = &s->c->procs[s->entry[i]];
	const struct mt_perf_map *map = &e->jit;
	const struct mt_perf_sym *sym;

	if (e->jit_report != s->c->reports) {
		int err = mt_perf_map_load(&e->jit, e->pid);

		e->jit_report = s->c->reports;
		e->jit_gone = err == -ESRCH;
		if (err == -ENOMEM)
			return err;
		if (err == -ENOENT)
			mt_perf_map_free(&e->jit);
	}
	if (e->jit_gone)
		map = mt_perf_map_kept(e->pid);
	sym = map ? mt_perf_map_find(map, ip - 1) : NULL;
	if (!sym)
		return 0;
	struct mt_frame f = { .addr = ip, .no_inlines = true };

	f.function = strdup(sym->name);
	if (!f.function)
		return -ENOMEM;
	return mt_frame_vec_push(out, &f);
}

/* Intern s->resolved's frames at the end of the pool: *FIRST, *COUNT. */
static int pool_resolved(struct symbolizer *s, size_t *first, size_t *count)
{
	struct mt_symcache *c = s->c;
	int err = mt_reserve(&c->pool, &c->pool_cap, c->npool + s->resolved.n,
			     sizeof(*c->pool));

	*first = c->npool;
	/* Interning takes each frame's strings; the vector is then emptied. */
	for (size_t i = 0; !err && i < s->resolved.n; i++)
		err = intern_frame(s, &s->resolved.v[i], &c->pool[c->npool++]);
	*count = c->npool - *first;
	return err;
}

/*
 * Resolve IP, in span SP of a process, with its file's session into the
 * cache of the file's addresses: *FIRST, *COUNT.
 */
static int resolve_in_file(struct symbolizer *s, const struct span *sp,
			   uint64_t ip, size_t *first, size_t *count)
{
	struct mt_symcache *c = s->c;
	Dwfl *dwfl;
	int err = mt_file_addrs_dwfl(&c->files, sp->file, sp->m, &dwfl);

	c->stats.resolutions++;
	if (!err)
		err = mt_resolve_ip(dwfl, sp->m, ip, &s->resolved);
	if (!err)
		err = pool_resolved(s, first, count);
	if (!err)
		err = mt_file_addrs_add(&c->files, sp->file, ip - sp->bias,
					*first, *count);
	mt_frame_vec_clear(&s->resolved);
	return err;
}

/*
 * Resolve IP of process PROC (index into raw->procs or -1), in none of its
 * files' (SP: a module without a file, or NULL), into the cache of
 * (PID, IP): its perf map's name, else "[unknown]".
 */
static int resolve_outside(struct symbolizer *s, ptrdiff_t proc,
			   const struct span *sp, uint32_t pid, uint64_t ip,
			   size_t *first, size_t *count)
{
	struct addr_entry *e;
	int err = 0;

	s->c->stats.resolutions++;
	if (proc >= 0 && !sp && ip)
		err = jit_frame(s, (size_t)proc, ip, &s->resolved);
	if (!err && s->resolved.n == 0)
		err = mt_resolve_ip(NULL, sp ? sp->m : NULL, ip, &s->resolved);
	if (!err)
		err = pool_resolved(s, first, count);
	if (!err)
		err = add_addr(s->c, pid, ip, *first, *count, &e);
	mt_frame_vec_clear(&s->resolved);
	return err;
}

/* The cached frames of (PID, IP), resolving them on first use. */
static int lookup_addr(struct symbolizer *s, ptrdiff_t proc, uint32_t pid,
		       uint64_t ip, size_t *first, size_t *count)
{
	const struct span *sp = NULL;
	struct addr_key k = { s->c->addrs, pid, ip };
	uint32_t idx;
	int err = proc >= 0 && ip ? span_at(s, (size_t)proc, ip - 1, &sp) : 0;

	if (err)
		return err;
	if (sp && sp->file != NO_FILE) {
		if (mt_file_addrs_find(&s->c->files, sp->file, ip - sp->bias,
				       first, count))
			return 0;
		return resolve_in_file(s, sp, ip, first, count);
	}
	if (mt_itab_find(&s->c->addr_tab, addr_hash(pid, ip), addr_eq, &k, &idx)) {
		*first = s->c->addrs[idx].first;
		*count = s->c->addrs[idx].count;
		return 0;
	}
	return resolve_outside(s, proc, sp, pid, ip, first, count);
}

/* --- samples ------------------------------------------------------------ */

/* Append a frame that is only a name ("[unknown stack]") to s->stack. */
static int push_named(struct symbolizer *s, const char *name, size_t *n)
{
	struct mt_frame f = { .function = strdup(name) };
	int err;

	if (!f.function)
		return -ENOMEM;
	err = mt_reserve(&s->stack, &s->stack_cap, *n + 1, sizeof(*s->stack));
	if (err) {
		mt_frame_clear(&f);
		return err;
	}
	return intern_frame(s, &f, &s->stack[(*n)++]);
}

/* Collect the frames of RS into s->stack; *N is set to their number. */
static int stack_frames(struct symbolizer *s, const struct mt_raw_stack *rs,
			size_t *n)
{
	ptrdiff_t proc = find_proc(s, rs->pid);
	int err = 0;

	*n = 0;
	/* An anonymous mapping is a frame below the function that made it. */
	if (rs->category == MT_CAT_MMAP)
		err = push_named(s, MT_MMAP_FRAME, n);
	if (!err && (rs->nips == 0 || !rs->ips))
		return push_named(s, UNKNOWN_STACK, n);
	for (uint32_t i = 0; i < rs->nips && !err; i++) {
		size_t first, count;

		err = lookup_addr(s, proc, rs->pid, rs->ips[i], &first, &count);
		if (!err)
			err = mt_reserve(&s->stack, &s->stack_cap, *n + count,
				      sizeof(*s->stack));
		if (!err && count) {
			memcpy(&s->stack[*n], &s->c->pool[first],
			       count * sizeof(*s->stack));
			*n += count;
		}
	}
	return err;
}

static int add_sample(struct symbolizer *s, const struct mt_raw_stack *rs)
{
	struct mt_profile *out = s->out;
	size_t n;
	int err = stack_frames(s, rs, &n);

	if (!err)
		err = mt_reserve(&out->samples, &s->samples_cap, out->nsamples + 1,
			      sizeof(*out->samples));
	if (err)
		return err;
	/* Every stack has at least one frame ("[unknown stack]" if none). */
	uint32_t *frames = calloc(n ? n : 1, sizeof(*frames));

	if (!frames)
		return -ENOMEM;
	memcpy(frames, s->stack, n * sizeof(*frames));
	out->samples[out->nsamples++] = (struct mt_sample){
		.pid = rs->pid,
		.nframes = n,
		.frames = frames,
		.v = {
			[MT_ALLOC_OBJECTS] = (int64_t)rs->alloc_objects,
			[MT_ALLOC_SPACE] = (int64_t)rs->alloc_bytes,
			[MT_INUSE_OBJECTS] =
				(int64_t)(rs->alloc_objects - rs->free_objects),
			[MT_INUSE_SPACE] =
				(int64_t)(rs->alloc_bytes - rs->free_bytes),
		},
	};
	return 0;
}

/* --- driver ------------------------------------------------------------- */

static void symbolizer_free(struct symbolizer *s)
{
	free(s->entry);
	free(s->by_pid);
	free(s->spans);
	free(s->first_span);
	mt_frame_vec_free(&s->resolved);
	free(s->stack);
}

struct mt_symcache *mt_symcache_new(void)
{
	struct mt_symcache *c = calloc(1, sizeof(*c));

	if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void mt_symcache_free(struct mt_symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nprocs; i++)
		mt_perf_map_free(&c->procs[i].jit);
	for (size_t i = 0; i < c->nframes; i++)
		mt_frame_clear(&c->frames[i]);
	free(c->procs);
	free(c->frames);
	free(c->addrs);
	free(c->pool);
	mt_itab_free(&c->proc_tab);
	mt_itab_free(&c->frame_tab);
	mt_itab_free(&c->addr_tab);
	mt_file_addrs_free(&c->files);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static char *dup_or_null(const char *str, int *err)
{
	char *d = str ? strdup(str) : NULL;

	if (str && !d)
		*err = -ENOMEM;
	return d;
}

/* OUT's frames: the cache's (copied when it is kept, else taken). */
static int give_frames(struct mt_symcache *c, struct mt_profile *out,
		       bool keep)
{
	int err = 0;

	if (!keep) {
		out->frames = c->frames;
		out->nframes = c->nframes;
		c->frames = NULL;
		c->nframes = c->frames_cap = 0;
		return 0;
	}
	out->frames = calloc(c->nframes + 1, sizeof(*out->frames));
	if (!out->frames)
		return -ENOMEM;
	for (size_t i = 0; i < c->nframes && !err; i++) {
		struct mt_frame *f = &out->frames[i];

		*f = c->frames[i];
		f->function = dup_or_null(c->frames[i].function, &err);
		f->file = dup_or_null(c->frames[i].file, &err);
		f->decl_file = dup_or_null(c->frames[i].decl_file, &err);
		f->module = dup_or_null(c->frames[i].module, &err);
		out->nframes = i + 1;
	}
	return err;
}

/* mt_symbolize_cached with C, which the caller holds. */
static int symbolize_locked(const struct mt_raw_profile *raw,
			    struct mt_profile *out, struct mt_symcache *c,
			    bool keep)
{
	struct symbolizer s = { .raw = raw, .out = out, .c = c };
	int err;

	c->reports++;
	out->sum = raw->sum;
	err = index_procs(&s);
	if (!err)
		err = copy_procs(&s);
	if (!err)
		err = copy_maps(&s);
	for (size_t i = 0; !err && raw->stacks && i < raw->nstacks; i++)
		err = add_sample(&s, &raw->stacks[i]);
	if (!err)
		err = give_frames(c, out, keep);
	symbolizer_free(&s);
	return err;
}

int mt_symbolize_cached(const struct mt_raw_profile *raw,
			struct mt_profile *out, struct mt_symcache *cache)
{
	struct mt_symcache *c;
	int err;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!raw)
		return -EINVAL;
	c = cache ? cache : mt_symcache_new();
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	err = symbolize_locked(raw, out, c, cache != NULL);
	pthread_mutex_unlock(&c->lock);
	if (!cache)
		mt_symcache_free(c);
	if (err)
		mt_profile_free(out);
	return err;
}

void mt_symcache_get_stats(struct mt_symcache *c,
			   struct mt_symcache_stats *stats)
{
	pthread_mutex_lock(&c->lock);
	*stats = c->stats;
	stats->sessions = c->files.sessions;
	pthread_mutex_unlock(&c->lock);
}

int mt_symbolize(const struct mt_raw_profile *raw, struct mt_profile *out)
{
	return mt_symbolize_cached(raw, out, NULL);
}
