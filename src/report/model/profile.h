/* SPDX-License-Identifier: MIT */
/*
 * profile.h: the in-memory profile that the loader hands to the reporter.
 *
 * Two stages:
 *   struct mt_raw_profile  what was collected: processes with the files they
 *                          mapped, and stacks of return addresses with their
 *                          allocated/freed totals.
 *   struct mt_profile      the same after symbolisation: samples whose
 *                          frames are source-level (an inlined function is a
 *                          frame of its own), with the four pprof values.
 * Writers (text, later folded/pprof) only read struct mt_profile.
 */
#ifndef MEMTRACE_PROFILE_H
#define MEMTRACE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"
#include "timeline_sum.h"

/* Room for a GNU build id in hex (up to 64 bytes) and its NUL. */
#define MT_BUILD_ID_HEX 129

/* One file mapped executable by a traced process, captured while it ran. */
struct mt_module {
	char *path;      /* the path the process mapped (as in /proc/PID/maps) */
	int fd;          /* descriptor open on that file, or -1 */
	uint64_t start;  /* lowest mapped address of the file */
	uint64_t end;    /* highest mapped address of the file (exclusive) */
	uint64_t bias;   /* runtime address minus ELF virtual address */
	/* The file's first executable mapping (pprof's Mapping): its range
	 * and the file offset it starts at; all 0 if not known. */
	uint64_t text_start, text_end, text_offset;
	char build_id[MT_BUILD_ID_HEX];  /* GNU build id in hex, or "" */
	/* The file's identity: stat(2)'s st_dev and st_ino of the mapped
	 * file (its descriptor's); both 0 if not known (a saved profile's
	 * files: symbolisation then stats the path). */
	uint64_t dev, ino;
};

struct mt_process {
	uint32_t pid;
	char comm[64];
	struct mt_module *mods;
	size_t nmods;
};

/* Values of a sample, in Go's pprof order. */
enum mt_value {
	MT_ALLOC_OBJECTS,
	MT_ALLOC_SPACE,
	MT_INUSE_OBJECTS,
	MT_INUSE_SPACE,
	MT_NVALUES
};

/* Header facts a profile read from a file may lack (mt_summary.missing). */
enum mt_fact {
	MT_FACT_COUNTERS = 1 << 0,  /* events, failed, untracked frees, drops */
	MT_FACT_ALLOCATOR = 1 << 1,
	MT_FACT_DURATION = 1 << 2,
	MT_FACT_SIZES = 1 << 3,     /* the size histogram (mt_summary.sizes) */
	MT_FACT_TIMELINE = 1 << 4,  /* peaks and sparklines (timeline) */
};

/* Header facts printed at the top of every report. */
struct mt_summary {
	char target[256];     /* e.g. "pid 1234 (server)" */
	char shown[256];      /* --comm, report -p: what is kept, or "" */
	char allocator[4200]; /* what was probed, e.g. "glibc /usr/lib/.../libc.so.6" */
	/* The allocator functions probed, and how many of those probes are on
	 * an instruction the kernel single-steps (two traps a call); PROBES 0:
	 * not known (the line is left out). */
	uint32_t probes, probes_stepped;
	double duration_s;    /* time traced */
	uint64_t stop_ns;     /* CLOCK_MONOTONIC when tracing stopped (block ages) */
	bool mmap_traced;     /* --mmap: anonymous mappings are samples too */
	uint64_t sample_bytes; /* -s: mean bytes between samples; 0: exact */
	uint64_t counters[MT_CNT__COUNT]; /* summed kernel counters (memleak.h) */
	/* What was allocated, by category and size class (bpf/size_class.h),
	 * summed over CPUs; estimates when sampling, as the counters. */
	struct mt_size_count sizes[MT_NCATEGORIES][MT_SIZE_CLASSES];
	unsigned missing;     /* enum mt_fact: not recorded (a trace: the
				 timeline when --timeline-interval 0) */
	/* --delta: the samples' alloc values count from DELTA_SINCE_S of the
	 * trace on (the previous report), not from its start. */
	bool delta;
	double delta_since_s;
	/* --at: the profile is that of one moment of the trace, AT_S. */
	enum mt_at { MT_AT_END = 0, MT_AT_PEAK, MT_AT_TIME } at;
	double at_s;
	struct mt_tl_summary timeline; /* peaks in use, sparklines */
	char view[512];       /* pprof's views applied (view.h), "" if none */
};

struct mt_raw_stack {
	uint32_t pid;
	uint64_t stack_id;    /* as in the BPF maps; MT_STACK_NONE if unknown */
	uint32_t category;    /* enum mt_category: heap, or anonymous mmap */
	uint32_t nips;
	uint64_t *ips;        /* leaf first; every entry is a return address */
	uint64_t alloc_bytes, alloc_objects, free_bytes, free_objects;
};

/* One block still allocated when tracing stopped. */
struct mt_raw_block {
	uint32_t pid;
	uint32_t category;      /* enum mt_category */
	uint64_t addr;
	uint64_t size;
	uint64_t stack_id;
	uint64_t timestamp_ns;  /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	uint64_t est_bytes;     /* what it counts for: size, or its estimate */
	uint64_t est_objects;   /* 1, or the objects it stands for (-s) */
};

struct mt_raw_profile {
	struct mt_summary sum;
	struct mt_process *procs;
	size_t nprocs;
	struct mt_raw_stack *stacks;
	size_t nstacks;
	struct mt_raw_block *blocks;
	size_t nblocks;
};

/* A source-level frame.  Identical frames are stored once per profile. */
struct mt_frame {
	char *function;   /* demangled name; "module+0xOFFSET" if unresolved */
	char *file;       /* source file of this location, or NULL */
	int line;         /* line of this location (a call site for callers) */
	char *decl_file;  /* file where the function is defined, or NULL */
	int decl_line;    /* line where the function is defined, or 0 */
	char *module;     /* path of the ELF file, or NULL */
	uint64_t addr;    /* address the frame was resolved from */
	bool inlined;     /* inlined into the next frame of the stack */
	bool unresolved;  /* no symbol: function is the made-up name above */
	bool no_inlines;  /* from a symbol table: inlining is not known */
};

/* A file mapped by a process, as pprof's Mapping describes it. */
struct mt_map {
	uint32_t pid;
	char *path;
	uint64_t start, limit, offset;  /* memory range, file offset of start */
	char build_id[MT_BUILD_ID_HEX]; /* hex, or "" */
};

struct mt_sample {
	uint32_t pid;
	size_t nframes;
	uint32_t *frames;          /* indices into mt_profile.frames, leaf first */
	int64_t v[MT_NVALUES];
};

/* An outstanding block, for the leak report. */
struct mt_block {
	uint32_t pid;
	uint64_t addr;
	uint64_t size;
	uint64_t timestamp_ns;  /* CLOCK_MONOTONIC at allocation */
	uint64_t est_bytes;     /* what it counts for (see mt_raw_block) */
	uint64_t est_objects;
	size_t sample;          /* index into mt_profile.samples, or SIZE_MAX */
};

struct mt_profile {
	struct mt_summary sum;
	struct mt_frame *frames;
	size_t nframes;
	struct mt_sample *samples;
	size_t nsamples;
	struct mt_process *procs;  /* pid and comm only; mods are not copied */
	size_t nprocs;
	struct mt_block *blocks;   /* outstanding blocks (may be empty) */
	size_t nblocks;
	struct mt_map *maps;       /* the mapped files frames refer to */
	size_t nmaps;
};

/* Leaf frame of the samples of anonymous mappings (--mmap). */
#define MT_MMAP_FRAME "[anonymous mmap]"

/* The name of process PID among PROCS ("" if it is not there). */
const char *mt_procs_comm(const struct mt_process *procs, size_t n,
			  uint32_t pid);

/* For an index of procs by pid (itab.h): the key, and its equality. */
struct mt_pid_key {
	const struct mt_process *procs;
	uint32_t pid;
};
bool mt_pid_key_eq(const void *key, uint32_t idx);

/* The hash of a raw stack's key, its process, category and stack id (or
 * of a block's, with its address as ID), for an index (itab.h). */
uint64_t mt_raw_key_hash(uint32_t pid, uint32_t category, uint64_t id);

/* A copy of process P into C (its modules freed with
 * mt_process_free_mods): name, modules, a descriptor of its own for each.
 * Returns 0, -ENOMEM or -errno (descriptors); C then holds nothing. */
int mt_process_copy(struct mt_process *c, const struct mt_process *p);

/* Set M's dev and ino from fstat of FD, its file (left 0 if it fails). */
void mt_module_set_id(struct mt_module *m, int fd);

/* Free P's modules (closing their descriptors); P keeps none. */
void mt_process_free_mods(struct mt_process *p);

void mt_raw_profile_free(struct mt_raw_profile *raw);
void mt_profile_free(struct mt_profile *p);

#endif /* MEMTRACE_PROFILE_H */
