/* SPDX-License-Identifier: MIT */
/*
 * unwinder.h: the unwind tables in the kernel.  The BPF unwinder
 * (bpf/unwind.h) finds a mapped file's table by the file's identity; this
 * compiles the table of each file once (src/loader/unwind/unwind_table.c) and
 * writes it into the BPF maps: ahead of time for the files a target is
 * known to map, and on demand for the files the BPF program met without
 * one (the unwind_missing ring buffer).  Tables are compiled by threads of
 * their own (a large binary's takes seconds), so the session loop is never
 * held up; a caller that needs them now waits for them.  There are two:
 * one takes the files in the order asked, the other the smallest file
 * waiting under 8 MiB, so that a small table (or one read from the
 * cache) is not held up for seconds behind a large one being made (a
 * system-wide trace asks for other programs' files too, cc1's or
 * libLLVM's).  They can
 * start before the BPF object is loaded (mt_unwinder_start()): the tables
 * asked for meanwhile are made while the kernel verifies the programs,
 * and loaded once the maps are there (mt_unwinder_init()).
 */
#ifndef MEMTRACE_UNWINDER_H
#define MEMTRACE_UNWINDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "map_chunks.h"
#include "proc_files.h"

struct memleak_bpf;
struct ring_buffer;

struct mt_unwinder {
	bool on;                  /* --unwind cfi or auto */
	bool verbose;             /* -v: a line per table */
	/* The maps, mmap()ed, grown as tables are loaded: rows, and page
	 * indices (64-bit in the map, 32-bit in a table). */
	struct mt_map_chunks rows, pages;
	uint32_t rows_used, pages_used;
	int modules_fd;
	int vmas_fd;              /* the BPF side's cache of mappings */
	struct ring_buffer *missing;
	/* Called by mt_unwinder_poll() after the ring is read (the stack
	 * copies read on a thread of their own: deferred_unwind.c). */
	void (*after_poll)(void *ctx);
	void *after_poll_ctx;
	/* Files whose table is asked for, loaded, or failed (tried once). */
	struct mt_unwind_file {
		uint64_t dev, ino;
		bool ready;       /* loaded, or failed */
	} *files;
	size_t nfiles;
	/* Files waiting for the builder thread (an open descriptor each). */
	struct mt_unwind_job *jobs;
	size_t njobs;
	size_t busy;              /* jobs taken, not done */
	/* Tables made before the maps were there, waiting for them. */
	struct mt_unwind_pending *pending;
	size_t npending;
	bool maps_ready;          /* mt_unwinder_init() done */
	bool stop;
	bool begun;               /* mt_unwinder_start() done */
	bool started;             /* a builder thread runs */
	unsigned nthreads;        /* builder threads running */
	unsigned nstarted;        /* of which have begun (the first takes
				   * any file, the others small ones) */
	pthread_t threads[2];
	pthread_mutex_t lock;
	/* Held while a table is copied into the maps (rows_used...) and
	 * while the cache is used, by one builder at a time. */
	pthread_mutex_t load_lock, cache_lock;
	pthread_cond_t wake;      /* a job, or stop */
	pthread_cond_t idle;      /* no job left */
	/* Totals, for -v and the benchmarks (the builder's; read after
	 * mt_unwinder_wait()). */
	uint64_t total_rows, build_ns;
	uint64_t tables_loaded;   /* tables put in the maps (atomic) */
	uint32_t full;            /* tables that did not fit */
	/* Called (when set) as ld.so's hook tells of process PID's dlopen:
	 * true when it asked for its new files' tables (else they are asked
	 * for, by reading PID's mappings, after it returns). */
	bool (*on_dlopen)(void *ctx, pid_t pid);
	void *dlopen_ctx;
	/* Set by mt_unwinder_init(): its vma_files iterator names a
	 * process's files as the stack walk will (vma_files.h). */
	const struct memleak_bpf *skel;
	/* Tables kept on disk (unwind_cache.h), opened by the builder when
	 * first needed: NULL when not used. */
	struct mt_unwind_cache *cache;
	char *cache_dir;          /* NULL: the default */
	uint64_t cache_max;
	bool cache_tried;
	int ready_fd;             /* an eventfd: a table is done; -1 */
	/* Files named (by the kernel, or a process's mappings) that could
	 * not be opened: no table (truncation reason "file unreadable"). */
	struct mt_file_key *unreadable;
	size_t nunreadable;
};

/* Size the unwinder's maps of SKEL (opened, not loaded) for MAX_ROWS rows. */
void mt_unwinder_size(struct memleak_bpf *skel, bool on, uint32_t max_rows);

/* Start making tables, before the BPF object is loaded: the tables asked
 * for (mt_unwinder_add_objects()) are loaded by mt_unwinder_init().  ON:
 * tables are used (else nothing is made).  Returns 0 or -errno; either
 * way, mt_unwinder_free() releases U. */
int mt_unwinder_start(struct mt_unwinder *u, bool on, bool verbose);

/* Keep tables on disk in DIR (NULL: the default, unwind_cache.h), of at
 * most MAX_BYTES (0: the default); after mt_unwinder_start() or
 * mt_unwinder_init(), before tables are asked for. */
void mt_unwinder_use_cache(struct mt_unwinder *u, const char *dir,
			   uint64_t max_bytes);

/* Take the maps of SKEL (loaded), after mt_unwinder_start() or without it
 * (ON and VERBOSE are then its).  Returns 0 or -errno; either way,
 * mt_unwinder_free() releases U. */
int mt_unwinder_init(struct mt_unwinder *u, struct memleak_bpf *skel, bool on,
		     bool verbose);

/* Ask for the table of every file of OBJS that has none yet.  Tables that
 * cannot be made are said once on stderr (with -v) and skipped. */
void mt_unwinder_add_objects(struct mt_unwinder *u,
			     const struct mt_objects *objs);

/* Wait until every table asked for is loaded (or failed). */
void mt_unwinder_wait(struct mt_unwinder *u);

/* Whether the tables of the files KEYS (N) are in (or failed): none of
 * them is waiting to be made or being made.  A file never asked for
 * counts as in.  Never waits: mt_unwinder_ready_fd() tells when to ask
 * again. */
struct mt_file_key;
bool mt_unwinder_ready(struct mt_unwinder *u, const struct mt_file_key *keys,
		       size_t n);

/* A descriptor readable when a table is done since the last
 * mt_unwinder_ready_ack() (which reads it); -1 when tables are off. */
int mt_unwinder_ready_fd(const struct mt_unwinder *u);
void mt_unwinder_ready_ack(struct mt_unwinder *u);

/* The identity under which mt_unwinder_add_objects() asks for O's table. */
void mt_unwinder_key_of(const struct mt_object *o, struct mt_file_key *key);

/* The same, for at most MS milliseconds: true when every table is in. */
bool mt_unwinder_wait_ms(struct mt_unwinder *u, unsigned ms);
/* PID mapped new files: forget the mappings the BPF side cached for it
 * (a new file may lie where an unmapped one was). */
void mt_unwinder_forget(struct mt_unwinder *u, pid_t pid);

/* PID mapped new files (a dlopen): the tables of those that have none,
 * and its cached mappings forgotten.  Nothing when its files cannot be
 * read (it is gone). */
void mt_unwinder_add_process(struct mt_unwinder *u, pid_t pid);

/* The same, from PID's image IMG just read (images.h): each file under
 * the registry's identity, from its descriptor. */
struct mt_image;
void mt_unwinder_add_image(struct mt_unwinder *u, pid_t pid,
			   const struct mt_image *img);

/* The tables of PID's files that are in the cache (use_cache), loaded
 * now; the others are made when asked for. */
void mt_unwinder_preload_process(struct mt_unwinder *u, pid_t pid);

/* Ask for the table of FILE, mapped at [START, END) by PID (opened there:
 * nothing when PID is gone), unless it was asked for before. */
struct mt_file_key;
void mt_unwinder_ask(struct mt_unwinder *u, pid_t pid,
		     const struct mt_file_key *file, uint64_t start,
		     uint64_t end);
/* Whether FILE was named but could not be opened for its table. */
bool mt_unwinder_unreadable(struct mt_unwinder *u,
			    const struct mt_file_key *file);

/* No table is being made or waits to be. */
bool mt_unwinder_idle(struct mt_unwinder *u);
/* A descriptor that is readable when the BPF program asks for a table
 * (then call mt_unwinder_poll()); -1 when tables are off. */
int mt_unwinder_fd(const struct mt_unwinder *u);

/* Ask for the tables the BPF program asked for since the last call. */
void mt_unwinder_poll(struct mt_unwinder *u);

void mt_unwinder_free(struct mt_unwinder *u);

#endif
