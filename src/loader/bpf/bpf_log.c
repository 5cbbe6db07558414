// SPDX-License-Identifier: MIT
/* bpf_log.c: libbpf's warnings always, its debug output with -v. */
#include "bpf_log.h"

#include <stdlib.h>

static FILE *out;
static bool verbose;
static FILE *held;          /* a memory stream while holding */
static char *held_buf;
static size_t held_len;

void mt_bpf_log_init(FILE *f, bool v)
{
	out = f;
	verbose = v;
	libbpf_set_print(mt_bpf_log_print);
}

int mt_bpf_log_print(enum libbpf_print_level level, const char *fmt,
		     va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(held ? held : out ? out : stderr, fmt, ap);
}

void mt_bpf_log_hold(void)
{
	if (verbose || held)
		return;
	held = open_memstream(&held_buf, &held_len);
}

void mt_bpf_log_release(bool show)
{
	if (!held)
		return;
	fclose(held);
	held = NULL;
	if (show && held_len)
		fwrite(held_buf, 1, held_len, out ? out : stderr);
	free(held_buf);
	held_buf = NULL;
	held_len = 0;
}
