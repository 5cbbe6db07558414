// SPDX-License-Identifier: MIT
/* deferred_unwind.c: copies of stacks, unwound once their tables are
 * there (deferred_unwind.h). */
#include "deferred_unwind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "deferred_walk.h"
#include "itab.h"
#include "kernel_vmas.h"
#include "loop.h"
#include "memleak.skel.h"
#include "profile.h"
#include "trunc_procs.h"
#include "unwinder.h"
#include "copy_reader.h"

/* The ring buffer's size by default: a copy is its header, the stack to
 * its top and the frames walked before (6 KiB for python3 and sqlite3 on
 * average, at most 32 KiB): some 150 copies in flight.  Kernel memory an
 * idle trace holds (test kmem.idle): 4 MiB went over its bound. */
#define RING_DEFAULT (1U << 20)
/* System-wide, every process met: at the start, each busy process's
 * stacks are copied until its files' tables are made, and a program's
 * first run copies every stack it takes (400 allocations in a
 * millisecond, 0.8 MiB; python3's some 6,000 copies of 6 KiB in the
 * 40-90 ms its table takes).  The reader thread empties it, but may wait
 * for a core: 8 MiB lost 100-566 of python3's copies in 2 of 6 quiet
 * first runs, 32 MiB none in 3.  Not for a traced process: kernel
 * memory. */
#define RING_SYSTEM (32U << 20)

/* At the end, how long the tables still being made are waited for, at
 * most (system-wide, files keep coming). */
#define FINAL_WAIT_MS 5000

/* A process's executable mappings, as last read from /proc/PID/maps. */
struct pid_maps {
	uint32_t pid;
	struct mt_dw_mapping *v;       /* by start */
	size_t n;
	uint8_t *asked;                /* v[i]'s table asked for (ask_tables) */
};

/* A file's table as last looked up (module_of). */
struct mod_seen {
	struct mt_file_key key;
	bool found;
	struct mt_unwind_module mod;   /* found */
	uint64_t loaded;               /* not found: tables loaded then */
};

/* A provisional id whose whole stack is known. */
struct resolved {
	uint64_t id, real;
	uint64_t *ips;
	uint32_t n;
};

static struct {
	bool on;
	uint32_t mode;
	struct mt_unwinder *u;
	int modules_fd, stacks_fd;
	struct mt_defer_copy **wait;       /* copies waiting for tables */
	uint64_t *wait_gen;                /* gen() when each was last tried */
	size_t nwait, wait_cap;
	uint64_t news;                     /* mappings learnt (gen()) */
	struct resolved *res;
	size_t nres, res_cap;
	struct mt_itab index;              /* res by id */
	struct pid_maps *pids;
	size_t npids;
	uint64_t truncated;
	uint64_t trunc[MT_TRUNC__COUNT];   /* truncated, by reason */
	uint64_t whole, used_sum, used_max;  /* whole walks from the top */
	struct mt_trunc_count *cuts;       /* truncated, by process */
	size_t ncuts;
	struct mod_seen *mods;
	size_t nmods, mods_cap;
	struct mt_itab mods_index;         /* mods by file */
	/* The ring read on a thread of its own (NULL: by the unwinder's
	 * ring_buffer, on the loader's thread). */
	struct mt_copy_reader *reader;
	bool stalled;                      /* the test hook's stall done */
} D = { .modules_fd = -1, .stacks_fd = -1 };

void mt_deferred_unwind_size(struct memleak_bpf *skel, bool on, bool system)
{
	const char *all = getenv("MEMTRACE_DEFER_ALL");
	const char *ring = getenv("MEMTRACE_DEFER_RING");
	long page = sysconf(_SC_PAGESIZE);
	unsigned long size = system ? RING_SYSTEM : RING_DEFAULT;
	int ncpus;

	skel->rodata->defer_mode = !on ? 0 : all && *all == '1' ? 2 : 1;
	skel->rodata->vma_system = system;
	if (ring && *ring)
		size = strtoul(ring, NULL, 0);
	if (page <= 0)
		page = 4096;
	if (!on || size < (unsigned long)page)
		size = (unsigned long)page; /* unused: the smallest */
	bpf_map__set_max_entries(skel->maps.unwind_copies, (__u32)size);
	/* Processes told of (bpf/vma_dump.h): a hash map's buckets are made
	 * in full, 512 KiB for every pid there can be; a command's family or
	 * one process needs far fewer. */
	if (!system)
		bpf_map__set_max_entries(skel->maps.vma_marks, 4096);
	ncpus = libbpf_num_possible_cpus();
	bpf_map__set_max_entries(skel->maps.defer_scratch,
				 on && ncpus > 0 ? (__u32)ncpus : 1);
}

static bool same_id(const void *ctx, uint32_t idx)
{
	return D.res[idx].id == *(const uint64_t *)ctx;
}

static const struct resolved *find_resolved(uint64_t id)
{
	uint32_t idx;

	if (!D.nres || !mt_itab_find(&D.index, id, same_id, &id, &idx))
		return NULL;
	return &D.res[idx];
}

bool mt_deferred_unwind_resolved(uint64_t id)
{
	return find_resolved(id) != NULL;
}

/* The kernel's dev_t encoding, as an inode's superblock holds it. */
static uint64_t kernel_dev(unsigned maj, unsigned min)
{
	return ((uint64_t)maj << 20) | min;
}

static int by_start(const void *a, const void *b)
{
	const struct mt_dw_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* P's mappings are now the N of V (malloc()ed, taken), none asked for. */
static void set_maps(struct pid_maps *p, struct mt_dw_mapping *v, size_t n)
{
	if (v && n > 1)
		qsort(v, n, sizeof(*v), by_start);
	free(p->v);
	free(p->asked);
	p->v = v;
	p->n = n;
	p->asked = calloc(n ? n : 1, 1);
	if (!p->asked) {
		free(p->v);
		p->v = NULL;
		p->n = 0;
	}
}

/* The index of P's mapping that holds ADDR, or -1. */
static ssize_t mapping_index(const struct pid_maps *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	if (!p->n || addr < p->v[0].start || addr >= p->v[p->n - 1].end)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < p->v[lo - 1].end ? (ssize_t)lo - 1 : -1;
}

/* PID's executable mappings as the kernel told them (kernel_vmas.h) into
 * P.  0, or -1 when it did not. */
static int kernel_maps(uint32_t pid, struct pid_maps *p)
{
	size_t n;
	const struct mt_kvma *k = mt_kvmas_of(pid, &n);
	struct mt_dw_mapping *v;

	if (!k || !(v = malloc(n * sizeof(*v))))
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct mt_dw_mapping){ k[i].start, k[i].end,
					       k[i].offset - k[i].start,
					       k[i].file };
	set_maps(p, v, n);
	return 0;
}

/* Read PID's executable mappings into P: from the kernel's records, else
 * from /proc.  0, or -1 when it is gone. */
static int read_maps(uint32_t pid, struct pid_maps *p)
{
	char path[64], line[4096];
	struct mt_dw_mapping *v = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	if (kernel_maps(pid, p) == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end,
			   perms, &off, &maj, &min, &ino) != 7 ||
		    !strchr(perms, 'x'))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct mt_dw_mapping *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv)
				break;
			v = nv;
			cap = ncap;
		}
		v[n].start = start;
		v[n].end = end;
		v[n].delta = off - start;
		v[n].file.dev = ino ? kernel_dev(maj, min) : 0;
		v[n].file.ino = ino;
		n++;
	}
	fclose(f);
	set_maps(p, v, n);
	return 0;
}

static struct pid_maps *maps_of(uint32_t pid)
{
	struct pid_maps *nv;

	for (size_t i = 0; i < D.npids; i++)
		if (D.pids[i].pid == pid)
			return &D.pids[i];
	nv = realloc(D.pids, (D.npids + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	D.pids = nv;
	nv[D.npids] = (struct pid_maps){ pid, NULL, 0, NULL };
	return &D.pids[D.npids++];
}

/*
 * Ask now, while the process is there to open them from, for the tables
 * of the files the walk of C may need: its frame's, and those of every
 * mapping a word of the copied stack points into (the return addresses
 * among them).  Only those: system-wide, every process met would have
 * every file it maps made a table of.  Each of P's mappings is asked for
 * once (until its mappings are read again): a program's first run has
 * thousands of copies, each of which asked for the same files again.
 */
static void ask_tables(const struct mt_defer_copy *c, struct pid_maps *p)
{
	ssize_t i = mapping_index(p, c->pc);

	if (i < 0 || !p->asked[i])
		mt_unwinder_ask(D.u, (pid_t)c->pid, &c->file, c->vm_start,
				c->vm_end);
	if (i >= 0)
		p->asked[i] = 1;
	for (uint32_t off = 0; off + 8 <= c->len; off += 8) {
		uint64_t w;

		memcpy(&w, c->stack + off, 8);
		i = mapping_index(p, w);
		if (i < 0 || p->asked[i])
			continue;
		p->asked[i] = 1;
		if (p->v[i].file.dev || p->v[i].file.ino)
			mt_unwinder_ask(D.u, (pid_t)c->pid, &p->v[i].file,
					p->v[i].start, p->v[i].end);
	}
}

/* A walk's context: its copy, and how it goes. */
struct walk_ctx {
	const struct mt_defer_copy *c;
	struct pid_maps *maps;
	bool reread;           /* the maps were read again in this walk */
	bool never;            /* a table not there now will not come */
	uint64_t nrows, npages;
};

static bool find_mapping(const struct pid_maps *p, uint64_t pc,
			 struct mt_dw_mapping *out)
{
	ssize_t i = p ? mapping_index(p, pc) : -1;

	if (i < 0)
		return false;
	*out = p->v[i];
	return true;
}

/*
 * PC in PID's image before its last exec, as the kernel told it: a copy
 * taken there (a shell's, between its fork and its exec) is read after
 * the new image's mappings replaced those.  0, or -1.
 */
static int before_exec(uint32_t pid, uint64_t pc, struct mt_dw_mapping *out)
{
	size_t n;
	const struct mt_kvma *k = mt_kvmas_before_exec(pid, &n);

	for (size_t i = 0; k && i < n; i++) {
		if (pc >= k[i].start && pc < k[i].end) {
			*out = (struct mt_dw_mapping){ k[i].start, k[i].end,
						       k[i].offset - k[i].start,
						       k[i].file };
			return 0;
		}
	}
	return -1;
}

static int mapping_cb(void *ctx, uint64_t pc, struct mt_dw_mapping *out)
{
	struct walk_ctx *w = ctx;

	if (find_mapping(w->maps, pc, out))
		return 0;
	if (w->maps && !w->reread) {
		w->reread = true;
		if (read_maps(w->c->pid, w->maps) == 0 &&
		    find_mapping(w->maps, pc, out))
			return 0;
	}
	return before_exec(w->c->pid, pc, out);
}

static bool same_file(const void *ctx, uint32_t idx)
{
	const struct mt_file_key *k = ctx;

	return D.mods[idx].key.dev == k->dev && D.mods[idx].key.ino == k->ino;
}

/*
 * FILE's table, as the maps have it: 0 (into OUT), or -1 when it is not
 * there yet (-2: nor was it when last looked up).  Found once, it is kept here (a table never changes once
 * published); not found, it is not looked up again until another table
 * is loaded (the unwinder counts them after it publishes each).  A walk
 * met the file at every copy: a system call each time, most of what a
 * copy cost the loader while a program's first run filled the ring.
 */
static int module_of(const struct mt_file_key *file,
		     struct mt_unwind_module *out)
{
	uint64_t loaded = __atomic_load_n(&D.u->tables_loaded, __ATOMIC_ACQUIRE);
	uint64_t h = mt_hash_u64(mt_hash_u64(MT_HASH_SEED, file->dev),
				 file->ino);
	struct mod_seen *e = NULL;
	uint32_t idx;

	if (D.nmods && mt_itab_find(&D.mods_index, h, same_file, file, &idx)) {
		e = &D.mods[idx];
		if (e->found) {
			*out = e->mod;
			return 0;
		}
		if (e->loaded == loaded)
			return -2;
	}
	if (!e) {
		if (D.nmods == D.mods_cap) {
			size_t ncap = D.mods_cap ? D.mods_cap * 2 : 64;
			struct mod_seen *nv = realloc(D.mods, ncap * sizeof(*nv));

			if (!nv)
				return bpf_map_lookup_elem(D.modules_fd, file, out) ? -1 : 0;
			D.mods = nv;
			D.mods_cap = ncap;
		}
		if (mt_itab_add(&D.mods_index, h, (uint32_t)D.nmods))
			return bpf_map_lookup_elem(D.modules_fd, file, out) ? -1 : 0;
		e = &D.mods[D.nmods++];
		e->key = *file;
		e->found = false;
	}
	e->loaded = loaded;
	if (bpf_map_lookup_elem(D.modules_fd, file, out))
		return -1;
	e->found = true;
	e->mod = *out;
	return 0;
}

static enum mt_dw_module module_cb(void *ctx, const struct mt_dw_mapping *m,
				   struct mt_unwind_module *out)
{
	struct walk_ctx *w = ctx;

	int found = module_of(&m->file, out);

	if (found == 0) {
		/* Found: its rows are in the chunks, which may have been
		 * made after the walk looked at how many there are. */
		if ((uint64_t)out->row_first + out->nrows <= w->nrows &&
		    (!out->nrows ||
		     (uint64_t)out->page_first + out->npages + 1 <= w->npages))
			return MT_DW_MODULE_FOUND;
		return w->never ? MT_DW_MODULE_NEVER : MT_DW_MODULE_LATER;
	}
	if (w->never)
		return mt_unwinder_unreadable(D.u, &m->file) ? MT_DW_MODULE_UNREADABLE
							     : MT_DW_MODULE_NEVER;
	if (found == -1) /* else asked since, and no table came */
		mt_unwinder_ask(D.u, (pid_t)w->c->pid, &m->file, m->start,
				m->end);
	/* Named by the kernel, and cannot be opened: no table will come. */
	if (mt_unwinder_unreadable(D.u, &m->file))
		return MT_DW_MODULE_UNREADABLE;
	return MT_DW_MODULE_LATER;
}

static int keep_resolved(uint64_t id, const uint64_t *ips, uint32_t n)
{
	struct resolved *r;
	int ret;

	if (D.nres == D.res_cap) {
		size_t ncap = D.res_cap ? D.res_cap * 2 : 256;
		struct resolved *nv = realloc(D.res, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		D.res = nv;
		D.res_cap = ncap;
	}
	r = &D.res[D.nres];
	r->ips = malloc(n * sizeof(*ips));
	if (!r->ips)
		return -ENOMEM;
	memcpy(r->ips, ips, n * sizeof(*ips));
	r->n = n;
	r->id = id;
	r->real = mt_dw_stack_id(ips, n);
	ret = mt_itab_add(&D.index, id, (uint32_t)D.nres);
	if (ret) {
		free(r->ips);
		return ret;
	}
	D.nres++;
	return 0;
}

/* The segments of provisional stack ID are not needed any more: every
 * one of them goes (its own: the BPF program keyed them with ID,
 * stack_segs.h), not its first only. */
static void forget_provisional(uint64_t id)
{
	struct mt_stack seg;

	for (int k = 0; k < MT_STACK_SEGS && id; k++) {
		if (bpf_map_lookup_elem(D.stacks_fd, &id, &seg))
			break;
		bpf_map_delete_elem(D.stacks_fd, &id);
		id = seg.next;
	}
}

/* Unwind copy C if its tables are there.  True when it is done with
 * (unwound, or given up). */
static bool try_copy(const struct mt_defer_copy *c, bool never)
{
	struct walk_ctx w = { c, maps_of(c->pid), false, never, 0, 0 };
	struct mt_dw_env env = { D.mode, { 0 }, mapping_cb, module_cb, &w };
	uint64_t ips[MT_MAX_STACK_DEPTH];
	enum mt_dw_result r;
	uint64_t used = 0;
	uint32_t n = 0;

	w.nrows = __atomic_load_n(&D.u->rows.nchunks, __ATOMIC_ACQUIRE) *
		  (uint64_t)D.u->rows.chunk_elems;
	w.npages = __atomic_load_n(&D.u->pages.nchunks, __ATOMIC_ACQUIRE) *
		   (uint64_t)D.u->pages.chunk_elems;
	env.tables = (struct mt_dw_tables){ mt_map_chunks_base(&D.u->rows),
					    w.nrows,
					    mt_map_chunks_base(&D.u->pages),
					    w.npages };
	r = mt_dw_walk(c, &env, ips, &n, &used);
	if (r == MT_DW_WAIT)
		return false;
	if (r == MT_DW_TRUNCATED) {
		D.truncated++;
		D.trunc[mt_dw_last_reason()]++;
		mt_trunc_count_add(&D.cuts, &D.ncuts, c->pid,
				   (int)mt_dw_last_reason(), 1);
	}
	/* How deep whole stacks are, in bytes: the copy's bound. */
	if (r == MT_DW_DONE && c->steps == 0) {
		D.whole++;
		D.used_sum += used;
		if (used > D.used_max)
			D.used_max = used;
	}
	if (n == 0 || keep_resolved(c->id, ips, n))
		return true; /* stays as the BPF program filed it */
	forget_provisional(c->id);
	return true;
}

/* What a waiting copy can need that may have come since it was tried: a
 * table in the maps, or a process's mappings. */
static uint64_t gen(void)
{
	return __atomic_load_n(&D.u->tables_loaded, __ATOMIC_ACQUIRE) + D.news;
}

/* Copies walked in a pass between two reads of the ring buffer. */
#define PASS_SLICE 128

/*
 * One pass over the waiting copies; NEVER: no more waiting for tables.
 * A copy tried since the last table or mapping came waits on untried:
 * thousands may wait, and walking them all at each wake-up kept the
 * loader from reading the ring buffer while it overflowed.  For the
 * same reason the ring is read every PASS_SLICE walks (a table that
 * comes makes thousands of copies walkable at once: 135 ms for 38,000
 * of them): the copies read then join the end of the list, and this
 * pass gets to them.
 */
static void pass(bool never)
{
	uint64_t now = gen();
	size_t k = 0;

	for (size_t i = 0, tried = 0; i < D.nwait; i++) {
		if (!never && D.wait_gen[i] == now) {
			D.wait_gen[k] = D.wait_gen[i];
			D.wait[k++] = D.wait[i];
			continue;
		}
		if (!never && ++tried % PASS_SLICE == 0)
			mt_unwinder_poll(D.u);
		if (try_copy(D.wait[i], never)) {
			free(D.wait[i]);
		} else {
			D.wait_gen[k] = now;
			D.wait[k++] = D.wait[i];
		}
	}
	D.nwait = k;
}

void mt_deferred_unwind_poll(bool final)
{
	if (!D.on)
		return;
	if (final && D.reader) {
		/* Tracing is over: the ring's rest read here. */
		mt_copy_reader_stop(D.reader);
		mt_unwinder_poll(D.u);
	}
	if (final && D.nwait) {
		uint64_t t0 = mt_loop_now_ns();

		mt_unwinder_wait_ms(D.u, FINAL_WAIT_MS);
		pass(false);
		/* The tables asked for by that pass, in what is left. */
		if (D.nwait && mt_loop_now_ns() - t0 < FINAL_WAIT_MS * 1000000ULL)
			mt_unwinder_wait_ms(D.u, FINAL_WAIT_MS -
					   (unsigned)((mt_loop_now_ns() - t0) / 1000000));
	}
	pass(false);
	/* Nothing is being made (or tracing is over): what is missing now
	 * never will be. */
	if (D.nwait && (final || mt_unwinder_idle(D.u)))
		pass(true);
}

static int on_copy(void *ctx, void *data, size_t size)
{
	struct mt_defer_copy *c;
	struct mt_dw_mapping m;
	struct pid_maps *p;
	uint64_t tried;

	(void)ctx;
	if (size >= sizeof(uint64_t) && *(const uint64_t *)data == 0) {
		/* Not a copy: a mapping of a process (bpf/vma_dump.h), which
		 * the copies after it may need. */
		mt_kvmas_add(data, size);
		D.news++;
		return 0;
	}
	if (size < offsetof(struct mt_defer_copy, stack) || size > sizeof(*c))
		return 0;
	if (!D.stalled) {
		/* Test hook: the loader busy for so long at its first copy
		 * (a table being loaded, a scan of /proc, a report). */
		const char *ms = getenv("MEMTRACE_TEST_LOADER_STALL_MS");

		D.stalled = true;
		if (ms && *ms)
			usleep((useconds_t)strtoul(ms, NULL, 10) * 1000);
	}
	/* As long as the record: the stack copied, then the frames. */
	c = malloc(size);
	if (!c)
		return 0;
	memcpy(c, data, size);
	if (c->len > size - offsetof(struct mt_defer_copy, stack))
		c->len = (uint32_t)(size - offsetof(struct mt_defer_copy, stack));
	if (c->n > (size - offsetof(struct mt_defer_copy, stack) - c->len) / 8)
		c->n = (uint32_t)((size - offsetof(struct mt_defer_copy, stack) -
				   c->len) / 8);
	/* The process's mappings and files now, while it is there: it may
	 * live a few milliseconds.  Again when the copy's own mapping is new
	 * (a dlopen since). */
	p = maps_of(c->pid);
	if (p && !find_mapping(p, c->pc, &m))
		read_maps(c->pid, p);
	if (p)
		ask_tables(c, p);
	tried = gen();
	if (try_copy(c, false)) {
		free(c);
		return 0;
	}
	if (D.nwait == D.wait_cap) {
		size_t ncap = D.wait_cap ? D.wait_cap * 2 : 64;
		struct mt_defer_copy **nv = realloc(D.wait, ncap * sizeof(*nv));
		uint64_t *ng;

		if (!nv) {
			free(c);
			return 0;
		}
		D.wait = nv;
		ng = realloc(D.wait_gen, ncap * sizeof(*ng));
		if (!ng) {
			free(c);
			return 0;
		}
		D.wait_gen = ng;
		D.wait_cap = ncap;
	}
	D.wait_gen[D.nwait] = tried;
	D.wait[D.nwait++] = c;
	return 0;
}

void mt_deferred_unwind_exit(uint32_t pid)
{
	struct pid_maps *p;
	bool waits = false;

	if (!D.on)
		return;
	mt_unwinder_poll(D.u); /* its copies not read yet */
	for (size_t i = 0; i < D.nwait && !waits; i++)
		waits = D.wait[i]->pid == pid;
	if (!waits || !(p = maps_of(pid)))
		return;
	read_maps(pid, p);
	D.news++;
	for (size_t i = 0; i < D.nwait; i++)
		if (D.wait[i]->pid == pid)
			ask_tables(D.wait[i], p);
}

bool mt_deferred_unwind_forget(uint32_t pid)
{
	if (D.on) {
		mt_unwinder_poll(D.u); /* its copies not read yet */
		for (size_t i = 0; i < D.nwait; i++)
			if (D.wait[i]->pid == pid)
				return false;
		for (size_t i = 0; i < D.npids; i++)
			if (D.pids[i].pid == pid) {
				free(D.pids[i].v);
				D.pids[i] = D.pids[--D.npids];
				break;
			}
	}
	mt_kvmas_forget(pid);
	return true;
}

/* The copies the reader thread queued, in order (mt_unwinder_poll()). */
static void drain_copies(void *ctx)
{
	(void)ctx;
	mt_copy_reader_drain(D.reader, on_copy, NULL);
}

uint64_t mt_deferred_unwind_queued_most(void)
{
	return mt_copy_reader_most(D.reader);
}

int mt_deferred_unwind_init(struct mt_unwinder *u, struct memleak_bpf *skel,
			    uint32_t mode)
{
	const char *thread = getenv("MEMTRACE_DEFER_THREAD");
	int ret;

	mt_deferred_unwind_free();
	if (!skel->rodata->defer_mode || !u->missing)
		return 0;
	/* The copies are read on a thread of their own; without it (no
	 * thread, no eventfd; MEMTRACE_DEFER_THREAD=0), on the loader's
	 * thread. */
	if (!thread || strcmp(thread, "0") != 0)
		D.reader = mt_copy_reader_start(
			bpf_map__fd(skel->maps.unwind_copies),
			ring_buffer__epoll_fd(u->missing));
	if (D.reader) {
		u->after_poll = drain_copies;
		u->after_poll_ctx = NULL;
	} else {
		ret = ring_buffer__add(u->missing,
				       bpf_map__fd(skel->maps.unwind_copies),
				       on_copy, NULL);
		if (ret)
			return ret;
	}
	D.on = true;
	D.mode = mode;
	D.u = u;
	D.modules_fd = bpf_map__fd(skel->maps.unwind_modules);
	D.stacks_fd = bpf_map__fd(skel->maps.stacks);
	return 0;
}

/* Two raw stacks of one process, category and stack. */
struct triple_find {
	const struct mt_raw_stack *stacks;
	const struct mt_raw_stack *key;
};

static bool same_triple(const void *ctx, uint32_t idx)
{
	const struct triple_find *f = ctx;
	const struct mt_raw_stack *a = &f->stacks[idx], *b = f->key;

	return a->pid == b->pid && a->category == b->category &&
	       a->stack_id == b->stack_id;
}

/* Merge the stacks of RAW that are one (process, category, stack). */
static int merge_same(struct mt_raw_profile *raw)
{
	struct mt_itab index = { 0 };
	size_t k = 0;
	int ret = 0;

	for (size_t i = 0; i < raw->nstacks; i++) {
		struct mt_raw_stack *rs = &raw->stacks[i];
		struct triple_find f = { raw->stacks, rs };
		uint64_t h = mt_raw_key_hash(rs->pid, rs->category,
					     rs->stack_id);
		uint32_t idx;

		if (!ret && mt_itab_find(&index, h, same_triple, &f, &idx)) {
			struct mt_raw_stack *to = &raw->stacks[idx];

			to->alloc_bytes += rs->alloc_bytes;
			to->alloc_objects += rs->alloc_objects;
			to->free_bytes += rs->free_bytes;
			to->free_objects += rs->free_objects;
			free(rs->ips);
			continue;
		}
		raw->stacks[k] = *rs;
		if (!ret)
			ret = mt_itab_add(&index, h, (uint32_t)k);
		k++;
	}
	raw->nstacks = k;
	mt_itab_free(&index);
	return ret;
}

void mt_deferred_unwind_counters(uint64_t *counters)
{
	if (!D.on)
		return;
	counters[MT_CNT_STACKS_TRUNCATED] += D.truncated;
	for (int i = 0; i < MT_TRUNC__COUNT; i++)
		counters[MT_CNT_TRUNC + i] += D.trunc[i];
}

int mt_deferred_unwind_apply(struct mt_raw_profile *raw)
{
	bool changed = false;

	if (!D.on)
		return 0;
	mt_deferred_unwind_counters(raw->sum.counters);
	raw->sum.counters[MT_CNT_STACKS_TRUNCATED] += D.nwait;
	/* Copies still waiting for a table: cut where it was missing. */
	raw->sum.counters[MT_CNT_TRUNC + MT_TRUNC_NO_TABLE] += D.nwait;
	if (!D.nres)
		return 0;
	for (size_t i = 0; i < raw->nstacks; i++) {
		struct mt_raw_stack *rs = &raw->stacks[i];
		const struct resolved *r = find_resolved(rs->stack_id);
		uint64_t *ips;

		if (!r)
			continue;
		ips = malloc(r->n * sizeof(*ips));
		if (!ips)
			return -ENOMEM;
		memcpy(ips, r->ips, r->n * sizeof(*ips));
		free(rs->ips);
		rs->ips = ips;
		rs->nips = r->n;
		rs->stack_id = r->real;
		changed = true;
	}
	for (size_t i = 0; i < raw->nblocks; i++) {
		const struct resolved *r = find_resolved(raw->blocks[i].stack_id);

		if (r)
			raw->blocks[i].stack_id = r->real;
	}
	return changed ? merge_same(raw) : 0;
}

void mt_deferred_unwind_depth(uint64_t *whole, uint64_t *mean,
			      uint64_t *max)
{
	*whole = D.whole;
	*mean = D.whole ? D.used_sum / D.whole : 0;
	*max = D.used_max;
}

struct mt_trunc_count *mt_deferred_unwind_cuts(size_t *n)
{
	struct mt_trunc_count *v = NULL;

	*n = 0;
	if (D.ncuts && (v = malloc(D.ncuts * sizeof(*v))) != NULL) {
		memcpy(v, D.cuts, D.ncuts * sizeof(*v));
		*n = D.ncuts;
	}
	/* Still waiting: cut where a table was missing. */
	for (size_t i = 0; i < D.nwait; i++)
		mt_trunc_count_add(&v, n, D.wait[i]->pid, MT_TRUNC_NO_TABLE, 1);
	return v;
}

void mt_deferred_unwind_stats(uint64_t *done, uint64_t *waiting,
			      uint64_t *truncated)
{
	*done = D.nres;
	*waiting = D.nwait;
	*truncated = D.truncated;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every key of the stacks map into *KEYS (sorted), their number; 0 when
 * none or out of memory. */
static size_t segment_keys(uint64_t **keys)
{
	uint64_t key, next, *v = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(D.stacks_fd, prev, &next) == 0) {
		if (n == cap) {
			uint64_t *nv = realloc(v, (cap = cap ? 2 * cap : 1024) *
						       sizeof(*v));

			if (!nv) {
				free(v);
				return 0;
			}
			v = nv;
		}
		v[n++] = key = next;
		prev = &key;
	}
	if (!n) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	*keys = v;
	return n;
}

void mt_deferred_unwind_segments(const struct mt_raw_profile *raw,
				 uint64_t *total, uint64_t *unreachable)
{
	uint64_t *keys = NULL;
	uint8_t *seen;
	size_t n;

	*total = *unreachable = 0;
	if (D.stacks_fd < 0 || !(n = segment_keys(&keys)))
		return;
	seen = calloc(n, 1);
	if (!seen) {
		free(keys);
		return;
	}
	/* From every stack read, its segments. */
	for (size_t i = 0; i < raw->nstacks; i++) {
		uint64_t id = raw->stacks[i].stack_id;
		struct mt_stack seg;

		for (int k = 0; k < MT_STACK_SEGS && id; k++) {
			uint64_t *at = bsearch(&id, keys, n, sizeof(*keys),
					       cmp_u64);

			if (!at || seen[at - keys] ||
			    bpf_map_lookup_elem(D.stacks_fd, &id, &seg))
				break;
			seen[at - keys] = 1;
			id = seg.next;
		}
	}
	*total = n;
	for (size_t i = 0; i < n; i++)
		*unreachable += !seen[i];
	free(seen);
	free(keys);
}

void mt_deferred_unwind_free(void)
{
	/* First: its thread may still be queueing. */
	mt_copy_reader_free(D.reader);
	if (D.u && D.u->after_poll == drain_copies)
		D.u->after_poll = NULL;
	for (size_t i = 0; i < D.nwait; i++)
		free(D.wait[i]);
	free(D.wait);
	free(D.wait_gen);
	for (size_t i = 0; i < D.nres; i++)
		free(D.res[i].ips);
	free(D.res);
	mt_itab_free(&D.index);
	for (size_t i = 0; i < D.npids; i++) {
		free(D.pids[i].v);
		free(D.pids[i].asked);
	}
	free(D.pids);
	free(D.mods);
	mt_itab_free(&D.mods_index);
	free(D.cuts);
	memset(&D, 0, sizeof(D));
	D.modules_fd = D.stacks_fd = -1;
	mt_kvmas_free();
}
