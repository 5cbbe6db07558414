// SPDX-License-Identifier: MIT
/* blocks.c: raw blocks -> struct mt_block, through a sorted stack index. */
#include "blocks.h"

#include <errno.h>
#include <stdlib.h>

/* A raw stack by what identifies it: process, category and stack id. */
struct stack_ref {
	uint32_t pid;
	uint32_t category;
	uint64_t stack_id;
	size_t index;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct stack_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->category != y->category)
		return x->category < y->category ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return 0;
}

int mt_profile_add_blocks(struct mt_profile *p, const struct mt_raw_profile *raw)
{
	size_t n = raw->nstacks;
	struct stack_ref *refs = malloc((n ? n : 1) * sizeof(*refs));
	struct mt_block *blocks = calloc(raw->nblocks ? raw->nblocks : 1,
					 sizeof(*blocks));

	if (!refs || !blocks) {
		free(refs);
		free(blocks);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct stack_ref){ raw->stacks[i].pid,
					      raw->stacks[i].category,
					      raw->stacks[i].stack_id, i };
	qsort(refs, n, sizeof(*refs), cmp_ref);
	for (size_t i = 0; i < raw->nblocks; i++) {
		const struct mt_raw_block *rb = &raw->blocks[i];
		struct stack_ref key = { rb->pid, rb->category, rb->stack_id, 0 };
		const struct stack_ref *r = bsearch(&key, refs, n, sizeof(*refs),
						    cmp_ref);

		blocks[i] = (struct mt_block){
			.pid = rb->pid, .addr = rb->addr, .size = rb->size,
			.timestamp_ns = rb->timestamp_ns,
			.est_bytes = rb->est_bytes, .est_objects = rb->est_objects,
			.sample = r && r->index < p->nsamples ? r->index : SIZE_MAX,
		};
	}
	free(refs);
	free(p->blocks);
	p->blocks = blocks;
	p->nblocks = raw->nblocks;
	return 0;
}
