/* SPDX-License-Identifier: MIT */
/*
 * test_symbolize.c: mt_symbolize (src/report/symbols/symbolize.c) on this test
 * binary's own return addresses, captured with __builtin_return_address in
 * known noinline (and always_inline) functions, so that the expected
 * function names and lines are known.  The binary is built with -O2 -g.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "self_profile.h"
#include "frame.h"
#include "symbolize.h"

#define NOINLINE __attribute__((noinline))

/* --- code whose return addresses are symbolised ------------------------- */

/* A stack as the BPF program records it: return addresses, leaf first. */
struct stack {
	uint64_t ips[2];
	int lines[2];  /* source line of each call */
};

/* Keep the caller's call from being a tail call (so it has a return address). */
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

enum { INNER_DECL = __LINE__ + 1 };
NOINLINE void inner(struct stack *s)
{
	record_return(&s->ips[0]); s->lines[0] = __LINE__;
	s->ips[1] = (uint64_t)(uintptr_t)__builtin_extract_return_addr(
		__builtin_return_address(0));
	NO_TAIL_CALL();
}

enum { OUTER_DECL = __LINE__ + 1 };
NOINLINE void outer(struct stack *s)
{
	inner(s); s->lines[1] = __LINE__;
	NO_TAIL_CALL();
}

NOINLINE void other_outer(struct stack *s)
{
	inner(s); s->lines[1] = __LINE__;
	NO_TAIL_CALL();
}

enum { INLINED_DECL = __LINE__ + 1 };
static inline __attribute__((always_inline)) void inlined_helper(struct stack *s)
{
	record_return(&s->ips[0]); s->lines[0] = __LINE__;
}

enum { HAS_INLINED_DECL = __LINE__ + 1 };
NOINLINE void has_inlined(struct stack *s)
{
	inlined_helper(s); s->lines[1] = __LINE__;
	NO_TAIL_CALL();
}

/* In symbolize_cxx.cpp: calls shapes::Circle::area, which records. */
void cxx_member_call(uint64_t *ra, int *line);

/* F is FUNCTION, called at this file's line LINE, defined at DECL_LINE. */
static void assert_frame(const struct mt_frame *f, const char *function,
			 int line, int decl_line, bool inlined)
{
	assert_non_null(f->function);
	assert_string_equal(f->function, function);
	assert_non_null(f->file);
	assert_string_equal(base(f->file), "test_symbolize.c");
	assert_true(f->file[0] == '/');  /* made absolute with the comp dir */
	assert_int_equal(f->line, line);
	assert_non_null(f->decl_file);
	assert_string_equal(base(f->decl_file), "test_symbolize.c");
	assert_int_equal(f->decl_line, decl_line);
	assert_string_equal(f->module, "/proc/self/exe");
	assert_int_equal(f->inlined, inlined);
}

/* --- tests -------------------------------------------------------------- */

static void test_two_frames(void **state)
{
	struct fixture *fx = *state;
	struct stack s = { 0 };

	outer(&s);
	add_self(&fx->raw);
	add_stack(&fx->raw, (uint32_t)getpid(), 1, s.ips, 2);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_profile *p = &fx->out;

	assert_int_equal(p->nsamples, 1);
	assert_int_equal(p->samples[0].nframes, 2);
	assert_frame(frame_of(p, 0, 0), "inner", s.lines[0], INNER_DECL, false);
	assert_frame(frame_of(p, 0, 1), "outer", s.lines[1], OUTER_DECL, false);
	/* A frame keeps the return address it came from. */
	assert_true(frame_of(p, 0, 0)->addr == s.ips[0]);
	assert_true(frame_of(p, 0, 1)->addr == s.ips[1]);
}

static void test_inlined_frame(void **state)
{
	struct fixture *fx = *state;
	struct stack s = { 0 };

	has_inlined(&s);
	add_self(&fx->raw);
	add_stack(&fx->raw, (uint32_t)getpid(), 1, s.ips, 1);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_profile *p = &fx->out;

	/* One return address, two source frames: the inlined one first. */
	assert_int_equal(p->samples[0].nframes, 2);
	assert_frame(frame_of(p, 0, 0), "inlined_helper", s.lines[0],
		     INLINED_DECL, true);
	assert_frame(frame_of(p, 0, 1), "has_inlined", s.lines[1],
		     HAS_INLINED_DECL, false);
}

static void test_values_dedup_and_copies(void **state)
{
	struct fixture *fx = *state;
	struct stack a = { 0 }, b = { 0 };

	outer(&a);
	other_outer(&b);
	assert_true(a.ips[0] == b.ips[0]);  /* the same call in inner */
	struct mt_process *self = add_self(&fx->raw);

	snprintf(fx->raw.sum.target, sizeof(fx->raw.sum.target), "pid 1 (x)");
	fx->raw.sum.counters[MT_CNT_EVENTS] = 42;
	add_stack(&fx->raw, self->pid, 1, a.ips, 2);
	add_stack(&fx->raw, self->pid, 2, b.ips, 2);
	add_stack(&fx->raw, self->pid, 3, a.ips, 2);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_profile *p = &fx->out;

	/* inner, outer, other_outer: each stored once. */
	assert_int_equal(p->nframes, 3);
	assert_int_equal(p->nsamples, 3);
	assert_int_equal(p->samples[0].frames[0], p->samples[1].frames[0]);
	assert_int_not_equal(p->samples[0].frames[1], p->samples[1].frames[1]);
	assert_memory_equal(p->samples[0].frames, p->samples[2].frames,
			    2 * sizeof(uint32_t));
	assert_string_equal(frame_of(p, 1, 1)->function, "other_outer");
	assert_int_equal(frame_of(p, 1, 1)->line, b.lines[1]);
	/* alloc 100 bytes / 2 objects, freed 40 / 1 */
	assert_int_equal(p->samples[0].pid, self->pid);
	assert_int_equal(p->samples[0].v[MT_ALLOC_OBJECTS], 2);
	assert_int_equal(p->samples[0].v[MT_ALLOC_SPACE], 100);
	assert_int_equal(p->samples[0].v[MT_INUSE_OBJECTS], 1);
	assert_int_equal(p->samples[0].v[MT_INUSE_SPACE], 60);
	/* Summary and processes (without modules) are copied. */
	assert_string_equal(p->sum.target, "pid 1 (x)");
	assert_int_equal(p->sum.counters[MT_CNT_EVENTS], 42);
	assert_int_equal(p->nprocs, 1);
	assert_int_equal(p->procs[0].pid, self->pid);
	assert_string_equal(p->procs[0].comm, "test");
	assert_null(p->procs[0].mods);
	assert_int_equal(p->procs[0].nmods, 0);
}

static void test_unresolved(void **state)
{
	struct fixture *fx = *state;
	struct mt_process *self = add_self(&fx->raw);
	/* A module whose file does not exist: named, but not symbolised. */
	const uint64_t ips[] = { 0x10000124, 0x20000010 };

	add_module(self, (struct mt_module){
				 .path = strdup("/nonexistent/libfake.so"),
				 .fd = -1,
				 .start = 0x10000000,
				 .end = 0x10002000,
				 .bias = 0x0fff0000,
			 });
	assert_non_null(self->mods[1].path);
	add_stack(&fx->raw, self->pid, 1, ips, 2);
	add_stack(&fx->raw, self->pid, 2, NULL, 0);
	add_stack(&fx->raw, 999999999, 3, ips, 1);  /* no such process */
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_profile *p = &fx->out;
	const struct mt_frame *f = frame_of(p, 0, 0);

	/* ELF-relative offset of the call: ip - 1 - bias */
	assert_string_equal(f->function, "libfake.so+0x10123");
	assert_true(f->unresolved);
	assert_null(f->file);
	assert_int_equal(f->line, 0);
	assert_string_equal(f->module, "/nonexistent/libfake.so");
	f = frame_of(p, 0, 1);
	assert_string_equal(f->function, "[unknown]+0x2000000f");
	assert_true(f->unresolved);
	assert_null(f->module);
	assert_null(f->file);
	/* No stack recorded. */
	assert_int_equal(p->samples[1].nframes, 1);
	assert_string_equal(frame_of(p, 1, 0)->function, "[unknown stack]");
	assert_null(frame_of(p, 1, 0)->module);
	/* A pid without modules: nothing is known about the address. */
	assert_string_equal(frame_of(p, 2, 0)->function, "[unknown]+0x10000123");
	/* The module's range and build id are the profile's maps. */
	assert_int_equal(p->nmaps, self->nmods);
	assert_string_equal(p->maps[p->nmaps - 1].path, "/nonexistent/libfake.so");
	assert_int_equal(p->maps[p->nmaps - 1].pid, self->pid);
}

static void test_elf_symbols_and_demangling(void **state)
{
	struct fixture *fx = *state;
	struct mt_process *self = add_self(&fx->raw);
	/* Shared libraries without debug information: ELF symbols only. */
	uint64_t libc_fn = (uint64_t)(uintptr_t)&getpid;
	void *cxx = dlsym(RTLD_DEFAULT, "_ZNSt9exceptionD2Ev");

	assert_non_null(cxx);
	uint64_t cxx_fn = (uint64_t)(uintptr_t)cxx;

	add_module(self, object_of(libc_fn));
	add_module(self, object_of(cxx_fn));
	assert_non_null(strstr(self->mods[1].path, "libc"));
	assert_non_null(strstr(self->mods[2].path, "libstdc++"));
	/* A return address just after each function's first byte. */
	const uint64_t ips[] = { libc_fn + 1, cxx_fn + 1 };

	add_stack(&fx->raw, self->pid, 1, ips, 2);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_profile *p = &fx->out;

	assert_int_equal(p->samples[0].nframes, 2);
	assert_non_null(strstr(frame_of(p, 0, 0)->function, "getpid"));
	assert_string_equal(frame_of(p, 0, 0)->module, self->mods[1].path);
	assert_string_equal(frame_of(p, 0, 1)->function,
			    "std::exception::~exception()");
	assert_string_equal(frame_of(p, 0, 1)->module, self->mods[2].path);
}

static void test_cxx_linkage_name(void **state)
{
	struct fixture *fx = *state;
	uint64_t ip = 0;
	int line = 0;

	cxx_member_call(&ip, &line);
	add_self(&fx->raw);
	add_stack(&fx->raw, (uint32_t)getpid(), 1, &ip, 1);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);

	const struct mt_frame *f = frame_of(&fx->out, 0, 0);

	/* The full demangled name, parameters included. */
	assert_string_equal(f->function,
			    "shapes::Circle::area(unsigned long*, int*)");
	assert_string_equal(base(f->file), "symbolize_cxx.cpp");
	assert_int_equal(f->line, line);
	assert_false(f->inlined);
}

static void test_module_fd(void **state)
{
	struct fixture *fx = *state;
	struct mt_process *self = add_self(&fx->raw);
	struct stack s = { 0 };
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	/* Reached through the descriptor only: the path does not exist. */
	free(self->mods[0].path);
	self->mods[0].path = strdup("/nonexistent/dir/test_symbolize");
	assert_non_null(self->mods[0].path);
	self->mods[0].fd = fd;
	outer(&s);
	add_stack(&fx->raw, self->pid, 1, s.ips, 2);
	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);
	assert_string_equal(frame_of(&fx->out, 0, 0)->function, "inner");
	assert_string_equal(frame_of(&fx->out, 0, 1)->function, "outer");
	assert_string_equal(frame_of(&fx->out, 0, 0)->module,
			    "/nonexistent/dir/test_symbolize");
	/* mt_symbolize does not consume the descriptor; freeing closes it. */
	assert_int_not_equal(fcntl(fd, F_GETFD), -1);
	mt_raw_profile_free(&fx->raw);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
}

static void test_empty_and_errors(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(mt_symbolize(&fx->raw, &fx->out), 0);
	assert_int_equal(fx->out.nsamples, 0);
	assert_int_equal(fx->out.nframes, 0);
	assert_int_equal(mt_symbolize(NULL, &fx->out), -EINVAL);
	assert_int_equal(mt_symbolize(&fx->raw, NULL), -EINVAL);
	/* Freeing NULL or zeroed profiles is harmless. */
	mt_raw_profile_free(NULL);
	mt_profile_free(NULL);
	mt_raw_profile_free(&fx->raw);
	mt_raw_profile_free(&fx->raw);
}

/*
 * A cache kept from one profile to the next: the same frames as without
 * it; a second profile that adds a stack keeps the first's frames at their
 * indices; a process whose files changed is symbolised anew (here its one
 * module moved: nothing resolves, and nothing stale is reused).
 */
static void test_cache(void **state)
{
	struct fixture *fx = *state;
	struct mt_symcache *c = mt_symcache_new();
	struct mt_profile plain = { 0 }, again = { 0 }, moved = { 0 };
	struct stack s = { 0 }, t = { 0 };
	struct mt_process *self;

	assert_non_null(c);
	outer(&s);
	other_outer(&t);
	self = add_self(&fx->raw);
	add_stack(&fx->raw, (uint32_t)getpid(), 1, s.ips, 2);
	assert_int_equal(mt_symbolize(&fx->raw, &plain), 0);
	assert_int_equal(mt_symbolize_cached(&fx->raw, &fx->out, c), 0);
	assert_int_equal(fx->out.nframes, plain.nframes);
	for (size_t i = 0; i < plain.nframes; i++)
		assert_true(mt_frame_same(&fx->out.frames[i], &plain.frames[i]));
	assert_frame(frame_of(&fx->out, 0, 1), "outer", s.lines[1], OUTER_DECL,
		     false);

	add_stack(&fx->raw, (uint32_t)getpid(), 2, t.ips, 2);
	assert_int_equal(mt_symbolize_cached(&fx->raw, &again, c), 0);
	assert_int_equal(again.nsamples, 2);
	assert_true(again.samples[0].frames[1] == fx->out.samples[0].frames[1]);
	assert_string_equal(frame_of(&again, 1, 1)->function, "other_outer");
	assert_int_equal(frame_of(&again, 1, 1)->line, t.lines[1]);
	assert_string_equal(frame_of(&again, 1, 0)->function, "inner");

	/* The executable "moved": every address now lies outside it. */
	self->mods[0].start += 1ULL << 40;
	self->mods[0].end += 1ULL << 40;
	self->mods[0].bias += 1ULL << 40;
	assert_int_equal(mt_symbolize_cached(&fx->raw, &moved, c), 0);
	assert_int_equal(moved.nsamples, 2);
	assert_true(frame_of(&moved, 0, 0)->unresolved);
	mt_profile_free(&plain);
	mt_profile_free(&again);
	mt_profile_free(&moved);
	mt_symcache_free(c);
	mt_symcache_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inlined_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_values_dedup_and_copies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unresolved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_elf_symbols_and_demangling,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_linkage_name, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_module_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
	};

	return cmocka_run_group_tests_name("symbolize", tests, NULL, NULL);
}
