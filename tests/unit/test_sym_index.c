/* SPDX-License-Identifier: MIT */
/*
 * test_sym_index.c: the symbol index's address lookup
 * (mt_sym_index_containing, src/report/symbols/sym_index.c) gives, by a binary
 * search, what libdwfl's dwfl_module_addrinfo gives by its walk over the
 * whole table, which it replaces: at every address of a shared object of
 * symbols of every kind libdwfl treats apart (sym_lookup_lib.S: nested,
 * tied, size-0 labels, local ones, other sections, data, an absolute
 * symbol), unstripped and stripped, at two load biases; and at addresses
 * around every symbol of glibc (with libc6-dbg's .symtab when installed),
 * libstdc++ and python3.11 (.dynsym only), as found on this machine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include "sym_index.h"

/* Built by tests/unit/sym_alias.mk, beside build/tests/unit/THIS. */
#define LOOKUP_LIB "../../unit-objs/libsym_lookup.so"
#define LOOKUP_STRIPPED "../../unit-objs/libsym_lookup-stripped.so"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* PATH (relative to this binary's directory unless absolute). */
static char *test_path(const char *path)
{
	char exe[4096], *full = NULL;
	ssize_t n;

	if (path[0] == '/')
		return strdup(path);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	assert_true(asprintf(&full, "%s/%s", exe, path) > 0);
	return full;
}

/* A libdwfl session with PATH reported at load bias BIAS, and its index. */
struct file {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct mt_sym_index ix;
};

static void file_open(struct file *f, const char *path, Dwarf_Addr bias)
{
	char *full = test_path(path);

	f->dwfl = dwfl_begin(&callbacks);
	assert_non_null(f->dwfl);
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, "file", full, -1, bias, true);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod)
		fail_msg("cannot open %s: %s", full, dwfl_errmsg(-1));
	free(full);
	assert_int_equal(mt_sym_index_build(&f->ix, f->mod), 0);
}

static void file_close(struct file *f)
{
	mt_sym_index_free(&f->ix);
	dwfl_end(f->dwfl);
}

/*
 * Look ADDR up both ways; true when they agree (same name, same start),
 * else say how they differ.  *NAMED counts the addresses given a name.
 */
static bool agree(struct file *f, Dwarf_Addr addr, size_t *named)
{
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *want = dwfl_module_addrinfo(f->mod, addr, &off, &sym,
						NULL, NULL, NULL);
	const struct mt_sym *got = NULL;

	assert_int_equal(mt_sym_index_containing(&f->ix, addr, &got), 0);
	if (want)
		(*named)++;
	if (!want && !got)
		return true;
	if (want && got && strcmp(want, got->name) == 0 &&
	    got->addr == addr - off)
		return true;
	print_message("at %#" PRIx64 ": libdwfl %s%s%#" PRIx64 ", index %s%s%#" PRIx64 "\n",
		      (uint64_t)addr, want ? want : "(none)", want ? " at " : " ",
		      want ? (uint64_t)(addr - off) : 0,
		      got ? got->name : "(none)", got ? " at " : " ",
		      got ? (uint64_t)got->addr : 0);
	return false;
}

/* The name the index gives ADDR (NULL: none). */
static const char *name_at(struct file *f, Dwarf_Addr addr)
{
	const struct mt_sym *s = NULL;

	assert_int_equal(mt_sym_index_containing(&f->ix, addr, &s), 0);
	return s ? s->name : NULL;
}

/* The start of symbol NAME in F's index. */
static Dwarf_Addr addr_of(struct file *f, const char *name)
{
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < f->ix.pass[k].n; i++)
			if (strcmp(f->ix.pass[k].v[i].name, name) == 0)
				return f->ix.pass[k].v[i].addr;
	fail_msg("no symbol %s", name);
	return 0;
}

static void check_fixture(const char *path, Dwarf_Addr bias, bool stripped)
{
	struct file f;
	size_t bad = 0, named = 0;

	file_open(&f, path, bias);
	/* Every address from below the first section to past .data (and
	 * the absolute symbol's value, 0x300, unbiased). */
	for (Dwarf_Addr a = 0; a < 0x4000; a++) {
		if (!agree(&f, a, &named))
			bad++;
		if (bias && !agree(&f, bias + a, &named))
			bad++;
	}
	if (bad)
		fail_msg("%s at bias %#" PRIx64 ": %zu addresses differ", path,
			 (uint64_t)bias, bad);
	assert_true(named > 0x100);
	/* And some answers, which libdwfl gives too (above). */
	assert_string_equal(name_at(&f, addr_of(&f, "inner") + 3), "inner");
	assert_string_equal(name_at(&f, addr_of(&f, "outer") + 40), "outer");
	assert_string_equal(name_at(&f, addr_of(&f, "label_after") + 5),
			    "label_after");
	assert_string_equal(name_at(&f, addr_of(&f, "spanning") + 12),
			    "spanning");
	assert_null(name_at(&f, addr_of(&f, "spanning") + 40));
	assert_null(name_at(&f, addr_of(&f, "other_sized") - 4));
	assert_string_equal(name_at(&f, addr_of(&f, "data_object") + 4),
			    "data_object");
	if (!stripped)
		assert_string_equal(name_at(&f, addr_of(&f, "local_sized") + 2),
				    "local_sized");
	file_close(&f);
}

static void test_fixture(void **state)
{
	(void)state;
	check_fixture(LOOKUP_LIB, 0, false);
	check_fixture(LOOKUP_LIB, 0x7f1234560000, false);
	check_fixture(LOOKUP_STRIPPED, 0, true);
	check_fixture(LOOKUP_STRIPPED, 0x7f1234560000, true);
}

/*
 * Addresses around the symbols of the file at PATH (below, at, in the
 * middle of, at the last byte of and past each), at most about 4000.
 */
static void check_file(const char *path)
{
	struct file f;
	size_t n = 0, bad = 0, named = 0, tried = 0;

	file_open(&f, path, 0x7f0000000000);
	for (int k = 0; k < 2; k++)
		n += f.ix.pass[k].n;
	assert_true(n > 100);
	size_t stride = n / 800 + 1, i = 0;

	for (int k = 0; k < 2; k++) {
		for (size_t j = 0; j < f.ix.pass[k].n; j++, i++) {
			const struct mt_sym *s = &f.ix.pass[k].v[j];
			const Dwarf_Addr at[] = { s->addr - 1, s->addr,
						  s->addr + s->size / 2,
						  s->addr + s->size - 1,
						  s->addr + s->size };

			if (i % stride)
				continue;
			for (size_t m = 0; m < sizeof(at) / sizeof(at[0]); m++) {
				tried++;
				if (!agree(&f, at[m], &named))
					bad++;
			}
		}
	}
	print_message("%s: %zu symbols, %zu addresses, %zu named\n", path, n,
		      tried, named);
	if (bad)
		fail_msg("%s: %zu of %zu addresses differ", path, bad, tried);
	assert_true(named > tried / 2);
	file_close(&f);
}

static void test_system_files(void **state)
{
	static const char *const others[] = {
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/bin/python3.11",
	};
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	Dl_info info;

	(void)state;
	/* This process's libc, whatever its path (not the sanitizers'
	 * interceptors). */
	assert_non_null(libc);
	assert_true(dladdr(dlsym(libc, "strdup"), &info) && info.dli_fname);
	check_file(info.dli_fname);
	dlclose(libc);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (access(others[i], R_OK) == 0)
			check_file(others[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_system_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
