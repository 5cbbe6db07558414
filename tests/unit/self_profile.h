/* SPDX-License-Identifier: MIT */
/*
 * self_profile.h: raw profiles of this very process, for the tests of
 * symbolisation: return addresses captured in the test code, modules
 * found with dl_iterate_phdr, and a cmocka fixture that frees it all.
 */
#ifndef MEMTRACE_TEST_SELF_PROFILE_H
#define MEMTRACE_TEST_SELF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

/* Store the address this call returns to (in the caller) in *RA. */
void record_return(uint64_t *ra);

/*
 * The loaded object containing ADDR as a module: its mapped range, load
 * bias and path ("/proc/self/exe" for the executable), fd -1.
 */
struct mt_module object_of(uint64_t addr);

void add_module(struct mt_process *proc, struct mt_module m);
struct mt_process *add_proc(struct mt_raw_profile *raw, uint32_t pid,
			    const char *comm);

/* A process like this one (pid getpid(), comm "test"): the executable. */
struct mt_process *add_self(struct mt_raw_profile *raw);

/* A stack of NIPS return addresses: 100 bytes in 2 objects, 40/1 freed. */
struct mt_raw_stack *add_stack(struct mt_raw_profile *raw, uint32_t pid,
			       uint64_t stack_id, const uint64_t *ips,
			       uint32_t nips);

/* Frame K of sample SAMPLE (asserting that it exists). */
const struct mt_frame *frame_of(const struct mt_profile *p, size_t sample,
				size_t k);

/* The file name part of PATH (NULL for NULL). */
const char *base(const char *path);

/* A raw profile and its symbolisation, freed by teardown even on failure. */
struct fixture {
	struct mt_raw_profile raw;
	struct mt_profile out;
};

int setup(void **state);
int teardown(void **state);

#endif /* MEMTRACE_TEST_SELF_PROFILE_H */
