/* SPDX-License-Identifier: MIT */
/*
 * test_sym_alias.c: frames are named by the public alias of a function
 * with several names at one address (src/report/symbols/sym_index.c), as valgrind
 * and perf name them: from ELF symbols (libsym_alias.so, built from
 * sym_alias_lib.c without debug information), from DWARF (a function of
 * this binary, built with -g), and glibc's own strdup, qsort_r and dlopen.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "self_profile.h"
#include "symbolize.h"

/* Built by tests/unit/sym_alias.mk, from build/tests/unit/THIS. */
#define SYM_ALIAS_LIB "../../unit-objs/libsym_alias.so"

/* The path of libsym_alias.so, beside this binary's build directory. */
static char *alias_lib_path(void)
{
	char exe[4096], *path = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	assert_true(asprintf(&path, "%s/%s", exe, SYM_ALIAS_LIB) > 0);
	return path;
}

/* DWARF names this function __gadget; its public name is gadget. */
int __gadget(int x);
__attribute__((noinline)) int __gadget(int x)
{
	return x * 7 + 3;
}
extern __typeof(__gadget) gadget __attribute__((weak, alias("__gadget")));

/*
 * And this one too, but GCC splits it into hot and cold parts
 * (__split_fn.cold): its DWARF has address ranges, no low pc.
 */
__attribute__((cold, noinline)) void split_rare(int x);
__attribute__((cold, noinline)) void split_rare(int x)
{
	fprintf(stderr, "rare %d\n", x);
}

int __split_fn(int x);
__attribute__((noinline)) int __split_fn(int x)
{
	if (__builtin_expect(x == 123456, 0)) {
		split_rare(x);
		split_rare(x + 1);
	}
	return x * 2;
}
extern __typeof(__split_fn) split_fn __attribute__((weak, alias("__split_fn")));

static uint64_t addr_of(void *fn)
{
	assert_non_null(fn);
	return (uint64_t)(uintptr_t)fn;
}

/*
 * Symbolise one stack of return addresses just past the first byte of each
 * of FNS (so each is looked up at its entry) and check the frames' names.
 */
static void check_names(struct fixture *fx, struct mt_process *proc,
			const uint64_t *fns, const char *const *want, size_t n)
{
	uint64_t ips[8];

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		ips[i] = fns[i] + 1;
	add_stack(&fx->raw, proc->pid, 1, ips, (uint32_t)n);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);
	assert_int_equal(fx->out.nsamples, 1);
	/* One frame per address: none of these has inlined code at entry. */
	assert_int_equal(fx->out.samples[0].nframes, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(frame_of(&fx->out, 0, i)->function, want[i]);
}

static void test_elf_aliases(void **state)
{
	struct fixture *fx = *state;
	char *lib = alias_lib_path();
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	free(lib);
	assert_non_null(h);
	struct mt_process *self = add_self(&fx->raw);
	int (*(*get_lonely)(void))(int) =
		(int (*(*)(void))(int))dlsym(h, "get_lonely");

	assert_non_null(get_lonely);
	const uint64_t fns[] = {
		addr_of(dlsym(h, "__widget")),
		addr_of(dlsym(h, "widget")),
		addr_of(dlvsym(h, "vfun", "V1")),
		addr_of(dlvsym(h, "vfun", "V2")),
		addr_of(dlsym(h, "longer_public_name")),
		addr_of((void *)get_lonely()),
		addr_of(dlsym(h, "za")),
	};
	static const char *const want[] = {
		"widget",             /* WEAK, shortest, over __widget and __GI___widget */
		"widget",             /* the same address however it was found */
		"vfun",               /* vfun@V1 (GLOBAL), without version, over __vfun_old */
		"vfun",               /* vfun@@V2, over __vfun_new */
		"longer_public_name", /* GLOBAL over the shorter LOCAL lp */
		"__lonely",           /* only LOCAL names: the shortest */
		/* The sized symbol over a shorter size-0 alias, as perf
		 * and valgrind name it (clang's Sema::SubstDecl, not
		 * TemplateDeclInstantiator::VisitDecl). */
		"fused_sized_function_name",
	};

	assert_true(fns[0] == fns[1]);
	assert_true(fns[2] != fns[3]);
	assert_true(fns[6] == addr_of(dlsym(h, "fused_sized_function_name")));
	add_module(self, object_of(fns[0]));
	assert_non_null(strstr(self->mods[1].path, "libsym_alias.so"));
	check_names(fx, self, fns, want, sizeof(fns) / sizeof(fns[0]));
	/* The module has no DWARF: these names came from its symbol table. */
	assert_null(frame_of(&fx->out, 0, 0)->file);
	mt_profile_free(&fx->out);
	mt_raw_profile_free(&fx->raw);
	dlclose(h);
}

static void test_dwarf_alias(void **state)
{
	struct fixture *fx = *state;
	struct mt_process *self = add_self(&fx->raw);
	const uint64_t fns[] = { addr_of((void *)&__gadget),
				 addr_of((void *)&__split_fn) };
	static const char *const want[] = { "gadget", "split_fn" };

	assert_int_equal(gadget(1), 10);
	assert_int_equal(split_fn(2), 4);
	check_names(fx, self, fns, want, 2);
	/* Named from DWARF (with its file), but by its public alias. */
	assert_non_null(frame_of(&fx->out, 0, 0)->file);
	assert_string_equal(base(frame_of(&fx->out, 0, 0)->file),
			    "test_sym_alias.c");
}

static void test_glibc(void **state)
{
	struct fixture *fx = *state;
	struct mt_process *self = add_self(&fx->raw);
	/* libc's own functions, not the sanitizers' interceptors. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	assert_non_null(libc);
	/* Whatever names the lookup meets (DWARF of libc6-dbg, or ELF). */
	const uint64_t fns[] = {
		addr_of(dlsym(libc, "strdup")),
		addr_of(dlsym(libc, "qsort_r")),
		addr_of(dlsym(libc, "dlopen")),
	};
	static const char *const want[] = { "strdup", "qsort_r", "dlopen" };

	add_module(self, object_of(fns[0]));
	assert_non_null(strstr(self->mods[1].path, "libc.so"));
	check_names(fx, self, fns, want, 3);
	dlclose(libc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_elf_aliases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwarf_alias, setup, teardown),
		cmocka_unit_test_setup_teardown(test_glibc, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
