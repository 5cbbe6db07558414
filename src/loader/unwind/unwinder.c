// SPDX-License-Identifier: MIT
/* unwinder.c: compiling unwind tables into the BPF unwinder's maps. */
#include "unwinder.h"
#include "vma_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "forwarders.h"
#include "images.h"
#include "kernel_vmas.h"
#include "memleak.skel.h"
#include "startup_clock.h"
#include "unwind_cache.h"
#include "unwind_table.h"
#include "loop.h"
#include "map_chunks.h"

/* Page indices per row, generously: a table has far fewer pages. */
#define PAGES_PER_ROWS 4

/* A file whose table is to be made. */
struct mt_unwind_job {
	int fd;
	off_t size;               /* the file's (next_job()) */
	struct mt_file_key key;
	char *name;
	bool cached_only;         /* from the cache, or not at all (for now) */
};

/* For tests (test_table_queue.py): the builder sleeps MS milliseconds
 * before making the table of a file whose name holds NAME, as a large
 * table on a loaded machine would take ("NAME:MS" in MEMTRACE_SLOW_TABLE). */
static void slow_table_hook(const char *name)
{
	const char *env = getenv("MEMTRACE_SLOW_TABLE");
	const char *colon = env ? strrchr(env, ':') : NULL;
	char want[256];
	long ms;

	if (!colon || (size_t)(colon - env) >= sizeof(want))
		return;
	memcpy(want, env, (size_t)(colon - env));
	want[colon - env] = '\0';
	ms = strtol(colon + 1, NULL, 10);
	if (want[0] && ms > 0 && strstr(name, want))
		nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L },
			  NULL);
}

/* Where a table came from (for -v). */
enum { TABLE_BUILT, TABLE_CACHED, TABLE_FROM_CACHE, TABLE_NOT_CACHED };

/* A table made before the maps were there (mt_unwinder_start()). */
struct mt_unwind_pending {
	struct mt_file_key key;
	char *name;
	struct mt_unwind_table t;
	uint64_t ns;              /* what making it took */
	int err;                  /* or why it could not be made */
	int src;                  /* TABLE_* */
};

static void *builder(void *arg);

/* Chunks of MAX (a ceiling) elements, 2^SHIFT a chunk. */
static uint32_t chunks_of(uint64_t max, unsigned shift)
{
	return (uint32_t)((max + (1ULL << shift) - 1) >> shift);
}

void mt_unwinder_size(struct memleak_bpf *skel, bool on, uint32_t max_rows)
{
	/* Without tables the maps are not used: keep them tiny. */
	bpf_map__set_max_entries(skel->maps.unwind_rows,
				 on ? chunks_of(max_rows, MT_UW_ROWS_CHUNK_SHIFT)
				    : 1);
	bpf_map__set_max_entries(skel->maps.unwind_pages,
				 on ? chunks_of(max_rows / PAGES_PER_ROWS,
						MT_UW_PAGES_CHUNK_SHIFT)
				    : 1);
}

static int on_missing(void *ctx, void *data, size_t size);

int mt_unwinder_start(struct mt_unwinder *u, bool on, bool verbose)
{
	int ret;

	memset(u, 0, sizeof(*u));
	u->modules_fd = u->vmas_fd = -1;
	u->ready_fd = -1;
	u->on = on;
	u->verbose = verbose;
	u->begun = true;
	pthread_mutex_init(&u->lock, NULL);
	pthread_mutex_init(&u->load_lock, NULL);
	pthread_mutex_init(&u->cache_lock, NULL);
	pthread_cond_init(&u->wake, NULL);
	pthread_cond_init(&u->idle, NULL);
	if (!on)
		return 0;
	u->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (u->ready_fd < 0) {
		ret = -errno;
		mt_unwinder_free(u);
		return ret;
	}
	for (size_t i = 0; i < sizeof(u->threads) / sizeof(u->threads[0]); i++) {
		ret = -pthread_create(&u->threads[i], NULL, builder, u);
		if (ret)
			break;
		u->nthreads++;
		u->started = true;
	}
	if (!u->started) {
		mt_unwinder_free(u);
		return ret;
	}
	return 0;
}

void mt_unwinder_use_cache(struct mt_unwinder *u, const char *dir,
			   uint64_t max_bytes)
{
	pthread_mutex_lock(&u->lock);
	if (u->on && !u->cache && (u->cache = malloc(sizeof(*u->cache)))) {
		u->cache->dirfd = -1;
		u->cache->dir[0] = '\0';
		u->cache_dir = dir ? strdup(dir) : NULL;
		u->cache_max = max_bytes;
	}
	pthread_mutex_unlock(&u->lock);
}

int mt_unwinder_init(struct mt_unwinder *u, struct memleak_bpf *skel, bool on,
		     bool verbose)
{
	struct mt_map_chunks rows, pages;
	int ret = 0;

	if (!u->begun && (ret = mt_unwinder_start(u, on, verbose)) != 0)
		return ret;
	if (!u->on)
		return 0;
	u->skel = skel;
	ret = mt_map_chunks_init(&rows, bpf_map__fd(skel->maps.unwind_rows),
				 "uw_rows", sizeof(struct mt_unwind_row),
				 1U << MT_UW_ROWS_CHUNK_SHIFT,
				 bpf_map__max_entries(skel->maps.unwind_rows));
	if (ret)
		return ret;
	ret = mt_map_chunks_init(&pages, bpf_map__fd(skel->maps.unwind_pages),
				 "uw_pages", sizeof(uint64_t),
				 1U << MT_UW_PAGES_CHUNK_SHIFT,
				 bpf_map__max_entries(skel->maps.unwind_pages));
	if (ret) {
		mt_map_chunks_free(&rows);
		return ret;
	}
	u->missing = ring_buffer__new(bpf_map__fd(skel->maps.unwind_missing),
				      on_missing, u, NULL);
	if (!u->missing) {
		ret = errno ? -errno : -ENOMEM;
		mt_map_chunks_free(&rows);
		mt_map_chunks_free(&pages);
		return ret;
	}
	/* The builder may be at work: it sees the maps, and loads the
	 * tables it made before, once they are all set. */
	pthread_mutex_lock(&u->lock);
	u->rows = rows;
	u->pages = pages;
	u->modules_fd = bpf_map__fd(skel->maps.unwind_modules);
	u->vmas_fd = bpf_map__fd(skel->maps.unwind_vmas);
	u->maps_ready = true;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

static bool known(const struct mt_unwinder *u, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == dev && u->files[i].ino == ino)
			return true;
	return false;
}

static int remember(struct mt_unwinder *u, uint64_t dev, uint64_t ino)
{
	struct mt_unwind_file *nv = realloc(u->files,
					    (u->nfiles + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	u->files = nv;
	u->files[u->nfiles].dev = dev;
	u->files[u->nfiles].ino = ino;
	u->files[u->nfiles].ready = false;
	u->nfiles++;
	return 0;
}

static void forget_file(struct mt_unwinder *u, const struct mt_file_key *key)
{
	for (size_t i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == key->dev && u->files[i].ino == key->ino) {
			u->files[i] = u->files[--u->nfiles];
			return;
		}
}

/* The table of KEY is loaded, or will not be (the lock held): whoever
 * waits for it is told (mt_unwinder_ready_fd()). */
static void file_done(struct mt_unwinder *u, const struct mt_file_key *key)
{
	uint64_t one = 1;

	for (size_t i = 0; i < u->nfiles; i++)
		if (u->files[i].dev == key->dev && u->files[i].ino == key->ino)
			u->files[i].ready = true;
	if (u->ready_fd >= 0 && write(u->ready_fd, &one, sizeof(one)) < 0) {
		/* Full (2^64 - 2 unread): it is readable anyway. */
	}
}

/* Copy T into the maps (making the chunks it needs) and publish it under
 * KEY.  -ENOSPC when full. */
static int load_table(struct mt_unwinder *u, const struct mt_file_key *key,
		      const struct mt_unwind_table *t)
{
	struct mt_unwind_module m = {
		.row_first = u->rows_used,
		.nrows = t->nrows,
		.page_first = u->pages_used,
		.npages = t->npages,
		.first_page = t->first_page,
	};
	uint32_t npages = t->nrows ? t->npages + 1 : 0;
	struct mt_unwind_row *rows = mt_map_chunks_base(&u->rows);
	uint64_t *pages = mt_map_chunks_base(&u->pages);
	int ret = mt_map_chunks_reserve(&u->rows,
					(uint64_t)u->rows_used + t->nrows);

	if (!ret)
		ret = mt_map_chunks_reserve(&u->pages,
					    (uint64_t)u->pages_used + npages);
	if (ret)
		return ret;
	memcpy(rows + u->rows_used, t->rows, t->nrows * sizeof(*t->rows));
	for (uint32_t i = 0; i < npages; i++)
		pages[u->pages_used + i] = t->pages[i];
	/* The rows are in place before the table can be found. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (bpf_map_update_elem(u->modules_fd, key, &m, BPF_ANY))
		return -errno;
	u->rows_used += t->nrows;
	u->pages_used += npages;
	u->total_rows += t->nrows;
	__atomic_add_fetch(&u->tables_loaded, 1, __ATOMIC_RELEASE);
	return 0;
}

/* No function is probed, for mt_cxx_funcs_read(): every new and delete. */
static bool none_probed(const char *name, bool via_plt, void *ctx)
{
	(void)name;
	(void)via_plt;
	(void)ctx;
	return false;
}

/* Load table T of the file KEY (known as NAME), made in NS (or ERR), and
 * say so (the builder thread, once the maps are there). */
static void publish(struct mt_unwinder *u, const struct mt_file_key *key,
		    const char *name, struct mt_unwind_table *t, uint64_t ns,
		    int err, int src)
{
	static const char *const how[] = { "built in", "built in",
					   "from cache in" };

	int ret;

	pthread_mutex_lock(&u->load_lock);
	ret = err ? err : load_table(u, key, t);
	if (ret == -ENOSPC && !u->full++)
		fprintf(stderr, "memtrace: unwind tables full at %u rows: stacks through %s and later files are cut short (--max-unwind-rows)\n",
			u->rows_used, name);
	else if (ret && u->verbose)
		fprintf(stderr, "memtrace: no unwind table for %s: %s\n", name,
			strerror(-ret));
	else if (u->verbose)
		fprintf(stderr, "memtrace: unwind table of %s: %u rows (%u unfollowable), %zu bytes, %s %.*f ms%s\n",
			name, t->nrows, t->nstop,
			t->nrows * sizeof(*t->rows) +
				(t->nrows ? t->npages + 1 : 0) * sizeof(uint32_t),
			how[src], src == TABLE_FROM_CACHE ? 3 : 1,
			(double)ns / 1e6, src == TABLE_CACHED ? ", cached" : "");
	pthread_mutex_unlock(&u->load_lock);
	mt_unwind_table_free(t);
}

/* The cache, opened when first needed (the builder thread); NULL when
 * tables are not kept. */
static struct mt_unwind_cache *cache_of(struct mt_unwinder *u)
{
	int ret;

	if (!u->cache || u->cache_tried)
		return u->cache && u->cache->dirfd >= 0 ? u->cache : NULL;
	u->cache_tried = true;
	ret = mt_unwind_cache_open(u->cache, u->cache_dir, u->cache_max);
	if (ret && u->verbose)
		fprintf(stderr, "memtrace: unwind tables are not kept on disk: %s: %s\n",
			u->cache->dir[0] ? u->cache->dir : "no cache directory",
			ret == -EPERM ? "owned by another user or writable by others"
				      : strerror(-ret));
	return ret ? NULL : u->cache;
}

/* Compile the table of the file open on FD into T, or load it from the
 * cache (*SRC says which); its time into *NS. */
static int build_file(struct mt_unwinder *u, int fd, struct mt_unwind_table *t,
		      uint64_t *ns, int *src, bool cached_only)
{
	struct mt_skip_range skip[32];
	struct mt_cxx_funcs cxx;
	uint64_t t0 = mt_loop_now_ns();
	struct mt_unwind_cache *c;
	struct mt_unwind_cache_key ckey;
	size_t nskip = 0;
	int ret, found;

	*src = TABLE_BUILT;
	pthread_mutex_lock(&u->cache_lock);
	c = cache_of(u);
	if (c && mt_unwind_cache_key_of(fd, &ckey))
		c = NULL;
	found = c && mt_unwind_cache_lookup(c, &ckey, t) == 0;
	pthread_mutex_unlock(&u->cache_lock);
	if (found) {
		*src = TABLE_FROM_CACHE;
		*ns = mt_loop_now_ns() - t0;
		mt_startup_add(MT_STARTUP_TABLES, t0);
		return 0;
	}
	if (cached_only) {
		*src = TABLE_NOT_CACHED;
		return -ENOENT;
	}

	/* Operator new and delete: allocator code, whoever probes it. */
	if (mt_cxx_funcs_read(fd, none_probed, NULL, &cxx) == 0) {
		for (size_t i = 0; i < cxx.n && nskip < 32; i++)
			skip[nskip++] = (struct mt_skip_range){ cxx.v[i].offset,
								cxx.v[i].end };
		mt_cxx_funcs_free(&cxx);
	}
	ret = mt_unwind_table_build(fd, skip, nskip, t);
	*ns = mt_loop_now_ns() - t0;
	__atomic_add_fetch(&u->build_ns, *ns, __ATOMIC_RELAXED);
	mt_startup_add(MT_STARTUP_TABLES, t0);
	pthread_mutex_lock(&u->cache_lock);
	if (!ret && c && mt_unwind_cache_store(c, &ckey, t) == 0)
		*src = TABLE_CACHED;
	pthread_mutex_unlock(&u->cache_lock);
	return ret;
}

/* Keep a table made before the maps are there (the lock held). */
static void keep_pending(struct mt_unwinder *u, struct mt_unwind_job *job,
			 struct mt_unwind_table *t, uint64_t ns, int err,
			 int src)
{
	struct mt_unwind_pending *nv = realloc(u->pending,
					       (u->npending + 1) * sizeof(*nv));

	if (!nv) {
		mt_unwind_table_free(t);
		free(job->name);
		return;
	}
	u->pending = nv;
	nv[u->npending++] = (struct mt_unwind_pending){ job->key, job->name,
							*t, ns, err, src };
}

/* Make the table of JOB; load it if the maps are there, else keep it.
 * Called and returns with the lock held. */
static void do_job(struct mt_unwinder *u, struct mt_unwind_job *job)
{
	struct mt_unwind_table t;
	uint64_t ns;
	int err, src;

	pthread_mutex_unlock(&u->lock);
	slow_table_hook(job->name);
	err = build_file(u, job->fd, &t, &ns, &src, job->cached_only);
	close(job->fd);
	pthread_mutex_lock(&u->lock);
	if (src == TABLE_NOT_CACHED) {
		/* Not tried: made when a stack first needs it. */
		forget_file(u, &job->key);
		file_done(u, &job->key);
		free(job->name);
		return;
	}
	if (!u->maps_ready) {
		keep_pending(u, job, &t, ns, err, src);
		return;
	}
	pthread_mutex_unlock(&u->lock);
	publish(u, &job->key, job->name, &t, ns, err, src);
	free(job->name);
	pthread_mutex_lock(&u->lock);
	file_done(u, &job->key);
}

/* Load the tables made before the maps were there, in the order they
 * were asked for.  Called and returns with the lock held. */
static void do_pending(struct mt_unwinder *u)
{
	struct mt_unwind_pending *p = u->pending;
	size_t n = u->npending;

	u->pending = NULL;
	u->npending = 0;
	pthread_mutex_unlock(&u->lock);
	for (size_t i = 0; i < n; i++) {
		publish(u, &p[i].key, p[i].name, &p[i].t, p[i].ns, p[i].err,
			p[i].src);
		free(p[i].name);
	}
	pthread_mutex_lock(&u->lock);
	for (size_t i = 0; i < n; i++)
		file_done(u, &p[i].key);
	free(p);
}

/* A file this large (its table takes seconds on a loaded machine: cc1,
 * libLLVM) is left to the first builder. */
#define LARGE_FILE (8u << 20)

/* The job the builder takes next, -1 for none (the lock held).  The
 * first builder takes the files in the order asked; the others
 * (SMALL_ONLY) the smallest file waiting, if it is under LARGE_FILE: a
 * small table (or one read from the cache) is not held up behind a large
 * one being made, nor a large one for ever behind small ones. */
static ssize_t next_job(const struct mt_unwinder *u, bool small_only)
{
	size_t k = 0;

	if (!u->njobs)
		return -1;
	if (!small_only)
		return 0;
	for (size_t i = 1; i < u->njobs; i++)
		if (u->jobs[i].size < u->jobs[k].size)
			k = i;
	return u->jobs[k].size >= LARGE_FILE ? -1 : (ssize_t)k;
}

static void *builder(void *arg)
{
	struct mt_unwinder *u = arg;
	bool small_only;

	pthread_mutex_lock(&u->lock);
	small_only = u->nstarted++ > 0;
	for (;;) {
		struct mt_unwind_job job;
		ssize_t k = -1;

		while (!u->stop && !(u->maps_ready && u->npending) &&
		       (k = next_job(u, small_only)) < 0)
			pthread_cond_wait(&u->wake, &u->lock);
		if (u->stop)
			break;
		u->busy++;
		if (u->maps_ready && u->npending) {
			do_pending(u);
		} else {
			job = u->jobs[k];
			memmove(u->jobs + k, u->jobs + k + 1,
				(--u->njobs - (size_t)k) * sizeof(*u->jobs));
			do_job(u, &job);
		}
		if (!--u->busy && !u->njobs &&
		    !(u->maps_ready && u->npending))
			pthread_cond_broadcast(&u->idle);
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* Index of KEY among the files that could not be opened, or -1 (the
 * lock held). */
static ssize_t unreadable_at(const struct mt_unwinder *u,
			     const struct mt_file_key *key)
{
	for (size_t i = 0; i < u->nunreadable; i++)
		if (u->unreadable[i].dev == key->dev &&
		    u->unreadable[i].ino == key->ino)
			return (ssize_t)i;
	return -1;
}

/* KEY was named, and could not be opened. */
static void mark_unreadable(struct mt_unwinder *u,
			    const struct mt_file_key *key)
{
	struct mt_file_key *nv;

	pthread_mutex_lock(&u->lock);
	if (unreadable_at(u, key) < 0 &&
	    (nv = realloc(u->unreadable,
			  (u->nunreadable + 1) * sizeof(*nv))) != NULL) {
		u->unreadable = nv;
		nv[u->nunreadable++] = *key;
	}
	pthread_mutex_unlock(&u->lock);
}

bool mt_unwinder_unreadable(struct mt_unwinder *u,
			    const struct mt_file_key *file)
{
	bool r;

	pthread_mutex_lock(&u->lock);
	r = unreadable_at(u, file) >= 0;
	pthread_mutex_unlock(&u->lock);
	return r;
}

/* For tests (test_file_unreadable.py): a file whose name holds NAME
 * (MEMTRACE_UNREADABLE_FILE) is taken for one that could not be opened,
 * as a deleted file of a process gone is. */
static bool unreadable_hook(const char *name)
{
	const char *want = getenv("MEMTRACE_UNREADABLE_FILE");

	return want && *want && strstr(name, want);
}

/* Queue the file open on FD (taken) for its table, once per file. */
static void add_file(struct mt_unwinder *u, int fd,
		     const struct mt_file_key *key, const char *name,
		     bool cached_only)
{
	struct mt_unwind_job *nv;
	char *copy;
	struct stat st;
	off_t size;
	ssize_t at;

	if (unreadable_hook(name)) {
		close(fd);
		mark_unreadable(u, key);
		return;
	}
	copy = strdup(name);
	size = fstat(fd, &st) == 0 ? st.st_size : 0;
	pthread_mutex_lock(&u->lock);
	/* Opened after all (by another process's mapping). */
	if ((at = unreadable_at(u, key)) >= 0)
		u->unreadable[at] = u->unreadable[--u->nunreadable];
	if (!copy || known(u, key->dev, key->ino) ||
	    remember(u, key->dev, key->ino))
		goto cleanup;
	nv = realloc(u->jobs, (u->njobs + 1) * sizeof(*nv));
	if (!nv) {
		file_done(u, key); /* not to be made: none waits for it */
		goto cleanup;
	}
	u->jobs = nv;
	u->jobs[u->njobs++] = (struct mt_unwind_job){ fd, size, *key, copy,
						      cached_only };
	pthread_cond_broadcast(&u->wake);
	pthread_mutex_unlock(&u->lock);
	return;
cleanup:
	pthread_mutex_unlock(&u->lock);
	free(copy);
	close(fd);
}

void mt_unwinder_wait(struct mt_unwinder *u)
{
	if (!u->started)
		return;
	pthread_mutex_lock(&u->lock);
	while (u->njobs || u->busy || (u->maps_ready && u->npending))
		pthread_cond_wait(&u->idle, &u->lock);
	pthread_mutex_unlock(&u->lock);
}

bool mt_unwinder_ready(struct mt_unwinder *u, const struct mt_file_key *keys,
		       size_t n)
{
	bool ready = true;

	pthread_mutex_lock(&u->lock);
	for (size_t k = 0; k < n && ready; k++)
		for (size_t i = 0; i < u->nfiles; i++)
			if (u->files[i].dev == keys[k].dev &&
			    u->files[i].ino == keys[k].ino) {
				ready = u->files[i].ready;
				break;
			}
	pthread_mutex_unlock(&u->lock);
	return ready;
}

int mt_unwinder_ready_fd(const struct mt_unwinder *u)
{
	return u->ready_fd;
}

void mt_unwinder_ready_ack(struct mt_unwinder *u)
{
	uint64_t n;

	if (u->ready_fd >= 0 && read(u->ready_fd, &n, sizeof(n)) < 0) {
		/* Nothing new (EAGAIN). */
	}
}

bool mt_unwinder_wait_ms(struct mt_unwinder *u, unsigned ms)
{
	struct timespec end;
	bool idle;

	if (!u->started)
		return true;
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&u->lock);
	while (u->njobs || u->busy || (u->maps_ready && u->npending))
		if (pthread_cond_timedwait(&u->idle, &u->lock, &end))
			break;
	idle = !(u->njobs || u->busy || (u->maps_ready && u->npending));
	pthread_mutex_unlock(&u->lock);
	return idle;
}

/* The kernel's dev_t encoding, as an inode's superblock holds it. */
static uint64_t kernel_dev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

void mt_unwinder_key_of(const struct mt_object *o, struct mt_file_key *key)
{
	key->dev = kernel_dev(o->dev);
	key->ino = (uint64_t)o->ino;
}

static void add_objects(struct mt_unwinder *u, const struct mt_objects *objs,
			bool cached_only)
{
	if (!u->on)
		return;
	for (size_t i = 0; i < objs->n; i++) {
		const struct mt_object *o = &objs->v[i];
		struct mt_file_key key;
		int fd = open(o->path, O_RDONLY | O_CLOEXEC);

		mt_unwinder_key_of(o, &key);
		if (fd >= 0)
			add_file(u, fd, &key, o->shown, cached_only);
		else if (!cached_only)
			mark_unreadable(u, &key);
	}
}

void mt_unwinder_add_objects(struct mt_unwinder *u,
			     const struct mt_objects *objs)
{
	add_objects(u, objs, false);
}

void mt_unwinder_preload_process(struct mt_unwinder *u, pid_t pid)
{
	struct mt_objects objs;

	if (!u->cache || mt_objects_of_pid(pid, &objs))
		return;
	add_objects(u, &objs, true);
	mt_objects_free(&objs);
}

static int on_missing(void *ctx, void *data, size_t size)
{
	struct mt_unwinder *u = ctx;
	struct mt_unwind_missing m;

	if (size < sizeof(m))
		return 0;
	memcpy(&m, data, sizeof(m));
	if (!m.file.dev && !m.file.ino) {
		/* A dlopen: every new file, before a stack meets it (the
		 * caller's read of it may serve, else one of its own). */
		if (!u->on_dlopen || !u->on_dlopen(u->dlopen_ctx, (pid_t)m.pid))
			mt_unwinder_add_process(u, (pid_t)m.pid);
		return 0;
	}
	mt_unwinder_ask(u, (pid_t)m.pid, &m.file, m.start, m.end);
	return 0;
}

void mt_unwinder_ask(struct mt_unwinder *u, pid_t pid,
		     const struct mt_file_key *file, uint64_t start,
		     uint64_t end)
{
	char path[96], name[PATH_MAX];
	ssize_t len;
	int fd;

	pthread_mutex_lock(&u->lock);
	fd = known(u, file->dev, file->ino);
	pthread_mutex_unlock(&u->lock);
	if (fd)
		return;
	/* The mapping itself: right in containers, and for deleted files. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* Gone: the file by the path the kernel told (it is opened
		 * there, as the process mapped it, while it lived). */
		const char *kname;

		fd = mt_kvmas_open(file, &kname);
		if (fd >= 0)
			add_file(u, fd, file, kname, false);
		else
			mark_unreadable(u, file);
		return;
	}
	/* Named (-v) by the file the process maps, not the link to it. */
	len = readlink(path, name, sizeof(name) - 1);
	name[len > 0 ? len : 0] = '\0';
	add_file(u, fd, file, len > 0 ? name : path, false);
}

bool mt_unwinder_idle(struct mt_unwinder *u)
{
	bool idle;

	pthread_mutex_lock(&u->lock);
	idle = !u->njobs && !u->busy && !(u->maps_ready && u->npending);
	pthread_mutex_unlock(&u->lock);
	return idle;
}

void mt_unwinder_forget(struct mt_unwinder *u, pid_t pid)
{
	__u32 key = (__u32)pid;

	if (u->vmas_fd >= 0)
		bpf_map_delete_elem(u->vmas_fd, &key);
}

/*
 * Each file process PID maps executable, under the key the stack walk
 * will look for (the kernel's, from the vma_files iterator: on overlayfs
 * not the one stat() gives), read through the mapping itself.  -errno
 * when the iterator cannot say.
 */
static int add_mapped(struct mt_unwinder *u, pid_t pid)
{
	struct mt_vma_file *v;
	size_t n;
	int ret = u->skel ? mt_vma_files(u->skel, pid, &v, &n) : -EOPNOTSUPP;

	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		mt_unwinder_ask(u, pid, &v[i].file, v[i].start, v[i].end);
	free(v);
	return 0;
}

void mt_unwinder_add_process(struct mt_unwinder *u, pid_t pid)
{
	struct mt_objects objs;

	if (!u->on)
		return;
	if (add_mapped(u, pid) && mt_objects_of_pid(pid, &objs) == 0) {
		mt_unwinder_add_objects(u, &objs);
		mt_objects_free(&objs);
	}
	mt_unwinder_forget(u, pid);
}

void mt_unwinder_add_image(struct mt_unwinder *u, pid_t pid,
			   const struct mt_image *img)
{
	char name[PATH_MAX + 16];

	if (!u->on)
		return;
	for (size_t i = 0; i < img->n; i++) {
		const struct mt_image_file *f = img->v[i].file;
		bool have;
		int fd;

		if (!img->v[i].exec)
			continue;
		pthread_mutex_lock(&u->lock);
		have = known(u, f->key.dev, f->key.ino);
		pthread_mutex_unlock(&u->lock);
		if (have)
			continue;
		if ((fd = mt_image_file_open(f)) < 0) {
			mark_unreadable(u, &f->key);
			continue;
		}
		mt_image_file_shown(f, name, sizeof(name));
		add_file(u, fd, &f->key, name, false);
	}
	mt_unwinder_forget(u, pid);
}

int mt_unwinder_fd(const struct mt_unwinder *u)
{
	return u->missing ? ring_buffer__epoll_fd(u->missing) : -1;
}

void mt_unwinder_poll(struct mt_unwinder *u)
{
	if (u->missing)
		ring_buffer__consume(u->missing);
	if (u->after_poll)
		u->after_poll(u->after_poll_ctx);
}

void mt_unwinder_free(struct mt_unwinder *u)
{
	if (u->started) {
		pthread_mutex_lock(&u->lock);
		u->stop = true;
		pthread_cond_broadcast(&u->wake);
		pthread_mutex_unlock(&u->lock);
		for (unsigned i = 0; i < u->nthreads; i++)
			pthread_join(u->threads[i], NULL);
	}
	for (size_t i = 0; i < u->njobs; i++) {
		close(u->jobs[i].fd);
		free(u->jobs[i].name);
	}
	free(u->jobs);
	for (size_t i = 0; i < u->npending; i++) {
		mt_unwind_table_free(&u->pending[i].t);
		free(u->pending[i].name);
	}
	free(u->pending);
	pthread_mutex_destroy(&u->lock);
	pthread_mutex_destroy(&u->load_lock);
	pthread_mutex_destroy(&u->cache_lock);
	pthread_cond_destroy(&u->wake);
	pthread_cond_destroy(&u->idle);
	mt_map_chunks_free(&u->rows);
	mt_map_chunks_free(&u->pages);
	ring_buffer__free(u->missing);
	if (u->ready_fd >= 0)
		close(u->ready_fd);
	free(u->files);
	free(u->unreadable);
	if (u->cache && u->cache->dirfd >= 0 && u->verbose)
		fprintf(stderr, "memtrace: unwind cache %s: %llu tables read (%llu rows) in %.3f ms of CPU, %.3f ms in all; %llu made and kept, %llu refused\n",
			u->cache->dir, (unsigned long long)u->cache->hits,
			(unsigned long long)u->cache->hit_rows,
			(double)u->cache->hit_cpu_ns / 1e6,
			(double)u->cache->hit_ns / 1e6,
			(unsigned long long)u->cache->stored,
			(unsigned long long)u->cache->bad);
	if (u->cache)
		mt_unwind_cache_close(u->cache);
	free(u->cache);
	free(u->cache_dir);
	memset(u, 0, sizeof(*u));
	u->modules_fd = u->vmas_fd = -1;
	u->ready_fd = -1;
}
