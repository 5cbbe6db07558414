/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * unwind.h: the user-stack unwinder of the BPF program, a unit of its own:
 * its maps, its state (struct mt_unwind_state, per CPU) and its step
 * function (unwind_step), run by bpf_loop() once per frame.
 *
 * A walk starts from the registers at the allocator's return: pc is the
 * return address in the caller, sp and bp the caller's.  Each step finds
 * the mapping that holds pc (in the process's cache of executable
 * mappings, else with bpf_find_vma: the kernel's own view, so there is no
 * per-process table to keep up to date), the mapped file's unwind table
 * by the file's identity (loaded by the loader, struct mt_unwind_module in
 * memleak.h), and in it the row for pc; the row says where the caller's
 * frame is (its CFA), hence its return address (at CFA - 8), stack
 * pointer (the CFA) and frame pointer.  Code no table covers (JIT code in
 * an anonymous mapping, a file without CFI, a gap in a table) is stepped
 * by frame pointer in --unwind auto, and ends the walk in --unwind cfi.
 *
 * Every frame stored lies in an executable mapping of the process: a pc
 * outside one ends the walk and is not stored.  A walk that ends anywhere
 * but at the outermost frame (a row whose return address is undefined,
 * or a return address of 0) counts as truncated (MT_CNT_STACKS_TRUNCATED),
 * and under its reason (enum mt_trunc_reason: MT_CNT_TRUNC + reason).
 * A mapped file without a table yet is announced once on the
 * unwind_missing ring buffer, for the loader to make one.
 *
 * What makes a step cheap: the stack is read a window at a time
 * (stack_word), the rows found are kept per CPU (cached_row), and the
 * scratch and the process's mapping cache are looked up once a walk
 * (struct uw_walk).
 *
 * The includer defines count() and the counters it adds to, and mix(),
 * MT_MIX_SEED (the check words of the caches are hashes).
 */
#ifndef MEMTRACE_BPF_UNWIND_H
#define MEMTRACE_BPF_UNWIND_H

#define MT_VM_EXEC 0x4UL
#ifndef EBUSY
#define EBUSY 16  /* bpf_find_vma(): mmap_lock taken */
#endif

/* --unwind (enum mt_unwind_mode), set by the loader before load. */
const volatile __u32 unwind_mode = MT_UNWIND_FP;

/* Deferred unwinding (bpf/unwind_defer.h), set by the loader: 0 off, 1 a
 * stack that meets a file with no table yet is copied, 2 (a test hook)
 * every stack is copied at its first frame in a file. */
const volatile __u32 defer_mode = 0;

/* Rows of every loaded table, back to back, in chunks of
 * 1 << MT_UW_ROWS_CHUNK_SHIFT: row i is row i % chunk of the chunk in
 * slot i / chunk.  The loader makes each chunk (an mmap()able array) when
 * the tables need it, writes the rows through mmap() and sizes the outer
 * map (the ceiling) before load. */
struct uw_rows_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1U << MT_UW_ROWS_CHUNK_SHIFT);
	/* Sizes, not types: the type of a map inside another is not kept
	 * whole in the object's BTF. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct mt_unwind_row));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct uw_rows_chunk);
} unwind_rows SEC(".maps");

/* Page indices of every loaded table (struct mt_unwind_module), in
 * chunks as the rows; 64-bit, as an array map's elements are 8-byte
 * aligned in its mmap()ed memory. */
struct uw_pages_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1U << MT_UW_PAGES_CHUNK_SHIFT);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u64));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct uw_pages_chunk);
} unwind_pages SEC(".maps");

/* Row I of the loaded tables, or NULL. */
static __always_inline struct mt_unwind_row *uw_row(__u32 i)
{
	__u32 slot = i >> MT_UW_ROWS_CHUNK_SHIFT;
	__u32 k = i & ((1U << MT_UW_ROWS_CHUNK_SHIFT) - 1);
	void *chunk = bpf_map_lookup_elem(&unwind_rows, &slot);

	return chunk ? bpf_map_lookup_elem(chunk, &k) : NULL;
}

/* Page index I of the loaded tables, or NULL. */
static __always_inline __u64 *uw_page(__u32 i)
{
	__u32 slot = i >> MT_UW_PAGES_CHUNK_SHIFT;
	__u32 k = i & ((1U << MT_UW_PAGES_CHUNK_SHIFT) - 1);
	void *chunk = bpf_map_lookup_elem(&unwind_pages, &slot);

	return chunk ? bpf_map_lookup_elem(chunk, &k) : NULL;
}

/* The loaded tables, by file.  Written last, so a table is whole once
 * it can be found. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct mt_file_key);
	__type(value, struct mt_unwind_module);
} unwind_modules SEC(".maps");

/* Files met without a table (struct mt_unwind_missing). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} unwind_missing SEC(".maps");

/* Files already announced, so that each is announced about once: when
 * (bpf_ktime_get_ns), for the deferred walk's window (unwind_defer.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct mt_file_key);
	__type(value, __u64);
} unwind_told SEC(".maps");

/*
 * Executable mappings each process's stacks met, so that bpf_find_vma()
 * is called only on a miss: it only try-locks the process's mmap_lock,
 * and fails while another thread maps or unmaps (a malloc arena growing).
 * Threads share a process's cache without a lock: an entry is written
 * field by field, its check last, and a reader uses it only when its
 * check matches its fields, so a torn entry is a miss.  The cache belongs
 * to one address space (mm): after exec it starts empty.  The loader
 * deletes a process's cache when it maps new files (one could lie where
 * an unmapped one was).
 */
#define UW_VMA_SLOTS 16

struct uw_vma {
	__u64 start, end, delta;
	struct mt_file_key file;   /* 0, 0: an anonymous mapping (JIT code) */
	__u64 check;
};

struct uw_vmas {
	__u64 mm;
	__u32 next;                /* the slot the next miss fills */
	__u32 pad;
	struct uw_vma v[UW_VMA_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct uw_vmas);
} unwind_vmas SEC(".maps");

/* A zeroed struct uw_vmas, to create a process's cache from. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_vmas);
} unwind_vmas_zero SEC(".maps");

/* UW_DEFER: the walk stopped at a frame whose file has no table yet, to
 * be finished by the loader on a copy of the stack (unwind_defer.h). */
enum { UW_RUN = 0, UW_DONE, UW_TRUNCATED, UW_DEFER };

struct mt_unwind_state {
	__u64 pc, sp, bp;
	__u32 n;          /* frames stored */
	__u32 status;     /* UW_* */
	__u32 steps;      /* frames stepped past (stored or skipped) */
	__u32 reason;     /* UW_TRUNCATED: why (enum mt_trunc_reason) */
	/* The mapping pc was last found in: [vm_start, vm_end), whose file
	 * offset is the address + vm_delta, and its file's table. */
	__u64 vm_start, vm_end, vm_delta;
	struct mt_unwind_module mod;
	__u32 has_rows;   /* mod holds rows; else step by frame pointer */
	__u32 pid;
	__u64 mm;         /* the address space walked */
};

/*
 * The user stack is read a window at a time: the words a step needs (a
 * return address, a saved rbp) lie just above the frame before, so one
 * bpf_probe_read_user() of UW_WIN bytes serves several frames, where one
 * read per word cost more than the rest of the walk (each read pays the
 * helper call and the kernel's checks of a user copy: sqlite3's 17.6
 * frames a stack took 8.5 window reads, and 1,130 ns in all, against
 * 1,800 ns with a read per word; 512- and 2048-byte windows cost more).
 */
#define UW_WIN 1024
#define UW_PAGE 4096
#define UW_BACK 64

/*
 * Rows found, per CPU: the same call sites come back stack after stack,
 * and finding a row (the page index, then a binary search among the
 * page's rows, a cache miss at nearly every probe) was most of a step.
 * A table never changes once published and each has rows of its own
 * (row_first), so (row_first, file offset) names one row for good.  An
 * entry is written key, row, then its check; a reader takes it only when
 * the check matches what it read, so one torn by a program run on the
 * same CPU meanwhile is a miss.
 */
_Static_assert(sizeof(struct mt_unwind_row) == sizeof(__u64), "a row is a word");

#define UW_ROW_BITS 10
#define UW_ROW_SLOTS (1U << UW_ROW_BITS)

struct uw_row_slot {
	__u64 key;                 /* row_first << 32 | file offset */
	__u64 row;                 /* struct mt_unwind_row */
	__u64 check;
};

/* The frames of a stack being taken, per CPU: n of them, in ips[]; the
 * keys of its segments and one segment, to store it (stack_segs.h). */
struct uw_frames {
	__u64 ips[MT_MAX_STACK_DEPTH];
	__u32 n;
	__u32 nseg;
	__u32 err;       /* a segment could not be stored */
	__u32 pad;
	/* Mixed into the last segment's key instead of 0: a provisional
	 * stack's id, so that its segments are its own (stack_segs.h). */
	__u64 tail;
	__u64 seg_ids[MT_STACK_SEGS];
	struct mt_stack seg;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uw_frames);
} unwind_frames SEC(".maps");

static __always_inline struct uw_frames *unwind_frames_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_frames, &zero);
}

/* The walk's state, per CPU (too large for the BPF stack); its frames
 * are in unwind_frames (a per-CPU value is at most 32 KiB).  The window
 * holds win_len bytes of user memory from win_base. */
struct unwind_scratch {
	__u32 pad0;
	__u32 win_len;
	struct mt_unwind_state u;
	__u64 win_base;
	struct mt_file_key defer_file; /* UW_DEFER: the file of u.pc */
	__u8 win[UW_WIN + UW_BACK];
	struct uw_row_slot rows[UW_ROW_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
} unwind_scratch SEC(".maps");

static __always_inline struct unwind_scratch *unwind_scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_scratch, &zero);
}

/* What bpf_find_vma() tells of the mapping of an address. */
struct vma_info {
	__u64 start, end, delta;
	struct mt_file_key file;
	__u32 exec;
	__u32 has_file;
};

static long vma_info_cb(struct task_struct *task, struct vm_area_struct *vma,
			struct vma_info *vi)
{
	struct file *f = vma->vm_file;

	vi->start = vma->vm_start;
	vi->end = vma->vm_end;
	vi->exec = (vma->vm_flags & MT_VM_EXEC) != 0;
	vi->delta = (vma->vm_pgoff << MT_UW_PAGE_SHIFT) - vma->vm_start;
	if (f) {
		struct inode *ino = f->f_inode;

		vi->file.ino = ino->i_ino;
		vi->file.dev = ino->i_sb->s_dev;
		vi->has_file = 1;
	}
	return 0;
}

static __always_inline __u64 vma_check(const struct uw_vma *e)
{
	__u64 h = mix(MT_MIX_SEED, e->start);

	h = mix(mix(h, e->end), e->delta);
	h = mix(mix(h, e->file.dev), e->file.ino);
	return h | 1; /* never 0: a zeroed slot is empty */
}

/* The process's cache, made on first use, emptied after exec. */
static __always_inline struct uw_vmas *vmas_of(__u32 pid, __u64 mm)
{
	__u32 zero = 0;
	struct uw_vmas *c = bpf_map_lookup_elem(&unwind_vmas, &pid);
	struct uw_vmas *z;

	if (!c) {
		z = bpf_map_lookup_elem(&unwind_vmas_zero, &zero);
		if (!z)
			return NULL;
		bpf_map_update_elem(&unwind_vmas, &pid, z, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&unwind_vmas, &pid);
		if (!c)
			return NULL;
	}
	if (c->mm != mm) {
		for (int i = 0; i < UW_VMA_SLOTS; i++)
			c->v[i].check = 0;
		c->mm = mm;
	}
	return c;
}

/* The mapping of PC: from the process's cache C (NULL: none), else from
 * the kernel (and cached).  Only executable mappings are cached.  Returns
 * 0, -1 when PC is in no executable mapping, or -2 when the kernel could
 * not say (the process's mmap_lock was taken). */
static __always_inline int find_mapping(struct uw_vmas *c, __u64 pc,
					struct uw_vma *out)
{
	struct vma_info vi = {};
	struct uw_vma *e;

	if (c) {
		for (int i = 0; i < UW_VMA_SLOTS; i++) {
			e = &c->v[i];
			if (pc >= e->start && pc < e->end) {
				*out = *e;
				if (out->check && out->check == vma_check(out))
					return 0;
			}
		}
	}
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, vma_info_cb, &vi,
			 0) == -EBUSY)
		return -2;
	if (!vi.exec || !vi.end)
		return -1;
	out->start = vi.start;
	out->end = vi.end;
	out->delta = vi.delta;
	out->file = vi.file;
	out->check = vma_check(out);
	if (vi.has_file && !out->file.dev && !out->file.ino)
		out->file.ino = 1; /* not to be taken for anonymous memory */
	if (c) {
		e = &c->v[c->next++ % UW_VMA_SLOTS];
		e->check = 0;
		e->start = out->start;
		e->end = out->end;
		e->delta = out->delta;
		e->file = out->file;
		e->check = out->check;
	}
	return 0;
}

/* Ask the loader, once, for the table of the file mapped at VI. */
static __always_inline void tell_missing(const struct mt_unwind_state *u,
					 const struct uw_vma *vi)
{
	struct mt_unwind_missing m = {
		.file = vi->file,
		.pid = u->pid,
		.start = vi->start,
		.end = vi->end,
	};
	__u64 now = bpf_ktime_get_ns();

	if (bpf_map_update_elem(&unwind_told, &vi->file, &now, BPF_NOEXIST))
		return;
	/* Not told (the ring is full): asked again at the next stack. */
	if (bpf_ringbuf_output(&unwind_missing, &m, sizeof(m), 0))
		bpf_map_delete_elem(&unwind_told, &vi->file);
}

/*
 * Is a stack through FILE (with no table) still to be copied for the
 * loader?  For MT_DEFER_WINDOW_NS after the file was first asked for:
 * its table comes by then, or never will (a file the loader could not
 * open, a table that did not fit), and stacks through it are cut short
 * there as before, rather than copied one by one for ever.
 */
static __always_inline bool defer_window(const struct mt_file_key *file)
{
	__u64 *told = bpf_map_lookup_elem(&unwind_told, file);

	return told && bpf_ktime_get_ns() - *told < MT_DEFER_WINDOW_NS;
}

/*
 * Process PID is mapping or has mapped new objects (a dlopen): ask the
 * loader for the tables of all its files now, before a stack meets them
 * (struct mt_unwind_missing with no file).  A stack that met a file with
 * no table yet would stop there; this way the first stacks through a
 * library dlopened a few milliseconds before are whole.
 */
static __always_inline void unwind_tell_mapped(__u32 pid)
{
	struct mt_unwind_missing m = { .pid = pid };

	bpf_ringbuf_output(&unwind_missing, &m, sizeof(m), 0);
}

/*
 * Find the mapping of u->pc and its file's table.  Returns 0; -1 when pc
 * is in no executable mapping (not a frame); 1 when pc is a frame but the
 * walk cannot go past it: its file's table is not loaded yet, or (--unwind
 * cfi) there is no table for it; 2 when its file's table is not loaded
 * yet and the stack is to be copied for the loader (defer_mode; the file
 * into DEFER_FILE).
 */
static __always_inline int locate(struct mt_unwind_state *u,
				  struct uw_vmas *c,
				  struct mt_file_key *defer_file)
{
	struct uw_vma vi;
	struct mt_unwind_module *m;
	int found = find_mapping(c, u->pc, &vi);

	if (found) {
		u->reason = found == -2 ? MT_TRUNC_VMA_BUSY : MT_TRUNC_BAD_STACK;
		return -1;
	}
	u->vm_start = vi.start;
	u->vm_end = vi.end;
	u->vm_delta = vi.delta;
	u->has_rows = 0;
	u->reason = MT_TRUNC_NO_CFI;
	if (unwind_mode == MT_UNWIND_FP || (!vi.file.dev && !vi.file.ino))
		return unwind_mode == MT_UNWIND_CFI ? 1 : 0;
	*defer_file = vi.file;
	if (defer_mode == 2)
		return 2; /* the test hook: every stack is copied */
	m = bpf_map_lookup_elem(&unwind_modules, &vi.file);
	if (!m) {
		tell_missing(u, &vi);
		u->reason = MT_TRUNC_NO_TABLE;
		return defer_mode && defer_window(&vi.file) ? 2 : 1;
	}
	u->mod = *m;
	u->has_rows = m->nrows > 0;
	return !u->has_rows && unwind_mode == MT_UNWIND_CFI ? 1 : 0;
}

/*
 * The user word at ADDR, from the window, which is moved when it does not
 * hold it: to run from UW_BACK bytes below ADDR (a step reads a saved rbp
 * just below the return address it read first) to the end of the aligned
 * UW_WIN bytes that hold ADDR.  So a window lies in one page, and can be
 * read whenever ADDR can, at the top of a stack too; and only what a walk
 * going up can use is copied (the copy's length is most of its cost: from
 * ADDR's aligned chunk's start, some 5% slower).  0, or -1 when ADDR
 * cannot be read.
 */
_Static_assert(UW_PAGE % UW_WIN == 0, "a window lies in one page");

static __always_inline int stack_word(struct unwind_scratch *sc, __u64 addr,
				      __u64 *out)
{
	__u64 off = addr - sc->win_base;
	__u64 page = addr & ~(__u64)(UW_PAGE - 1);
	__u64 end = (addr & ~(__u64)(UW_WIN - 1)) + UW_WIN;
	__u64 start = addr - UW_BACK;
	__u32 len;

	if (addr < sc->win_base || off + 8 > sc->win_len) {
		/* A word across two windows (never on a stack: 8-aligned). */
		if (end - addr < 8)
			return bpf_probe_read_user(out, 8, (void *)addr) ? -1 : 0;
		if (start < page || start > addr)
			start = page;
		len = (__u32)(end - start);
		/* The bound below always holds; it is for the verifier, and
		 * the barrier keeps clang from dropping it. */
		asm volatile("" : "+r"(len));
		if (len > UW_WIN + UW_BACK ||
		    bpf_probe_read_user(sc->win, len, (void *)start)) {
			sc->win_len = 0;
			return -1;
		}
		sc->win_base = start;
		sc->win_len = len;
		off = addr - start;
	}
	if (off > UW_WIN + UW_BACK - 8)
		return -1;
	*out = *(__u64 *)(sc->win + off);
	return 0;
}

/* The step itself (find_row, uw_fp_step, uw_cfi_step), shared with the
 * loader's unwinder of deferred copies (src/loader/unwind/deferred_unwind.c). */
#define UW_STATE_T struct mt_unwind_state
#define UW_MODE unwind_mode
#define uw_read_word(ctx, addr, out) \
	stack_word((struct unwind_scratch *)(ctx), (addr), (out))
#include "unwind_step.h"

static __always_inline __u64 row_check(__u64 key, __u64 row)
{
	return mix(mix(MT_MIX_SEED, key), row) | 1; /* never 0: empty */
}

/* find_row(M, OFF) through this CPU's cache of rows. */
static __always_inline struct mt_unwind_row cached_row(
	struct unwind_scratch *sc, const struct mt_unwind_module *m, __u64 off)
{
	__u64 key = (__u64)m->row_first << 32 | off;
	__u32 i = (__u32)((key * 0x9e3779b97f4a7c15ULL) >> (64 - UW_ROW_BITS));
	struct uw_row_slot *e = &sc->rows[i & (UW_ROW_SLOTS - 1)];
	struct mt_unwind_row r;
	__u64 bits;

	if (off >> 32)
		return find_row(m, off);
	if (e->key == key) {
		bits = e->row;
		if (e->check == row_check(key, bits)) {
			__builtin_memcpy(&r, &bits, sizeof(r));
			return r;
		}
	}
	r = find_row(m, off);
	__builtin_memcpy(&bits, &r, sizeof(bits));
	e->check = 0;
	e->key = key;
	e->row = bits;
	e->check = row_check(key, bits);
	return r;
}

/*
 * What the steps of a walk share, on the walking program's stack
 * (bpf_loop's context): this CPU's scratch and the process's mapping
 * cache, looked up once a walk rather than once a frame and once a
 * mapping met (10% of the return program on sqlite3 and python3).
 */
struct uw_walk {
	struct unwind_scratch *sc;
	struct uw_frames *fr;
	struct uw_vmas *vmas;      /* NULL: no cache (full), the kernel asked */
};

/* bpf_loop() callback: store the frame at pc, then step to its caller.
 * Returns 1 to end the walk. */
static long unwind_step(__u64 i, void *ctx)
{
	struct uw_walk *w = ctx;
	struct unwind_scratch *sc = w->sc;
	struct uw_frames *fr = w->fr;
	struct mt_unwind_state *u;
	struct mt_unwind_row row;
	int where = 0;
	__u32 n;

	if (!sc || !fr)
		return 1;
	u = &sc->u;
	if (!u->pc) {
		u->status = UW_DONE; /* the outermost frame returned to 0 */
		return 1;
	}
	if (u->pc < u->vm_start || u->pc >= u->vm_end)
		where = locate(u, w->vmas, &sc->defer_file);
	n = u->n;
	if (where == 2 && n < MT_MAX_STACK_DEPTH) {
		/* The provisional stack: the frames so far and this one; the
		 * loader goes on from this frame (unwind_defer.h). */
		fr->ips[n] = u->pc;
		u->status = UW_DEFER;
		return 1;
	}
	/* The first pc is the return address the kernel saved at the call,
	 * real code even when its mapping cannot be looked up now. */
	if (where < 0 && u->steps == 0)
		where = 1;
	if (where < 0)
		return UW_CUT(u, u->reason);
	if (n >= MT_MAX_STACK_DEPTH)
		return UW_CUT(u, MT_TRUNC_DEPTH);
	if (where > 0 || !u->has_rows) {
		fr->ips[n] = u->pc;
		u->n = n + 1;
		u->steps++;
		if (where == 0)
			return uw_fp_step(u, sc);
		return UW_CUT(u, u->reason);
	}
	/* A return address is past its call: look up the call itself. */
	row = cached_row(sc, &u->mod,
			 u->pc - (u->steps > 0 ? 1 : 0) + u->vm_delta);
	/* The allocator's own frames (operator new calling malloc) on top
	 * of the stack are left out: the first frame is new's caller. */
	if (n > 0 || !(row.kind & MT_UW_SKIP)) {
		fr->ips[n] = u->pc;
		u->n = n + 1;
	}
	u->steps++;
	return uw_cfi_step(u, sc, row);
}

/* Stacks cut short, per process (struct mt_trunc_proc): made on demand
 * (an idle trace holds no kernel memory for it); once it is full, a new
 * process counts under pid 0, "other processes". */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_TRUNC_PROCS);
	__type(key, __u32);
	__type(value, struct mt_trunc_proc);
} trunc_procs SEC(".maps");

/* The current process had a stack cut short for REASON: counted, in all
 * and under the process. */
static __noinline void uw_count_cut(__u32 reason)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct mt_trunc_proc *t, zero = {};

	if (reason >= MT_TRUNC__COUNT)
		reason = MT_TRUNC_BAD_STACK;
	count(MT_CNT_STACKS_TRUNCATED, 1);
	count(MT_CNT_TRUNC + reason, 1);
	t = bpf_map_lookup_elem(&trunc_procs, &pid);
	if (!t) {
		bpf_get_current_comm(zero.comm, sizeof(zero.comm));
		if (bpf_map_update_elem(&trunc_procs, &pid, &zero, BPF_NOEXIST)) {
			pid = 0;
			bpf_map_update_elem(&trunc_procs, &pid, &zero, BPF_NOEXIST);
		}
		t = bpf_map_lookup_elem(&trunc_procs, &pid);
		if (!t)
			return;
	}
	__sync_fetch_and_add(&t->n[reason], 1);
}

/*
 * Walk the user stack from REGS with this CPU's scratch SC, into its
 * frames FR.  Returns the number of frames stored (fr->ips[0..n)).
 */
static __always_inline int unwind_user_stack(struct pt_regs *regs,
					     struct unwind_scratch *sc,
					     struct uw_frames *fr)
{
	struct mt_unwind_state *u = &sc->u;
	struct uw_walk w;

	u->pc = regs->ip;
	u->sp = regs->sp;
	u->bp = regs->bp;
	u->n = 0;
	u->steps = 0;
	u->status = UW_RUN;
	u->reason = MT_TRUNC_DEPTH; /* the loop's bound, if nothing else */
	u->vm_start = u->vm_end = 0;
	sc->win_len = 0;
	u->pid = bpf_get_current_pid_tgid() >> 32;
	u->mm = (__u64)bpf_get_current_task_btf()->mm;
	w.sc = sc;
	w.fr = fr;
	w.vmas = vmas_of(u->pid, u->mm);
	bpf_loop(MT_MAX_STACK_DEPTH + 1, unwind_step, &w, 0);
	if (u->status == UW_DEFER)
		return (int)u->n + 1; /* the frame with no table too */
	if (u->status != UW_DONE)
		uw_count_cut(u->reason);
	return (int)u->n;
}

#endif /* MEMTRACE_BPF_UNWIND_H */
