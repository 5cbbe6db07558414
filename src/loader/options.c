// SPDX-License-Identifier: MIT
/* options.c: getopt_long parsing, validation and --help. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memleak.h"

enum { OPT_METRIC = 256, OPT_CUM, OPT_UNIT, OPT_MAX_ALLOCS, OPT_MAX_STACKS };

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, 'n' },
	{ "metric", required_argument, NULL, OPT_METRIC },
	{ "cum", no_argument, NULL, OPT_CUM },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "max-allocs", required_argument, NULL, OPT_MAX_ALLOCS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: memtrace [OPTIONS] -p PID\n"
"       memtrace [OPTIONS] -- CMD [ARGS...]\n"
"\n"
"Heap profiler for running processes: traces the malloc family with eBPF\n"
"uprobes (no rebuild, no LD_PRELOAD, no restart) and reports where memory\n"
"is allocated and what is still in use, symbolised with file:line.\n"
"\n"
"Target:\n"
"  -p, --pid PID          attach to a running process (all its threads)\n"
"  -- CMD [ARGS...]       start CMD, traced from its first allocation;\n"
"                         memtrace exits with CMD's exit status\n"
"Tracing:\n"
"  -d, --duration SECS    stop after SECS seconds (default: until Ctrl-C,\n"
"                         SIGTERM or the target exits)\n"
"      --max-allocs N     outstanding allocations kept (default %u)\n"
"      --max-stacks N     distinct stacks kept (default %u)\n"
"Report:\n"
"  -o, --output FILE      write the report to FILE instead of stdout\n"
"  -n, --top N            functions and stacks shown (default 20)\n"
"      --metric M         inuse_space (default), inuse_objects,\n"
"                         alloc_space or alloc_objects\n"
"      --cum              sort by cumulative instead of flat value\n"
"      --unit U           auto (default), B, KiB, MiB or GiB\n"
"Other:\n"
"  -v, --verbose          show libbpf's messages\n"
"  -h, --help             show this help\n"
"  -V, --version          show the version\n"
"\n"
"Examples:\n"
"  sudo memtrace -p PID -d 60\n"
"  sudo memtrace -- ./prog --port 8080\n"
"  sudo memtrace -p PID --metric alloc_space -n 30 -o report.txt\n"
"\n"
"Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE.\n",
		MT_DEFAULT_MAX_ALLOCS, MT_DEFAULT_MAX_STACKS);
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "memtrace: invalid value '%s' for %s: %s\n", val, opt,
		why);
	return -1;
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

static int parse_one(int c, const char *arg, struct mt_options *o)
{
	long v;
	char *end;

	switch (c) {
	case 'p':
		if (parse_long("--pid", arg, 1, 0x7fffffff, &v))
			return -1;
		o->pid = (pid_t)v;
		return 0;
	case 'd':
		errno = 0;
		o->duration = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(o->duration) ||
		    o->duration <= 0)
			return bad("--duration", arg,
				   "expected a number of seconds above 0");
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case 'n':
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
	case OPT_MAX_ALLOCS:
		if (parse_long("--max-allocs", arg, 1, 1L << 28, &v))
			return -1;
		o->max_allocs = (uint32_t)v;
		return 0;
	case OPT_MAX_STACKS:
		if (parse_long("--max-stacks", arg, 1, 1L << 24, &v))
			return -1;
		o->max_stacks = (uint32_t)v;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	default:
		return -1;
	}
}

int mt_options_parse(int argc, char **argv, struct mt_options *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->top_n = 20;
	o->metric = MT_INUSE_SPACE;
	o->unit = MT_UNIT_AUTO;
	o->max_allocs = MT_DEFAULT_MAX_ALLOCS;
	o->max_stacks = MT_DEFAULT_MAX_STACKS;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:d:o:n:vhV", long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("memtrace %s\n", MEMTRACE_VERSION);
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "memtrace: bad or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return -1;
		}
		if (parse_one(c, optarg, o))
			return -1;
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (o->pid && o->cmd) {
		fprintf(stderr, "memtrace: give either -p PID or -- CMD, not both\n");
		return -1;
	}
	if (!o->pid && !o->cmd) {
		fprintf(stderr, "memtrace: nothing to trace: give -p PID or -- CMD (see --help)\n");
		return -1;
	}
	return 0;
}
