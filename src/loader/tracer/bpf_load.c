// SPDX-License-Identifier: MIT
/* bpf_load.c: load the BPF object, attach with the best link mode. */
#include "bpf_load.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_log.h"
#include "errmsg.h"
#include "memleak.skel.h"
#include "privs.h"
#include "sampling_tables.h"
#include "startup_clock.h"
#include "timeline.h"
#include "unwinder.h"
#include "deferred_unwind.h"
#include "loop.h"

/*
 * The object's plain maps are made on a thread of their own while this
 * one reads the kernel's BTF, which libbpf would do one after the other
 * (about 50 ms each on a small VM: the 1M-entry allocs map and the
 * preallocated process maps; the BTF's 5 MB); libbpf then takes them as
 * made (bpf_map__reuse_fd()).  Left to libbpf: its own maps (.rodata,
 * .bss) and the kinds whose values need BTF (task storage) or that are
 * not plain (the queue).  A map that cannot be made here is made by
 * libbpf, which says why it failed.
 */
#define MAX_EARLY_MAPS 64

struct early_map {
	struct bpf_map *map;
	char name[BPF_OBJ_NAME_LEN];
	enum bpf_map_type type;
	__u32 key_size, value_size, max_entries, flags;
	int fd;
};

struct early_maps {
	struct early_map v[MAX_EARLY_MAPS];
	size_t n;
	pthread_t thread;
	bool started;
};

static bool made_early(const struct bpf_map *map)
{
	if (bpf_map__is_internal(map))
		return false;
	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_RINGBUF:
		return true;
	default:
		return false;
	}
}

static void *make_maps(void *arg)
{
	struct early_maps *e = arg;

	for (size_t i = 0; i < e->n; i++) {
		struct early_map *m = &e->v[i];
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = m->flags);

		m->fd = bpf_map_create(m->type, m->name, m->key_size,
				       m->value_size, m->max_entries, &opts);
	}
	return NULL;
}

/* Start making SKEL's plain maps (sized, not loaded) on a thread. */
static void early_maps_start(struct memleak_bpf *skel, struct early_maps *e)
{
	struct bpf_map *map;

	e->n = 0;
	e->started = false;
	bpf_object__for_each_map(map, skel->obj) {
		struct early_map *m = &e->v[e->n];

		if (!made_early(map) || e->n == MAX_EARLY_MAPS)
			continue;
		m->map = map;
		snprintf(m->name, sizeof(m->name), "%s", bpf_map__name(map));
		m->type = bpf_map__type(map);
		m->key_size = bpf_map__key_size(map);
		m->value_size = bpf_map__value_size(map);
		m->max_entries = bpf_map__max_entries(map);
		m->flags = bpf_map__map_flags(map);
		m->fd = -1;
		e->n++;
	}
	e->started = pthread_create(&e->thread, NULL, make_maps, e) == 0;
	if (!e->started)
		e->n = 0; /* libbpf makes them all */
}

/* Wait for the maps, and hand those made to libbpf. */
static void early_maps_take(struct early_maps *e)
{
	if (e->started)
		pthread_join(e->thread, NULL);
	e->started = false;
	for (size_t i = 0; i < e->n; i++) {
		struct early_map *m = &e->v[i];

		if (m->fd >= 0) {
			/* libbpf keeps a copy; if it cannot, it makes the map */
			bpf_map__reuse_fd(m->map, m->fd);
			close(m->fd);
		}
	}
	e->n = 0;
}

/*
 * libbpf reads the kernel's BTF (5 MB) into a buffer and copies it into
 * another: 11 MB of memory never touched, some 2,700 page faults, which
 * on a VM cost as much as 50 ms; the probes' symbol tables follow.  The
 * kernel fills a range in one go far faster (MADV_POPULATE_WRITE, Linux
 * 5.14; before, nothing is done): until the probes are attached, blocks
 * that large come from the heap (not mmap()), whose top is filled first
 * and kept when freed.  Then the usual thresholds are back, and what is
 * free is given back.
 */
#define HEAP_SLACK (4u << 20)
#define MALLOC_DEFAULT_THRESHOLD (128 * 1024)

static void heap_fill(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	uintptr_t a, end;
	size_t len;
	char *p;

	if (page <= 0 || stat("/sys/kernel/btf/vmlinux", &st) ||
	    st.st_size <= 0 || st.st_size > INT_MAX / 8)
		return;
	/* The filled block itself comes from the heap: above the threshold
	 * (which malloc caps at 32 MiB: then nothing is done). */
	len = 2 * (size_t)st.st_size + HEAP_SLACK;
	if (!mallopt(M_MMAP_THRESHOLD, (int)(len + HEAP_SLACK)) ||
	    !mallopt(M_TRIM_THRESHOLD, 2 * (int)len))
		return;
	p = malloc(len);
	if (!p)
		return;
	a = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	end = ((uintptr_t)p + len) & ~((uintptr_t)page - 1);
	if (end > a)
		madvise((void *)a, end - a, MADV_POPULATE_WRITE);
	free(p);
}

static void heap_release(void)
{
	mallopt(M_MMAP_THRESHOLD, MALLOC_DEFAULT_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, MALLOC_DEFAULT_THRESHOLD);
	malloc_trim(0);
}

/*
 * For tests: MEMTRACE_THREAD_SLOTS=N (a power of two up to 2^20) slots of
 * per-thread state instead of 8,192 (bpf/thread_slots.h); with 1, most
 * threads keep theirs in task storage.  Anything else: the default (as
 * MEMTRACE_LINKS, a knob for tests and benchmarks).
 */
static void thread_slots_size(struct memleak_bpf *skel)
{
	const char *env = getenv("MEMTRACE_THREAD_SLOTS");
	char *end;
	unsigned long n;

	if (!env)
		return;
	errno = 0;
	n = strtoul(env, &end, 10);
	if (errno || end == env || *end || n == 0 || n > (1UL << 20) ||
	    (n & (n - 1)))
		return;
	bpf_map__set_max_entries(skel->maps.threads, (__u32)n);
	skel->rodata->thread_slot_mask = (__u32)n - 1;
}

/* Open and load the BPF object for links of MODE.  -errno. */
static int load_bpf(const struct mt_options *o, bool follow_only,
		    enum mt_link_mode mode, struct memleak_bpf **out)
{
	struct memleak_bpf *skel = memleak_bpf__open();
	long page = sysconf(_SC_PAGESIZE);
	uint64_t t0 = mt_loop_now_ns();
	const char *trunc_env;
	struct early_maps early;
	int err;

	*out = NULL;
	if (!skel)
		return -errno;
	skel->rodata->page_size = page > 0 ? (__u64)page : 4096;
	skel->rodata->bench_part = o->bench_part;
	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->follow_only = follow_only;
	/* Not following: "followed" stays empty, follow_fork is never
	 * attached (mt_follow_attach): neither is made in full. */
	if (!follow_only) {
		bpf_map__set_max_entries(skel->maps.followed, 1);
		bpf_program__set_autoload(skel->progs.follow_fork, false);
	}
	bpf_map__set_max_entries(skel->maps.allocs, o->max_allocs);
	/* For benchmarks: the outstanding blocks preallocated, as before
	 * they were made on demand (what that costs per call). */
	if (getenv("MEMTRACE_PREALLOC_ALLOCS"))
		bpf_map__set_map_flags(skel->maps.allocs, 0);
	thread_slots_size(skel);
	/* Test hook: room for so many processes' cut stacks (trunc_procs.h:
	 * an exited process's entry is moved out at its harvest). */
	trunc_env = getenv("MEMTRACE_TRUNC_PROCS");
	if (trunc_env)
		bpf_map__set_max_entries(skel->maps.trunc_procs,
					 (__u32)strtoul(trunc_env, NULL, 10) ?: 1);
	/* System-wide, a stack copied for deferred unwinding keeps a stats
	 * entry of its own (a provisional stack) until its process exits and
	 * is harvested: a busy program's first run makes tens of thousands
	 * in a second, and a full map drops allocations.  Four times the
	 * stacks then, unless --max-stacks says otherwise. */
	bpf_map__set_max_entries(skel->maps.stats,
				 !o->pid && !o->cmd && o->unwind != MT_UNWIND_FP &&
						 o->max_stacks == MT_DEFAULT_MAX_STACKS
					 ? 4 * o->max_stacks
					 : o->max_stacks);
	/* Segments: a stack takes (frames + 22) / 23 of them, less the
	 * outer ones it shares with others (memleak.h). */
	bpf_map__set_max_entries(skel->maps.stacks,
				 o->max_stacks > UINT32_MAX / MT_STACK_SEGS_PER_STACK
					 ? UINT32_MAX
					 : o->max_stacks * MT_STACK_SEGS_PER_STACK);
	skel->rodata->sample_bytes = o->sample_bytes;
	if (!o->sample_bytes) /* "sampled" serves -s only */
		bpf_map__set_max_entries(skel->maps.sampled, 1);
	skel->rodata->unwind_mode = o->unwind;
	mt_deferred_unwind_size(skel, o->unwind != MT_UNWIND_FP,
				!o->pid && !o->cmd);
	mt_unwinder_size(skel, o->unwind != MT_UNWIND_FP, o->max_unwind_rows);
	mt_timeline_size(skel, o->timeline_interval > 0);
	mt_sampling_tables((__u32 *)skel->rodata->log2_tab,
			   (__u32 *)skel->rodata->g_tab);
	if (mode != MT_LINK_PERF) {
		bpf_program__set_expected_attach_type(skel->progs.uprobe_entry,
						      MT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.uprobe_return,
						      MT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.dl_mapped,
						      MT_BPF_TRACE_UPROBE_MULTI);
	}
	/* The session program calls a kfunc older kernels lack. */
	if (mode == MT_LINK_SESSION)
		bpf_program__set_expected_attach_type(skel->progs.uprobe_session,
						      MT_BPF_TRACE_UPROBE_SESSION);
	else
		bpf_program__set_autoload(skel->progs.uprobe_session, false);
	early_maps_start(skel, &early);
	/* The kernel's BTF, read now (the exec tracepoint's target is looked
	 * up in it), while the maps are made; the load then finds it read. */
	err = bpf_program__set_attach_target(skel->progs.follow_exec, 0,
					     "sched_process_exec");
	early_maps_take(&early);
	mt_startup_add(MT_STARTUP_OPEN, t0);
	t0 = mt_loop_now_ns();
	if (!err)
		err = memleak_bpf__load(skel);
	mt_startup_add(MT_STARTUP_VERIFY, t0);
	if (err) {
		memleak_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

/*
 * The best link mode to try first: when sampling, uprobe sessions (an
 * unsampled call then skips its return probe); else uprobe_multi (one
 * link per object and program: quick to attach and to remove).
 * MEMTRACE_LINKS=perf|multi caps it, so that the tests and benchmarks
 * can run the fallbacks on a new kernel.
 */
static int first_link_mode(const struct mt_options *o)
{
	const char *cap = getenv("MEMTRACE_LINKS");
	int mode = o->sample_bytes ? MT_LINK_SESSION : MT_LINK_MULTI;

	if (cap && strcmp(cap, "perf") == 0)
		return MT_LINK_PERF;
	if (cap && strcmp(cap, "multi") == 0)
		return MT_LINK_MULTI;
	return mode;
}

static const char *const link_mode_names[] = {
	[MT_LINK_PERF] = "perf-event uprobes",
	[MT_LINK_MULTI] = "uprobe_multi links",
	[MT_LINK_SESSION] = "uprobe sessions",
};

static int load_and_attach(const struct mt_options *o, bool follow_only,
			   struct memleak_bpf **skel, mt_attach_fn attach,
			   void *ctx, int *attach_err)
{
	int ret = -EOPNOTSUPP;
	int mode = first_link_mode(o);
	uint64_t t0;

	*attach_err = 0;
	for (; mode >= MT_LINK_PERF && ret == -EOPNOTSUPP; mode--) {
		/* libbpf's warnings about an attempt that fails are dropped:
		 * memtrace falls back, or says what failed itself. */
		mt_bpf_log_hold();
		ret = load_bpf(o, follow_only, (enum mt_link_mode)mode, skel);
		if (ret)
			mt_bpf_log_release(false);
		if (ret && mode != MT_LINK_PERF) {
			if (o->verbose)
				fprintf(stderr, "memtrace: %s: the BPF programs do not load (%s): trying %s\n",
					link_mode_names[mode], strerror(-ret),
					link_mode_names[mode - 1]);
			ret = -EOPNOTSUPP;
			continue;
		}
		if (ret == -EPERM || ret == -EACCES)
			/* main() checked the capabilities: most often this
			 * is the verifier refusing a program. */
			return mt_fail("the kernel refused the BPF programs (%s): its verifier, a security policy (lockdown, an LSM) or missing %s; -v shows why",
				       strerror(-ret), MT_CAPS_NEEDED);
		if (ret == -ENOMEM)
			return mt_fail("cannot load the BPF program: out of memory for its maps (--max-allocs %u, --max-stacks %u): try smaller values",
				       o->max_allocs, o->max_stacks);
		if (ret == -E2BIG)
			return mt_fail("cannot load the BPF program: a map is too large for this kernel (--max-allocs %u, --max-stacks %u): try smaller values",
				       o->max_allocs, o->max_stacks);
		if (ret)
			return mt_fail("cannot load the BPF program: %s (needs a kernel with BPF, BTF and uprobes; -v shows details)",
				       strerror(-ret));
		t0 = mt_loop_now_ns();
		ret = attach(*skel, (enum mt_link_mode)mode, ctx);
		mt_startup_add(MT_STARTUP_ATTACH, t0);
		mt_bpf_log_release(ret == 0);
		if (ret) {
			if (o->verbose && ret == -EOPNOTSUPP && mode != MT_LINK_PERF)
				fprintf(stderr, "memtrace: %s: not attachable here: trying %s\n",
					link_mode_names[mode],
					link_mode_names[mode - 1]);
			memleak_bpf__destroy(*skel);
			*skel = NULL;
		} else if (o->verbose) {
			fprintf(stderr, "memtrace: probes attached as %s\n",
				link_mode_names[mode]);
		}
	}
	*attach_err = ret;
	if (ret == -EPERM || ret == -EACCES)
		return mt_fail("not allowed to attach uprobes: need %s",
			       MT_CAPS_NEEDED);
	return 0;
}

int mt_bpf_load_and_attach(const struct mt_options *o, bool follow_only,
			   struct memleak_bpf **skel, mt_attach_fn attach,
			   void *ctx, int *attach_err)
{
	int ret;

	heap_fill();
	ret = load_and_attach(o, follow_only, skel, attach, ctx, attach_err);
	heap_release();
	return ret;
}
