/* SPDX-License-Identifier: MIT */
/* options.h: the command line. */
#ifndef MEMTRACE_OPTIONS_H
#define MEMTRACE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"
#include "write_outputs.h"
#include "units.h"
#include "view.h"

#define MT_MAX_OUTPUTS 8

struct mt_options {
	bool report_mode;      /* "memtrace report FILE": render a saved profile */
	bool top;              /* "memtrace top": the live view (top.h) */
	bool top_batch;        /* top -b: plain frames, even on a terminal */
	double top_interval;   /* top -i: seconds between frames (default 1) */
	unsigned top_frames;   /* top --count: stop after that many; 0: no limit */
	int top_sort;          /* top --sort: enum mt_top_sort */
	const char *input;     /* that FILE (the first of inputs) */
	char *const *inputs;   /* report FILE...: every file given, in order */
	size_t ninputs;        /* 1, or more with --growth */
	bool growth;           /* report --growth: what grew, first to last */
	pid_t pid;             /* -p; 0 when a command is given */
	bool system_wide;      /* neither -p nor a command */
	const char *comm;      /* --comm: report only processes of that name */
	pid_t only_pid;        /* report FILE -p PID: only that process */
	char **cmd;            /* after "--"; NULL with -p */
	bool as_root;          /* --as-root: CMD keeps root under sudo */
	bool follow;           /* what CMD starts too (the default; --no-follow: not) */
	bool follow_given;     /* --follow or --no-follow was given */
	double duration;       /* -d seconds; 0: until stopped or target exit */
	const char *output;    /* -o; NULL: stdout */
	int top_n;             /* -n */
	enum mt_value metric;  /* --metric */
	bool cum;              /* --cum */
	enum mt_unit unit;     /* --unit */
	uint32_t max_allocs;   /* --max-allocs */
	uint32_t max_stacks;   /* --max-stacks */
	uint32_t unwind;       /* --unwind: enum mt_unwind_mode */
	uint32_t max_unwind_rows; /* --max-unwind-rows */
	bool no_unwind_cache;  /* --no-unwind-cache */
	uint64_t unwind_cache_max; /* MEMTRACE_UNWIND_CACHE_SIZE; 0: default */
	bool verbose;          /* -v: libbpf's messages too */
	const char *allocator;     /* --allocator: NULL (auto), libc, jemalloc, tcmalloc, PATH */
	const char *symbol_prefix; /* --symbol-prefix, e.g. "je_"; "" by default */
	bool mmap;                 /* --mmap: anonymous mmap/munmap/mremap too */
	uint32_t bench_part;   /* --bench-part (enum mt_bench_part); --probe-only: traps */
	uint64_t sample_bytes; /* -s: mean bytes between samples; 0: record all */
	uint64_t min_age_ns;   /* --min-age for the leak report */
	uint64_t max_memory;   /* report --max-memory: budget for reading; 0: default */
	const char *base;      /* report --base: the profile subtracted */
	double interval;       /* -i seconds: a numbered report each; 0: none */
	unsigned count;        /* --count: stop after that many; 0: no limit */
	unsigned keep;         /* --keep: numbered files kept; 0: all */
	bool delta;            /* --delta: alloc values since the last report */
	bool at_peak;          /* --at peak: the final report at the peak */
	double at_s;           /* --at TIME: ... at that time; < 0: none */
	const char *record;    /* --record DIR */
	double timeline_interval;  /* --timeline-interval seconds; 0: no timeline */
	const char *timeline_csv;  /* --timeline FILE */
	uint64_t timeline_max_size; /* --timeline-max-size: CSV rolled over */
	const char *timeline_svg;  /* --timeline-svg FILE */
	const char *http;          /* --http [ADDR:]PORT: serve profiles */
	const char *http_allow;    /* --http-allow CIDR,...: only these peers */
	const char *http_token_file; /* --http-token-file: a bearer token */
	const char *http_hosts;    /* --http-host NAME,...: Host values allowed */
	double snapshot_interval;  /* --snapshot-interval: the page's snapshots */
	struct mt_view_spec view;  /* --focus, --ignore, ... (view.h) */
	const char *list;          /* --list REGEX: annotated source */
	struct mt_output outputs[MT_MAX_OUTPUTS];
	size_t noutputs;       /* resolved: every format with its destination */
};

/*
 * Parse argv ("memtrace [OPTIONS] -p PID", "memtrace [OPTIONS] -- CMD" or
 * "memtrace report FILE... [OPTIONS]", "memtrace top [OPTIONS] ...").  Returns 0 to go on, 1 when --help or --version was printed
 * (exit 0), -1 after printing a one-line error (exit non-zero).
 */
int mt_options_parse(int argc, char **argv, struct mt_options *o);

#endif
