// SPDX-License-Identifier: MIT
/*
 * symbol_reports.c: what symbolisation costs a trace that reports every
 * interval while its program runs and dlopens: REPORTS reports of the
 * first process of a text heap profile (tcmalloc's or jemalloc's, with its
 * maps), one symbol cache throughout.  Report R has the first R/REPORTS of
 * the profile's stacks (new addresses keep coming), a new copy of the
 * process's modules (the loader's arrays are rebuilt) and, every second
 * report up to eight, one more library mapped far away (a dlopen).
 *
 * Build against the report library of a tree (after `make unit-bins`):
 *   cc -O2 -D_GNU_SOURCE -Ibpf -Isrc -Isrc/report/model \
 *      -Isrc/report/symbols -Isrc/report/readers -o symbol_reports \
 *      bench/symbol_reports.c build/unit-objs/libreport.a \
 *      -ldw -lelf -lz -lstdc++ -lm
 * usage: symbol_reports PROFILE.heap REPORTS
 * Prints the last report's samples and frames, and the cache's libdwfl
 * sessions and resolutions; time two trees' builds against each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile.h"
#include "symbolize.h"
#include "tcmalloc_read.h"

int main(int argc, char **argv)
{
	static const char *libs[] = {
		"/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libbz2.so.1.0",
		"/usr/lib/x86_64-linux-gnu/liblzma.so.5", "/usr/lib/x86_64-linux-gnu/libelf.so.1",
		"/usr/lib/x86_64-linux-gnu/libdw.so.1", "/usr/lib/x86_64-linux-gnu/libcap.so.2",
		"/usr/lib/x86_64-linux-gnu/libbpf.so.1", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
	};
	static char text[64 << 20];
	FILE *f = argc == 3 ? fopen(argv[1], "r") : NULL;
	int reports = argc == 3 ? atoi(argv[2]) : 0;
	size_t len;

	if (!f || reports < 1) {
		fprintf(stderr, "usage: symbol_reports PROFILE.heap REPORTS\n");
		return 2;
	}
	len = fread(text, 1, sizeof(text), f);
	fclose(f);
	struct mt_raw_profile raw = { 0 };
	char err[256] = "no process in the profile";
	struct mt_symcache *c = mt_symcache_new();

	if (!c || mt_tcmalloc_parse(text, len, &raw, err, sizeof(err)) ||
	    raw.nprocs == 0) {
		fprintf(stderr, "symbol_reports: %s\n", c ? err : "no memory");
		return 1;
	}
	struct mt_process orig = raw.procs[0];
	size_t nstacks = raw.nstacks;
	size_t added = 0;

	for (int r = 0; r < reports; r++) {
		struct mt_process p;
		struct mt_profile out;

		if (mt_process_copy(&p, &orig))
			return 1;
		if (r % 2 == 1 && added < sizeof(libs) / sizeof(libs[0]))
			added++;
		p.mods = realloc(p.mods, (p.nmods + added) * sizeof(*p.mods));
		for (size_t i = 0; i < added; i++) {
			uint64_t base = (UINT64_C(0x7e0000000000)) + (i << 32);
			p.mods[p.nmods++] = (struct mt_module){
				.path = strdup(libs[i]), .fd = -1, .start = base,
				.end = base + (1 << 20), .bias = base };
		}
		raw.procs[0] = p;
		/* The program goes on: more stacks each report. */
		raw.nstacks = nstacks * (size_t)(r + 1) / (size_t)reports;
		if (mt_symbolize_cached(&raw, &out, c))
			return 1;
		if (r == reports - 1)
			printf("%zu samples %zu frames\n", out.nsamples, out.nframes);
		mt_profile_free(&out);
		mt_process_free_mods(&p);
	}
	raw.procs[0] = orig;
	raw.nstacks = nstacks;
	struct mt_symcache_stats st;
	mt_symcache_get_stats(c, &st);
	printf("sessions %zu resolutions %zu\n", st.sessions, st.resolutions);
	mt_symcache_free(c);
	mt_raw_profile_free(&raw);
	return 0;
}
