/* SPDX-License-Identifier: MIT */
/* options.h: the command line. */
#ifndef MEMTRACE_OPTIONS_H
#define MEMTRACE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"
#include "units.h"

struct mt_options {
	pid_t pid;             /* -p; 0 when a command is given */
	char **cmd;            /* after "--"; NULL with -p */
	double duration;       /* -d seconds; 0: until stopped or target exit */
	const char *output;    /* -o; NULL: stdout */
	int top_n;             /* -n */
	enum mt_value metric;  /* --metric */
	bool cum;              /* --cum */
	enum mt_unit unit;     /* --unit */
	uint32_t max_allocs;   /* --max-allocs */
	uint32_t max_stacks;   /* --max-stacks */
	bool verbose;          /* -v: libbpf's messages too */
};

/*
 * Parse argv.  Returns 0 to go on, 1 when --help or --version was printed
 * (exit 0), -1 after printing a one-line error (exit non-zero).
 */
int mt_options_parse(int argc, char **argv, struct mt_options *o);

#endif
