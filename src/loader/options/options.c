// SPDX-License-Identifier: MIT
/* options.c: getopt_long parsing, validation and --help. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "memleak.h"
#include "net_addr.h"
#include "sampling.h"
#include "top_sort.h"

#define DEFAULT_MIN_AGE_NS 5000000000ULL

enum {
	OPT_METRIC = 256, OPT_CUM, OPT_UNIT, OPT_MAX_ALLOCS, OPT_MAX_STACKS,
	OPT_TEXT, OPT_FOLDED, OPT_LEAKS, OPT_RAW, OPT_PPROF, OPT_MIN_AGE,
	OPT_PROBE_ONLY, OPT_BENCH_PART, OPT_ALLOCATOR, OPT_SYMBOL_PREFIX, OPT_MMAP, OPT_COMM,
	OPT_UNWIND, OPT_MAX_UNWIND_ROWS, OPT_NO_UNWIND_CACHE,
	OPT_AS_ROOT,
	OPT_NO_FOLLOW, OPT_FOLLOW,
	OPT_MAX_MEMORY, OPT_BASE, OPT_SVG, OPT_GROWTH,
	OPT_COUNT, OPT_KEEP, OPT_DELTA, OPT_AT, OPT_RECORD,
	OPT_TIMELINE, OPT_TIMELINE_INTERVAL, OPT_TIMELINE_MAX_SIZE,
	OPT_TIMELINE_SVG,
	OPT_HTTP, OPT_HTTP_ALLOW, OPT_HTTP_TOKEN_FILE, OPT_HTTP_HOST,
	OPT_SNAPSHOT_INTERVAL,
	/* pprof's views (view.h), --list and --json */
	OPT_VIEW, OPT_VIEW_LAST = OPT_VIEW + MT_VIEW__COUNT - 1,
	OPT_LIST, OPT_JSON,
	OPT_SORT,
};

#define DEFAULT_TIMELINE_INTERVAL 0.1
#define DEFAULT_SNAPSHOT_INTERVAL 60.0
#define DEFAULT_TIMELINE_MAX_SIZE (100ULL << 20)

#define SAMPLE_BYTES_MAX MT_SAMPLE_BYTES_MAX
#define MT_MAX_HASH_ENTRIES (1L << 27)

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "delta", no_argument, NULL, OPT_DELTA },
	{ "at", required_argument, NULL, OPT_AT },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "output", required_argument, NULL, 'o' },
	{ "top", optional_argument, NULL, 'n' },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "cum", no_argument, NULL, OPT_CUM },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "sample-bytes", required_argument, NULL, 's' },
	{ "max-allocs", required_argument, NULL, OPT_MAX_ALLOCS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "text", optional_argument, NULL, OPT_TEXT },
	{ "folded", optional_argument, NULL, OPT_FOLDED },
	{ "leaks", optional_argument, NULL, OPT_LEAKS },
	{ "raw", optional_argument, NULL, OPT_RAW },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "min-age", required_argument, NULL, OPT_MIN_AGE },
	{ "probe-only", no_argument, NULL, OPT_PROBE_ONLY },
	{ "bench-part", required_argument, NULL, OPT_BENCH_PART },
	{ "mmap", no_argument, NULL, OPT_MMAP },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "max-unwind-rows", required_argument, NULL, OPT_MAX_UNWIND_ROWS },
	{ "no-unwind-cache", no_argument, NULL, OPT_NO_UNWIND_CACHE },
	{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "base", required_argument, NULL, OPT_BASE },
	{ "growth", no_argument, NULL, OPT_GROWTH },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "timeline-interval", required_argument, NULL, OPT_TIMELINE_INTERVAL },
	{ "timeline-max-size", required_argument, NULL, OPT_TIMELINE_MAX_SIZE },
	{ "timeline-svg", required_argument, NULL, OPT_TIMELINE_SVG },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "http-allow", required_argument, NULL, OPT_HTTP_ALLOW },
	{ "http-token-file", required_argument, NULL, OPT_HTTP_TOKEN_FILE },
	{ "http-host", required_argument, NULL, OPT_HTTP_HOST },
	{ "snapshot-interval", required_argument, NULL, OPT_SNAPSHOT_INTERVAL },
	{ "focus", required_argument, NULL, OPT_VIEW + MT_VIEW_FOCUS },
	{ "ignore", required_argument, NULL, OPT_VIEW + MT_VIEW_IGNORE },
	{ "hide", required_argument, NULL, OPT_VIEW + MT_VIEW_HIDE },
	{ "show", required_argument, NULL, OPT_VIEW + MT_VIEW_SHOW },
	{ "show-from", required_argument, NULL, OPT_VIEW + MT_VIEW_SHOW_FROM },
	{ "tagfocus", required_argument, NULL, OPT_VIEW + MT_VIEW_TAGFOCUS },
	{ "tagignore", required_argument, NULL, OPT_VIEW + MT_VIEW_TAGIGNORE },
	{ "list", required_argument, NULL, OPT_LIST },
	{ "json", optional_argument, NULL, OPT_JSON },
	{ "batch", no_argument, NULL, 'b' },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
	{ "symbol-prefix", required_argument, NULL, OPT_SYMBOL_PREFIX },
	{ "as-root", no_argument, NULL, OPT_AS_ROOT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: memtrace [OPTIONS]                    every process (system-wide)\n"
"       memtrace [OPTIONS] -p PID\n"
"       memtrace [OPTIONS] -- CMD [ARGS...]\n"
"       memtrace report FILE [OPTIONS]\n"
"       memtrace report FILE FILE... --growth [OPTIONS]\n"
"       memtrace top [OPTIONS] [-p PID | -- CMD [ARGS...]]\n"
"\n"
"Heap profiler for running processes: traces the malloc family with eBPF\n"
"uprobes (no rebuild, no LD_PRELOAD, no restart) and reports where memory\n"
"is allocated, what is still in use and what leaked, with file:line.\n"
"\n"
"Target (with neither, every process using a traced allocator, including\n"
"processes started later and processes in containers):\n"
"  -p, --pid PID          attach to a running process (all its threads)\n"
"  -- CMD [ARGS...]       start CMD, traced from its first allocation;\n"
"                         memtrace exits with CMD's exit status.  Under\n"
"                         sudo, CMD runs as the user who ran sudo\n"
"                         (SUDO_UID, SUDO_GID, that user's groups)\n"
"      --as-root          under sudo, run CMD as root instead\n"
"      --follow           with -- CMD: trace the processes CMD starts too\n"
"                         (fork, vfork, clone, exec), and theirs, each\n"
"                         reported apart (the default)\n"
"      --no-follow        with -- CMD: trace CMD alone\n"
"  report FILE            render a saved heap profile: pprof (memtrace's or\n"
"                         Go's), tcmalloc/gperftools, jemalloc heap_v2, Go's\n"
"                         text (debug=1); needs no privileges\n"
"Tracing:\n"
"      --allocator A      what to probe for the malloc family: auto (default:\n"
"                         the executable if it defines malloc, else a loaded\n"
"                         jemalloc or tcmalloc, else libc), libc, jemalloc,\n"
"                         tcmalloc or the path of a loaded library; C++\n"
"                         operator new/delete are probed wherever defined\n"
"      --symbol-prefix P  the allocator's functions are named P+malloc, ...\n"
"                         (e.g. je_ for a jemalloc built with a prefix)\n"
"      --mmap             also trace the program's own anonymous mmap, mremap\n"
"                         and munmap (not the allocator's): their samples end\n"
"                         in a frame \"[anonymous mmap]\"\n"
"  -s, --sample-bytes N   sample one allocation per N bytes allocated on\n"
"                         average (per thread, Poisson, like tcmalloc and\n"
"                         Go); every figure is then an unbiased estimate.\n"
"                         N in bytes, or with K, M, G (KiB...); at most 4G.\n"
"                         Default: every allocation is recorded\n"
"  -d, --duration SECS    stop after SECS seconds (default: until q or Enter\n"
"                         on the terminal, Ctrl-C, SIGTERM or the target\n"
"                         exits)\n"
"  -i, --interval SECS    also write a report every SECS seconds while\n"
"                         tracing: files numbered (heap.pb.gz becomes\n"
"                         heap.0001.pb.gz, ...), text on standard output\n"
"                         under a \"--- HH:MM:SS (+T s)\" line; the final\n"
"                         report keeps the names given.  SIGUSR1 to\n"
"                         memtrace writes one such report at once\n"
"      --count N          with -i: stop at the Nth report, the final one\n"
"                         (N-1 numbered ones before it)\n"
"      --keep N           numbered files kept, the oldest removed (default\n"
"                         10; 0 keeps all)\n"
"      --at WHEN          the final report is the profile of one moment:\n"
"                         peak (the highest in use the timeline saw) or a\n"
"                         time of the trace (12.5s: the highest sample of\n"
"                         the -i interval holding it), at the timeline's\n"
"                         resolution (--timeline-interval)\n"
"      --record DIR       keep the run in DIR: the timeline, a profile per\n"
"                         interval (-i, default 10 s) at its highest\n"
"                         sample, the final one and an index; then\n"
"                         `memtrace report DIR --at peak|TIME` shows a\n"
"                         moment without the process\n"
"      --delta            each report's alloc_space/alloc_objects count\n"
"                         only since the previous report (in-use values\n"
"                         are always those of the moment)\n"
"      --max-allocs N     outstanding allocations kept (default %u)\n"
"      --max-stacks N     per-stack totals kept, and 2N stack segments\n"
"                         of 23 frames, one per 23 frames of a stack\n"
"                         (default %u)\n"
"      --unwind M         how stacks are walked: auto (default: the call\n"
"                         frame information of every mapped file, as a\n"
"                         debugger does, and frame pointers where a file\n"
"                         has none, e.g. JIT code), cfi (call frame\n"
"                         information only) or fp (frame pointers only)\n"
"      --max-unwind-rows N  unwind table rows kept in the kernel, 8 bytes\n"
"                         each (default %u)\n"
"      --no-unwind-cache  make every unwind table afresh: keep none on disk\n"
"                         (/var/cache/memtrace for root, else ~/.cache/memtrace;\n"
"                         MEMTRACE_UNWIND_CACHE, MEMTRACE_UNWIND_CACHE_SIZE)\n"
"      --probe-only       hit the probes but record nothing: measures the\n"
"                         cost of the traps alone (for benchmarks)\n"
"      --bench-part P     do part of the work, to measure what each part\n"
"                         costs (for benchmarks): traps (--probe-only),\n"
"                         blocks (blocks and totals, no stacks), caller\n"
"                         (stacks of one frame, the allocator's caller)\n"
"                         or all (the default)\n"
"Output (several may be given; a format without =FILE goes to -o or stdout;\n"
"with none, the top report does):\n"
"      --text[=FILE]      top functions and stacks (pprof -top style)\n"
"      --top              the same as --text\n"
"      --leaks[=FILE]     blocks not freed, older than --min-age, by stack\n"
"      --folded[=FILE]    folded stacks for flamegraph.pl\n"
"      --raw[=FILE]       every stack with raw frames and totals\n"
"      --pprof FILE       gzipped pprof profile (go tool pprof reads it);\n"
"                         also chosen by -o FILE.pb.gz\n"
"      --svg FILE         interactive flame graph of --metric, one SVG file\n"
"                         for any browser (click to zoom, search); also\n"
"                         chosen by -o FILE.svg\n"
"  -o, --output FILE      where the formats without =FILE go\n"
"      --comm NAME        only the processes named NAME, or matching it when\n"
"                         it has * ? or [ (a shell glob: 'python*'); the\n"
"                         header's shown: line says how many, stderr when\n"
"                         none; with report, -p PID picks one process too\n"
"Live view (memtrace top: like top(1) for the heap; the same targets):\n"
"  top                    every interval (-i, default 1 s) a frame: per\n"
"                         process in use, growth over the last interval\n"
"                         and per second, peak, allocations per second;\n"
"                         then the stacks that grew most (-n of them).\n"
"                         Keys: q or Ctrl-C quit, i g p a sort by in use,\n"
"                         growth, peak, allocation rate, j/k or arrows\n"
"                         select a process, Enter or f its stacks only, 0\n"
"                         or Esc every process.  The report follows on\n"
"                         quitting, as a normal run's; --count N stops\n"
"                         after N frames\n"
"  -b, --batch            top: plain frames one after another, no screen\n"
"                         or keys (the default when stdout is not a\n"
"                         terminal)\n"
"      --sort KEY         top: inuse (default), growth, peak or alloc\n"
"Timeline (memory over time, per process; the report's peak in use):\n"
"      --timeline-interval SECS  sample every SECS (default 0.1; 0: no\n"
"                         timeline, and no cost); the largest in use of\n"
"                         each interval is exact, not sampled\n"
"      --timeline FILE    CSV, a row per process per interval, appended as\n"
"                         the run goes (tail -f FILE)\n"
"      --timeline-max-size SIZE  roll FILE over to FILE.1 (.2, .3) past\n"
"                         SIZE, e.g. 10M (default 100M)\n"
"      --timeline-svg FILE  the curve of in use over time, as SVG\n"
"Live profiles over HTTP (like Go's net/http/pprof):\n"
"      --http [ADDR:]PORT serve while tracing, until stopped: /debug/pprof/\n"
"                         heap and allocs (go tool pprof URL; ?seconds=N,\n"
"                         ?debug=1, ?pid=, ?comm=), /report (text),\n"
"                         /metrics (Prometheus),\n"
"                         / (a page: timeline, flame graph, snapshots and\n"
"                         their diffs).  ADDR defaults to 127.0.0.1; PORT 0\n"
"                         picks a free one (memtrace says which).  On TCP,\n"
"                         every local user (and, off loopback, every host\n"
"                         that reaches it) can read the profiles: paths,\n"
"                         functions, build ids and load addresses\n"
"      --http unix:PATH   serve on a unix socket instead, mode 0600: its\n"
"                         permissions decide who reads\n"
"      --http-token-file FILE  answer only requests with the token in FILE\n"
"                         (mode 0600): Authorization: Bearer TOKEN, or\n"
"                         Basic with TOKEN as the password (browsers)\n"
"      --http-allow CIDR[,CIDR...]  answer only these peers (default: any\n"
"                         that can connect)\n"
"      --http-host NAME[,NAME...]  host names the server answers to besides\n"
"                         its address and localhost (others: 421, against\n"
"                         DNS rebinding)\n"
"      --snapshot-interval SECS  the page keeps a snapshot every SECS\n"
"                         (default 60; 0: only on SIGUSR1 or its button),\n"
"                         the last 32\n"
"Report:\n"
"  -n, --top N            functions, stacks and leaks shown (default 20)\n"
"      --metric M         inuse_space (default), inuse_objects,\n"
"                         alloc_space or alloc_objects\n"
"      --cum              sort by cumulative instead of flat value\n"
"      --unit U           auto (default), B, KiB, MiB or GiB\n"
"      --min-age AGE      leaks: only blocks at least AGE old, e.g. 500ms,\n"
"                         5s (default), 2m, 0 for all; with -- CMD every\n"
"                         block not freed at exit is reported\n"
"      --base BASE        report: FILE less the profile BASE (any format\n"
"                         report reads; like go tool pprof -diff_base)\n"
"      --growth           report FILE FILE...: the stacks whose value grew\n"
"                         from the first profile to the last (the last less\n"
"                         the first, as pprof -base), largest first, with\n"
"                         their value in each profile in the text report\n"
"      --max-memory SIZE  report: memory for reading FILE, e.g. 512M, 2G\n"
"                         (default: 16 MiB + 32 x its size to decompress\n"
"                         it, 64 MiB + 16 x that to decode it; at most 2G)\n"
"Views (as go tool pprof's, on every output; REGEX is a POSIX extended\n"
"regular expression, matched anywhere in a frame's function name, source\n"
"file or module path):\n"
"      --focus REGEX      only the stacks with a frame that matches\n"
"      --ignore REGEX     leave out the stacks with a frame that matches\n"
"      --hide REGEX       leave out the frames that match\n"
"      --show REGEX       only the frames that match\n"
"      --show-from REGEX  only the frames from the matching one nearest the\n"
"                         root down (its callers left out)\n"
"      --tagfocus [TAG=]V only the stacks whose tags match: TAG pid (V a\n"
"                         number or range N:M, N:, :N) or comm (V a\n"
"                         regular expression, or several with ',')\n"
"      --tagignore [TAG=]V  leave out the stacks whose tags match\n"
"      --list REGEX       the functions matching REGEX, each with its source\n"
"                         lines and their flat and cum values (pprof -list;\n"
"                         the source file read if present)\n"
"      --json[=FILE]      the profile as JSON for scripts: header, functions\n"
"                         with flat and cum, stacks (doc/json.md); also\n"
"                         chosen by -o FILE.json\n"
"Other:\n"
"  -v, --verbose          show libbpf's debug messages too (its warnings\n"
"                         are always shown), the start's phases, and at\n"
"                         the end the BPF programs' runs and time\n"
"  -h, --help             show this help\n"
"  -V, --version          show the version\n"
"\n"
"Examples:\n"
"  sudo memtrace --leaks -o report.txt -d 60\n"
"  sudo memtrace -p PID -d 60\n"
"  sudo memtrace -p PID -d 60 -s 512K\n"
"  sudo memtrace -- ./prog --port 8080\n"
"  sudo memtrace -p PID --leaks -o report.txt\n"
"  sudo memtrace -p PID -d 60 --svg heap.svg\n"
"  sudo memtrace -p PID -d 30 --pprof heap.pb.gz --folded=heap.folded\n"
"  memtrace report heap.pb.gz --metric alloc_space\n"
"  memtrace report heap.*.pb.gz --growth\n"
"\n"
"With -p or system-wide, q or Enter on the terminal stops tracing (Ctrl-C\n"
"would also stop the rest of a pipeline).  With -- CMD, a SIGINT sent to\n"
"memtrace alone stops tracing and leaves CMD running.\n"
"\n"
"Exit status: 0 (report written), CMD's exit status (128+N if signal N\n"
"killed it), 1 (memtrace failed), 2 (bad command line), 127 (CMD found but\n"
"its exec failed).\n"
"\n"
"Tracing needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE.  Under\n"
"sudo, the files memtrace creates belong to the user who ran sudo.\n",
		MT_DEFAULT_MAX_ALLOCS, MT_DEFAULT_MAX_STACKS,
		MT_DEFAULT_MAX_UNWIND_ROWS);
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "memtrace: invalid value '%s' for %s: %s\n", val, opt,
		why);
	return -1;
}

/* The words of --unwind and --bench-part, by their enums' values. */
static const char *const unwind_words[] = {
	[MT_UNWIND_FP] = "fp", [MT_UNWIND_CFI] = "cfi",
	[MT_UNWIND_AUTO] = "auto", NULL,
};
static const char *const part_words[] = {
	[MT_PART_ALL] = "all", [MT_PART_TRAPS] = "traps",
	[MT_PART_BLOCKS] = "blocks", [MT_PART_CALLER] = "caller", NULL,
};

/* ARG, one of WORDS (NULL-terminated), as its index; else WHY. */
static int parse_word(const char *opt, const char *arg,
		      const char *const *words, const char *why,
		      uint32_t *out)
{
	for (uint32_t i = 0; words[i]; i++) {
		if (strcmp(arg, words[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return bad(opt, arg, why);
}

static int parse_long(const char *opt, const char *s, long min, long max,
		      long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		char why[96];

		snprintf(why, sizeof(why), "expected a whole number from %ld to %ld",
			 min, max);
		return bad(opt, s, why);
	}
	*out = v;
	return 0;
}

/*
 * "1.5", "500ms", "5s", "2m", "1h", and sums of them largest unit first
 * as Go writes durations ("2h30m", "1m30.5s"): seconds, as a positive
 * finite number.
 */
static int parse_seconds(const char *s, bool allow_zero, double *out)
{
	/* Longest suffix first: "ms" is not "m" then "s". */
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ms", 1e-3 }, { "us", 1e-6 }, { "h", 3600 }, { "m", 60 },
		{ "s", 1 },
	};
	double sum = 0, last = HUGE_VAL;
	int terms = 0;

	while (*s) {
		char *end;
		double v, scale = 0;
		size_t k = 0;

		if (*s < '0' || *s > '9') {
			if (*s != '.')
				return -1;
		}
		errno = 0;
		v = strtod(s, &end);
		if (errno || end == s || !isfinite(v) || v < 0)
			return -1;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			k = strlen(units[i].suffix);
			if (strncmp(end, units[i].suffix, k) == 0) {
				scale = units[i].scale;
				break;
			}
		}
		if (!scale) { /* a bare number: seconds, alone */
			if (*end || terms)
				return -1;
			k = 0;
			scale = 1;
		} else if (scale >= last) {
			return -1; /* "30m2h", "1s1s": not a duration */
		}
		last = scale;
		sum += v * scale;
		terms++;
		s = end + k;
	}
	if (!terms || !isfinite(sum) || (sum == 0 && !allow_zero))
		return -1;
	*out = sum;
	return 0;
}

/* "524288", "512K", "512KiB", "1M", "1G": bytes, 1 .. SAMPLE_BYTES_MAX. */
static int parse_bytes(const char *s, uint64_t *out)
{
	static const struct { const char *suffix; int shift; } units[] = {
		{ "", 0 }, { "K", 10 }, { "KiB", 10 }, { "M", 20 },
		{ "MiB", 20 }, { "G", 30 }, { "GiB", 30 },
	};
	unsigned long long v;
	char *end;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || end == s || v == 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (v > SAMPLE_BYTES_MAX >> units[i].shift)
			return -1;
		*out = (uint64_t)v << units[i].shift;
		return 0;
	}
	return -1;
}

static int add_output(struct mt_options *o, enum mt_format fmt,
		      const char *path)
{
	if (o->noutputs == MT_MAX_OUTPUTS) {
		fprintf(stderr, "memtrace: at most %d outputs\n", MT_MAX_OUTPUTS);
		return -1;
	}
	o->outputs[o->noutputs++] = (struct mt_output){ fmt, path };
	return 0;
}

static int parse_one(int c, const char *arg, struct mt_options *o)
{
	double secs;
	long v;

	switch (c) {
	case 'p':
		if (parse_long("--pid", arg, 1, 0x7fffffff, &v))
			return -1;
		o->pid = (pid_t)v;
		return 0;
	case 'd':
		if (parse_seconds(arg, false, &o->duration))
			return bad("--duration", arg,
				   "expected a time above 0, e.g. 30, 1.5, 500ms, 2m");
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case OPT_HTTP: {
		struct sockaddr_storage ss;
		socklen_t len;
		char err[256];

		if (mt_listen_addr(arg, &ss, &len, err, sizeof(err))) {
			fprintf(stderr, "memtrace: --http: %s\n", err);
			return -1;
		}
		o->http = arg;
		return 0;
	}
	case OPT_HTTP_ALLOW: {
		struct mt_cidrs l;
		char err[256];

		if (mt_cidrs_parse(arg, &l, err, sizeof(err))) {
			fprintf(stderr, "memtrace: --http-allow: %s\n", err);
			return -1;
		}
		o->http_allow = arg;
		return 0;
	}
	case OPT_HTTP_TOKEN_FILE:
		o->http_token_file = arg;
		return 0;
	case OPT_HTTP_HOST:
		if (!*arg || strspn(arg, "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.,") !=
				     strlen(arg))
			return bad("--http-host", arg,
				   "expected host names separated by commas, e.g. myhost,myhost.example.com");
		o->http_hosts = arg;
		return 0;
	case OPT_SNAPSHOT_INTERVAL:
		if (parse_seconds(arg, true, &o->snapshot_interval) ||
		    (o->snapshot_interval > 0 && o->snapshot_interval < 0.1))
			return bad("--snapshot-interval", arg,
				   "expected 0 or a time of at least 0.1 s, e.g. 60, 10s, 5m");
		return 0;
	case 'i':
		if (parse_seconds(arg, false, &o->interval) || o->interval < 0.01)
			return bad("--interval", arg,
				   "expected a time of at least 10ms, e.g. 10, 1.5, 500ms, 1m");
		return 0;
	case OPT_COUNT:
		if (parse_long("--count", arg, 1, 100000000, &v))
			return -1;
		o->count = (unsigned)v;
		return 0;
	case OPT_KEEP:
		if (parse_long("--keep", arg, 0, 100000000, &v))
			return -1;
		o->keep = (unsigned)v;
		return 0;
	case OPT_DELTA:
		o->delta = true;
		return 0;
	case OPT_RECORD:
		o->record = arg;
		return 0;
	case OPT_AT:
		if (strcmp(arg, "peak") == 0) {
			o->at_peak = true;
			o->at_s = -1;
		} else if (parse_seconds(arg, true, &o->at_s) || o->at_s > 1e9) {
			return bad("--at", arg,
				   "expected peak or a time of the trace, e.g. 12.5s, 500ms, 2m, 2h30m");
		} else {
			o->at_peak = false;
		}
		return 0;
	case 'n':
		/* "--top" alone is the text format, "--top N"/"-n N" a count. */
		if (!arg)
			return add_output(o, MT_FMT_TEXT, NULL);
		if (parse_long("--top", arg, 1, 1000000, &v))
			return -1;
		o->top_n = (int)v;
		return 0;
	case OPT_METRIC:
		if (mt_value_parse(arg, &o->metric))
			return bad("--metric", arg,
				   "expected inuse_space, inuse_objects, alloc_space or alloc_objects");
		return 0;
	case OPT_CUM:
		o->cum = true;
		return 0;
	case OPT_UNIT:
		if (mt_unit_parse(arg, &o->unit))
			return bad("--unit", arg, "expected auto, B, KiB, MiB or GiB");
		return 0;
	case 's':
		if (parse_bytes(arg, &o->sample_bytes))
			return bad("--sample-bytes", arg,
				   "expected bytes from 1 to 4G, e.g. 524288, 512K, 1M");
		return 0;
	case OPT_MAX_ALLOCS:
		/* The kernel's largest hash map: its bucket array (16 bytes per
		 * power-of-two bucket) must stay under 4 GiB. */
		if (parse_long("--max-allocs", arg, 1, MT_MAX_HASH_ENTRIES, &v))
			return -1;
		o->max_allocs = (uint32_t)v;
		return 0;
	case OPT_MAX_STACKS:
		if (parse_long("--max-stacks", arg, 1, 1L << 24, &v))
			return -1;
		o->max_stacks = (uint32_t)v;
		return 0;
	case OPT_UNWIND:
		return parse_word("--unwind", arg, unwind_words,
				  "expected auto, cfi or fp", &o->unwind);
	case OPT_MAX_UNWIND_ROWS:
		if (parse_long("--max-unwind-rows", arg, 1024, 1L << 27, &v))
			return -1;
		o->max_unwind_rows = (uint32_t)v;
		return 0;
	case OPT_NO_UNWIND_CACHE:
		o->no_unwind_cache = true;
		return 0;
	case OPT_TEXT:
		return add_output(o, MT_FMT_TEXT, arg);
	case OPT_FOLDED:
		return add_output(o, MT_FMT_FOLDED, arg);
	case OPT_LEAKS:
		return add_output(o, MT_FMT_LEAKS, arg);
	case OPT_RAW:
		return add_output(o, MT_FMT_RAW, arg);
	case OPT_PPROF:
		return add_output(o, MT_FMT_PPROF, arg);
	case OPT_SVG:
		return add_output(o, MT_FMT_SVG, arg);
	case OPT_VIEW ... OPT_VIEW_LAST: {
		char err[256];

		if (mt_view_check(c - OPT_VIEW, arg, err, sizeof(err))) {
			fprintf(stderr, "memtrace: %s\n", err);
			return -1;
		}
		o->view.expr[c - OPT_VIEW] = arg;
		return 0;
	}
	case OPT_LIST: {
		char err[256];

		if (mt_view_check(MT_VIEW_FOCUS, arg, err, sizeof(err))) {
			fprintf(stderr, "memtrace: --list: %s\n", err);
			return -1;
		}
		o->list = arg;
		return add_output(o, MT_FMT_LIST, NULL);
	}
	case OPT_JSON:
		return add_output(o, MT_FMT_JSON, arg);
	case 'b':
		o->top_batch = true;
		return 0;
	case OPT_SORT: {
		enum mt_top_sort k;

		if (mt_top_sort_parse(arg, &k))
			return bad("--sort", arg, "expected inuse, growth, peak or alloc");
		o->top_sort = (int)k;
		return 0;
	}
	case OPT_BASE:
		o->base = arg;
		return 0;
	case OPT_GROWTH:
		o->growth = true;
		return 0;
	case OPT_MAX_MEMORY:
		if (parse_bytes(arg, &o->max_memory))
			return bad("--max-memory", arg,
				   "expected bytes from 1 to 4G, e.g. 512M, 2G");
		return 0;
	case OPT_TIMELINE_INTERVAL:
		if (parse_seconds(arg, true, &secs) || secs > 3600 ||
		    (secs > 0 && secs < 0.01))
			return bad("--timeline-interval", arg,
				   "expected 0 (off) or a time from 10ms to 1h, e.g. 0.1, 500ms, 2s");
		o->timeline_interval = secs;
		return 0;
	case OPT_TIMELINE:
		o->timeline_csv = arg;
		return 0;
	case OPT_TIMELINE_SVG:
		o->timeline_svg = arg;
		return 0;
	case OPT_TIMELINE_MAX_SIZE:
		if (parse_bytes(arg, &o->timeline_max_size) ||
		    o->timeline_max_size < 1024)
			return bad("--timeline-max-size", arg,
				   "expected bytes from 1K to 4G, e.g. 10M, 1G");
		return 0;
	case OPT_MIN_AGE:
		if (parse_seconds(arg, true, &secs) || secs > 1e9)
			return bad("--min-age", arg,
				   "expected a time, e.g. 0, 500ms, 5s, 2m");
		o->min_age_ns = (uint64_t)(secs * 1e9);
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case OPT_PROBE_ONLY:
		o->bench_part = MT_PART_TRAPS;
		return 0;
	case OPT_BENCH_PART:
		return parse_word("--bench-part", arg, part_words,
				  "expected all, traps, blocks or caller",
				  &o->bench_part);
	case OPT_MMAP:
		o->mmap = true;
		return 0;
	case OPT_COMM:
		o->comm = arg;
		return 0;
	case OPT_AS_ROOT:
		o->as_root = true;
		return 0;
	case OPT_NO_FOLLOW:
	case OPT_FOLLOW:
		o->follow = c == OPT_FOLLOW;
		o->follow_given = true;
		return 0;
	case OPT_ALLOCATOR:
		if (strcmp(arg, "auto") != 0 && strcmp(arg, "libc") != 0 &&
		    strcmp(arg, "jemalloc") != 0 && strcmp(arg, "tcmalloc") != 0 &&
		    arg[0] != '/')
			return bad("--allocator", arg,
				   "expected auto, libc, jemalloc, tcmalloc or an absolute path");
		o->allocator = arg;
		return 0;
	case OPT_SYMBOL_PREFIX:
		if (strlen(arg) > 32 || strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(arg))
			return bad("--symbol-prefix", arg,
				   "expected up to 32 letters, digits or '_'");
		o->symbol_prefix = arg;
		return 0;
	default:
		return -1;
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * -o FILE chooses the format by FILE's name: .pb.gz, .pb (pprof), .svg,
 * .json.  A name that says another format memtrace does not write
 * (x.html) is refused rather than filled with text; the rest get the text
 * report.
 */
static int output_format(const char *path, enum mt_format *fmt)
{
	static const char *const foreign[] = {
		".html", ".htm", ".xml", ".csv", ".yaml", ".yml",
		".pdf", ".png", ".jpg", ".dot", NULL,
	};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *ext = strrchr(base, '.');

	*fmt = MT_FMT_TEXT;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pb"))
		*fmt = MT_FMT_PPROF;
	else if (ends_with(path, ".svg"))
		*fmt = MT_FMT_SVG;
	else if (ends_with(path, ".json"))
		*fmt = MT_FMT_JSON;
	for (size_t i = 0; ext && ext != base && foreign[i]; i++) {
		if (strcasecmp(ext, foreign[i]) == 0) {
			fprintf(stderr, "memtrace: -o %s: memtrace does not write %s; -o FILE writes the text report, pprof for FILE.pb.gz, a flame graph for FILE.svg, JSON for FILE.json (or name a format: --text=, --leaks=, --folded=, --raw=, --pprof, --svg)\n",
				path, foreign[i]);
			return -1;
		}
	}
	return 0;
}

/* Give formats without a file -o's destination; default to the top report. */
static int resolve_outputs(struct mt_options *o)
{
	bool primary = false;

	for (size_t i = 0; i < o->noutputs; i++) {
		if (!o->outputs[i].path) {
			o->outputs[i].path = o->output;
			primary = true;
		}
	}
	/* The default report, unless every format asked for has a file. */
	if (!primary && (o->noutputs == 0 || o->output)) {
		enum mt_format fmt = MT_FMT_TEXT;

		if ((o->output && output_format(o->output, &fmt)) ||
		    add_output(o, fmt, o->output))
			return -1;
	}
	for (size_t i = 0; i < o->noutputs; i++) {
		if (o->outputs[i].fmt == MT_FMT_PPROF && !o->outputs[i].path) {
			fprintf(stderr, "memtrace: a pprof profile is binary: give it a file (--pprof FILE or -o FILE.pb.gz)\n");
			return -1;
		}
	}
	return 0;
}

static void defaults(struct mt_options *o)
{
	memset(o, 0, sizeof(*o));
	o->top_n = 20;
	o->metric = MT_INUSE_SPACE;
	o->unit = MT_UNIT_AUTO;
	o->max_allocs = MT_DEFAULT_MAX_ALLOCS;
	o->max_stacks = MT_DEFAULT_MAX_STACKS;
	o->unwind = MT_UNWIND_AUTO;
	o->follow = true; /* -- CMD: what it starts too */
	o->max_unwind_rows = MT_DEFAULT_MAX_UNWIND_ROWS;
	o->min_age_ns = DEFAULT_MIN_AGE_NS;
	o->symbol_prefix = "";
	o->keep = 10;
	o->at_s = -1;
	o->timeline_interval = DEFAULT_TIMELINE_INTERVAL;
	o->timeline_max_size = DEFAULT_TIMELINE_MAX_SIZE;
	o->snapshot_interval = DEFAULT_SNAPSHOT_INTERVAL;
}

/* The timeline's options: for tracing, and not with it off. */
static int check_timeline(const struct mt_options *o, bool interval_given)
{
	const char *file = o->timeline_csv ? "--timeline" :
			   o->timeline_svg ? "--timeline-svg" : NULL;

	if (o->report_mode && (file || interval_given)) {
		fprintf(stderr, "memtrace: %s is for tracing, not for report (a saved profile keeps only the peaks)\n",
			file ? file : "--timeline-interval");
		return -1;
	}
	if (!file && (o->at_peak || o->at_s >= 0))
		file = "--at";
	if (file && o->timeline_interval <= 0) {
		fprintf(stderr, "memtrace: %s needs the timeline: --timeline-interval above 0\n",
			file);
		return -1;
	}
	return 0;
}

static int check_target(struct mt_options *o, int argc, char **argv)
{
	if (o->report_mode) {
		if (optind >= argc) {
			fprintf(stderr, "memtrace: report takes a profile file (see --help)\n");
			return -1;
		}
		if (optind != argc - 1 && !o->growth) {
			fprintf(stderr, "memtrace: report takes one profile file, or several with --growth (see --help)\n");
			return -1;
		}
		if (o->growth && optind == argc - 1) {
			fprintf(stderr, "memtrace: --growth needs two profile files or more (the first and the last are compared)\n");
			return -1;
		}
		if (o->growth && o->base) {
			fprintf(stderr, "memtrace: give either --growth or --base, not both (--growth subtracts the first profile)\n");
			return -1;
		}
		if (o->duration > 0) {
			fprintf(stderr, "memtrace: -d is for tracing, not for report\n");
			return -1;
		}
		if (o->sample_bytes) {
			fprintf(stderr, "memtrace: -s is for tracing, not for report (a saved profile says how it was sampled)\n");
			return -1;
		}
		if (o->interval > 0 || o->count || o->delta || o->record) {
			fprintf(stderr, "memtrace: -i, --count, --delta and --record are for tracing, not for report\n");
			return -1;
		}
		if (o->http || o->http_allow || o->http_token_file || o->http_hosts) {
			fprintf(stderr, "memtrace: --http is for tracing, not for report\n");
			return -1;
		}
		/* In a report, -p picks one process of a system-wide profile. */
		o->only_pid = o->pid;
		o->pid = 0;
		o->input = argv[optind];
		o->inputs = &argv[optind];
		o->ninputs = (size_t)(argc - optind);
		return 0;
	}
	if (o->max_memory || o->base || o->growth) {
		fprintf(stderr, "memtrace: %s is for report, not for tracing\n",
			o->base ? "--base" : o->growth ? "--growth" : "--max-memory");
		return -1;
	}
	if (o->count && o->interval <= 0) {
		fprintf(stderr, "memtrace: --count needs -i (it counts interval reports)\n");
		return -1;
	}
	if ((o->http_allow || o->http_token_file || o->http_hosts) && !o->http) {
		fprintf(stderr, "memtrace: %s needs --http\n",
			o->http_allow ? "--http-allow" : o->http_token_file
			? "--http-token-file" : "--http-host");
		return -1;
	}
	if (o->http_allow && !strncmp(o->http, "unix:", 5)) {
		fprintf(stderr, "memtrace: --http-allow is for TCP; a unix socket's permissions decide who connects\n");
		return -1;
	}
	if (o->snapshot_interval != DEFAULT_SNAPSHOT_INTERVAL && !o->http) {
		fprintf(stderr, "memtrace: --snapshot-interval is for the page of --http (files: -i)\n");
		return -1;
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->pid && o->cmd) {
		fprintf(stderr, "memtrace: give either -p PID or -- CMD, not both\n");
		return -1;
	}
	o->system_wide = !o->pid && !o->cmd;
	if (o->as_root && !o->cmd) {
		fprintf(stderr, "memtrace: --as-root is for -- CMD (the command memtrace starts)\n");
		return -1;
	}
	if (o->follow_given && !o->cmd) {
		fprintf(stderr, "memtrace: --follow and --no-follow are for -- CMD (with -p or system-wide there are no children to follow)\n");
		return -1;
	}
	return 0;
}

/*
 * memtrace top: -i is the time between frames, --count the frames (not
 * interval reports); -b and --sort are its own.
 */
static int check_top(struct mt_options *o, bool sort_given)
{
	if (!o->top) {
		if (o->top_batch || sort_given) {
			fprintf(stderr, "memtrace: %s is for memtrace top (the live view)\n",
				o->top_batch ? "-b/--batch" : "--sort");
			return -1;
		}
		return 0;
	}
	o->top_interval = o->interval > 0 ? o->interval : 1.0;
	o->top_frames = o->count;
	o->interval = 0;
	o->count = 0;
	return 0;
}

/* --leaks lists blocks older than --min-age; with -d they are younger. */
static void warn_min_age(const struct mt_options *o, bool min_age_given)
{
	double min_age = (double)o->min_age_ns / 1e9;
	bool leaks = false;

	for (size_t i = 0; i < o->noutputs; i++)
		leaks |= o->outputs[i].fmt == MT_FMT_LEAKS;
	if (!leaks || o->report_mode || o->duration <= 0 || min_age < o->duration)
		return;
	if (o->cmd && !min_age_given) /* CMD usually exits first: all listed */
		return;
	fprintf(stderr, "memtrace: warning: --min-age %gs%s is not shorter than -d %gs: --leaks will list nothing%s\n",
		min_age, min_age_given ? "" : " (the default)", o->duration,
		o->cmd ? " unless CMD exits first" : "");
}

/* MEMTRACE_UNWIND_CACHE_SIZE: the bound of the unwind tables on disk. */
static int unwind_cache_size(struct mt_options *o)
{
	const char *s = getenv("MEMTRACE_UNWIND_CACHE_SIZE");

	if (o->report_mode || !s || !s[0] ||
	    parse_bytes(s, &o->unwind_cache_max) == 0)
		return 0;
	fprintf(stderr, "memtrace: MEMTRACE_UNWIND_CACHE_SIZE=%s: expected bytes, or with K, M, G (at most 4G)\n",
		s);
	return -1;
}

int mt_options_parse(int argc, char **argv, struct mt_options *o)
{
	/* Tracing stops at the first non-option (the command); report permutes. */
	const char *shorts = "+p:d:i:o:n:s:bvhV";
	bool interval_given = false, sort_given = false;
	int c;

	defaults(o);
	if (argc > 1 && strcmp(argv[1], "report") == 0) {
		o->report_mode = true;
		argc--;
		argv++;
		shorts++;
	} else if (argc > 1 && strcmp(argv[1], "top") == 0) {
		o->top = true;
		argc--;
		argv++;
	}
	opterr = 0;
	optind = 0; /* glibc starts afresh: the '+' (or not) of this mode */
	while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("memtrace %s\n", MEMTRACE_VERSION);
			return 1;
		}
		/* "--pprof -- ./prog": getopt took the "--" as the file. */
		if (optind >= 2 && optarg == argv[optind - 1] &&
		    strcmp(argv[optind - 1], "--") == 0) {
			fprintf(stderr, "memtrace: option '%s' needs a value before '--' (see --help)\n",
				argv[optind - 2]);
			return -1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "memtrace: bad or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return -1;
		}
		/* "--top N" as two words: N is the count. */
		if (c == 'n' && !optarg && optind < argc && argv[optind][0] >= '0' &&
		    argv[optind][0] <= '9')
			optarg = argv[optind++];
		if (parse_one(c, optarg, o))
			return -1;
		interval_given |= c == OPT_TIMELINE_INTERVAL;
		sort_given |= c == OPT_SORT;
	}
	if (check_top(o, sort_given) || check_target(o, argc, argv) || check_timeline(o, interval_given) ||
	    resolve_outputs(o) || unwind_cache_size(o))
		return -1;
	warn_min_age(o, o->min_age_ns != DEFAULT_MIN_AGE_NS);
	return 0;
}
