/* SPDX-License-Identifier: MIT */
/* self_profile.c: raw profiles of this very process (see self_profile.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "self_profile.h"

static uint64_t return_address(void *ra)
{
	return (uint64_t)(uintptr_t)ra;
}

__attribute__((noinline)) void record_return(uint64_t *ra)
{
	*ra = return_address(__builtin_extract_return_addr(__builtin_return_address(0)));
	__asm__ volatile("" ::: "memory");
}

struct find_object {
	uint64_t addr;
	struct mt_module mod;
	bool found;
};

/* Locate the loaded object containing f->addr: its mapped range and bias. */
static int find_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_object *f = data;
	uint64_t lo = UINT64_MAX, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		lo = start < lo ? start : lo;
		hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
	}
	if (f->addr < lo || f->addr >= hi)
		return 0;
	f->mod = (struct mt_module){
		/* The first object is the executable, which has no name. */
		.path = strdup(info->dlpi_name[0] ? info->dlpi_name
						  : "/proc/self/exe"),
		.fd = -1,
		.start = lo,
		.end = hi,
		.bias = info->dlpi_addr,
	};
	f->found = true;
	return 1;
}

struct mt_module object_of(uint64_t addr)
{
	struct find_object f = { .addr = addr };

	dl_iterate_phdr(find_object_cb, &f);
	assert_true(f.found);
	assert_non_null(f.mod.path);
	return f.mod;
}

void add_module(struct mt_process *proc, struct mt_module m)
{
	struct mt_module *v = reallocarray(proc->mods, proc->nmods + 1, sizeof(*v));

	assert_non_null(v);
	proc->mods = v;
	v[proc->nmods++] = m;
}

struct mt_process *add_proc(struct mt_raw_profile *raw, uint32_t pid,
			    const char *comm)
{
	struct mt_process *v = reallocarray(raw->procs, raw->nprocs + 1, sizeof(*v));

	assert_non_null(v);
	raw->procs = v;
	v[raw->nprocs] = (struct mt_process){ .pid = pid };
	snprintf(v[raw->nprocs].comm, sizeof(v[raw->nprocs].comm), "%s", comm);
	return &v[raw->nprocs++];
}

/* A process like this one: the test executable and its libraries. */
struct mt_process *add_self(struct mt_raw_profile *raw)
{
	struct mt_process *self = add_proc(raw, (uint32_t)getpid(), "test");

	add_module(self, object_of((uint64_t)(uintptr_t)&record_return));
	return self;
}

struct mt_raw_stack *add_stack(struct mt_raw_profile *raw, uint32_t pid,
			       uint64_t stack_id, const uint64_t *ips,
			       uint32_t nips)
{
	struct mt_raw_stack *v = reallocarray(raw->stacks, raw->nstacks + 1,
					      sizeof(*v));

	assert_non_null(v);
	raw->stacks = v;
	v[raw->nstacks] = (struct mt_raw_stack){
		.pid = pid,
		.stack_id = stack_id,
		.nips = nips,
		.ips = calloc(nips ? nips : 1, sizeof(uint64_t)),
		.alloc_bytes = 100, .alloc_objects = 2,
		.free_bytes = 40, .free_objects = 1,
	};
	assert_non_null(v[raw->nstacks].ips);
	if (nips)
		memcpy(v[raw->nstacks].ips, ips, nips * sizeof(*ips));
	return &v[raw->nstacks++];
}

int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

int teardown(void **state)
{
	struct fixture *fx = *state;

	mt_raw_profile_free(&fx->raw);
	mt_profile_free(&fx->out);
	free(fx);
	return 0;
}

const struct mt_frame *frame_of(const struct mt_profile *p, size_t sample,
				size_t k)
{
	assert_true(sample < p->nsamples);
	assert_true(k < p->samples[sample].nframes);
	assert_true(p->samples[sample].frames[k] < p->nframes);
	return &p->frames[p->samples[sample].frames[k]];
}

const char *base(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

