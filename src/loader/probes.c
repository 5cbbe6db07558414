// SPDX-License-Identifier: MIT
/* probes.c: the table of probed functions and their attachment. */
#include "probes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <bpf/libbpf.h>

#include "elf_syms.h"
#include "memleak.skel.h"

struct probe_def {
	const char *func;
	bool required;
	bool has_return; /* needs alloc_return */
	struct bpf_program *(*entry)(struct memleak_bpf *skel);
};

#define ENTRY(name)                                                        \
	static struct bpf_program *entry_##name(struct memleak_bpf *skel)  \
	{                                                                  \
		return skel->progs.name##_enter;                           \
	}
ENTRY(malloc)
ENTRY(calloc)
ENTRY(realloc)
ENTRY(reallocarray)
ENTRY(posix_memalign)
ENTRY(aligned_alloc)
ENTRY(memalign)
ENTRY(valloc)
ENTRY(pvalloc)
ENTRY(free)
#undef ENTRY

static const struct probe_def probe_defs[] = {
	{ "malloc", true, true, entry_malloc },
	{ "free", true, false, entry_free },
	{ "calloc", false, true, entry_calloc },
	{ "realloc", false, true, entry_realloc },
	{ "reallocarray", false, true, entry_reallocarray },
	{ "posix_memalign", false, true, entry_posix_memalign },
	{ "aligned_alloc", false, true, entry_aligned_alloc },
	{ "memalign", false, true, entry_memalign },
	{ "valloc", false, true, entry_valloc },
	{ "pvalloc", false, true, entry_pvalloc },
};
#define NDEFS (sizeof(probe_defs) / sizeof(probe_defs[0]))

static int attach_one(struct mt_probes *p, struct bpf_program *prog, pid_t pid,
		      const char *path, uint64_t off, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, pid, path, (size_t)off,
					       &opts);
	if (!link)
		return -errno;
	p->links[p->nlinks++] = link;
	return 0;
}

int mt_probes_attach(struct mt_probes *p, struct memleak_bpf *skel, pid_t pid,
		     const char *path)
{
	uint64_t offs[NDEFS];
	bool use[NDEFS];
	int ret;

	p->nlinks = 0;
	p->nfuncs = 0;
	p->links = calloc(2 * NDEFS, sizeof(*p->links));
	if (!p->links)
		return -ENOMEM;
	for (size_t i = 0; i < NDEFS; i++) {
		ret = mt_elf_func_offset(path, probe_defs[i].func, &offs[i]);
		if (ret && (probe_defs[i].required || ret != -ENOENT))
			return ret;
		use[i] = ret == 0;
		/* An alias of a function already probed (aligned_alloc and
		 * memalign in some glibc versions) must not be probed twice. */
		for (size_t j = 0; j < i && use[i]; j++)
			if (use[j] && offs[j] == offs[i])
				use[i] = false;
	}
	for (size_t i = 0; i < NDEFS; i++) {
		if (!use[i] || !probe_defs[i].has_return)
			continue;
		ret = attach_one(p, skel->progs.alloc_return, pid, path, offs[i],
				 true);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < NDEFS; i++) {
		if (!use[i])
			continue;
		ret = attach_one(p, probe_defs[i].entry(skel), pid, path,
				 offs[i], false);
		if (ret)
			return ret;
		p->nfuncs++;
	}
	return 0;
}

void mt_probes_detach(struct mt_probes *p)
{
	/* Entry probes (attached last) go first, then the return probes. */
	while (p->nlinks > 0)
		bpf_link__destroy(p->links[--p->nlinks]);
	free(p->links);
	p->links = NULL;
}
