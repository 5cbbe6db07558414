// SPDX-License-Identifier: MIT
/* bpf_load.c: load the BPF object, attach with the best link mode. */
#include "bpf_load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "bpf_log.h"
#include "errmsg.h"
#include "memleak.skel.h"
#include "privs.h"
#include "sampling_tables.h"
#include "timeline.h"
#include "unwinder.h"

/* Open and load the BPF object for links of MODE.  -errno. */
static int load_bpf(const struct mt_options *o, bool follow_only,
		    enum mt_link_mode mode, struct memleak_bpf **out)
{
	struct memleak_bpf *skel = memleak_bpf__open();
	long page = sysconf(_SC_PAGESIZE);
	int err;

	*out = NULL;
	if (!skel)
		return -errno;
	skel->rodata->page_size = page > 0 ? (__u64)page : 4096;
	skel->rodata->probe_only = o->probe_only;
	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->follow_only = follow_only;
	bpf_map__set_max_entries(skel->maps.allocs, o->max_allocs);
	bpf_map__set_max_entries(skel->maps.stats, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stacks, o->max_stacks);
	skel->rodata->sample_bytes = o->sample_bytes;
	skel->rodata->unwind_mode = o->unwind;
	mt_unwinder_size(skel, o->unwind != MT_UNWIND_FP, o->max_unwind_rows);
	mt_timeline_size(skel, o->timeline_interval > 0);
	mt_sampling_tables((__u32 *)skel->rodata->log2_tab,
			   (__u32 *)skel->rodata->g_tab);
	if (mode != MT_LINK_PERF) {
		bpf_program__set_expected_attach_type(skel->progs.uprobe_entry,
						      MT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.uprobe_return,
						      MT_BPF_TRACE_UPROBE_MULTI);
	}
	/* The session program calls a kfunc older kernels lack. */
	if (mode == MT_LINK_SESSION)
		bpf_program__set_expected_attach_type(skel->progs.uprobe_session,
						      MT_BPF_TRACE_UPROBE_SESSION);
	else
		bpf_program__set_autoload(skel->progs.uprobe_session, false);
	err = memleak_bpf__load(skel);
	if (err) {
		memleak_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

/*
 * The best link mode to try first: when sampling, uprobe sessions (an
 * unsampled call then skips its return probe); else uprobe_multi (one
 * link per object and program: quick to attach and to remove).
 * MEMTRACE_LINKS=perf|multi caps it, so that the tests and benchmarks
 * can run the fallbacks on a new kernel.
 */
static int first_link_mode(const struct mt_options *o)
{
	const char *cap = getenv("MEMTRACE_LINKS");
	int mode = o->sample_bytes ? MT_LINK_SESSION : MT_LINK_MULTI;

	if (cap && strcmp(cap, "perf") == 0)
		return MT_LINK_PERF;
	if (cap && strcmp(cap, "multi") == 0)
		return MT_LINK_MULTI;
	return mode;
}

int mt_bpf_load_and_attach(const struct mt_options *o, bool follow_only,
			   struct memleak_bpf **skel, mt_attach_fn attach,
			   void *ctx, int *attach_err)
{
	int ret = -EOPNOTSUPP;
	int mode = first_link_mode(o);

	*attach_err = 0;
	for (; mode >= MT_LINK_PERF && ret == -EOPNOTSUPP; mode--) {
		/* libbpf's warnings about an attempt that fails are dropped:
		 * memtrace falls back, or says what failed itself. */
		mt_bpf_log_hold();
		ret = load_bpf(o, follow_only, (enum mt_link_mode)mode, skel);
		if (ret)
			mt_bpf_log_release(false);
		if (ret && mode != MT_LINK_PERF) {
			ret = -EOPNOTSUPP;
			continue;
		}
		if (ret == -EPERM || ret == -EACCES)
			return mt_fail("not allowed to load BPF programs: need %s",
				       MT_CAPS_NEEDED);
		if (ret == -E2BIG)
			return mt_fail("cannot load the BPF program: a map is too large for this kernel (--max-allocs %u, --max-stacks %u): try smaller values",
				       o->max_allocs, o->max_stacks);
		if (ret)
			return mt_fail("cannot load the BPF program: %s (needs a kernel with BPF, BTF and uprobes; -v shows details)",
				       strerror(-ret));
		ret = attach(*skel, (enum mt_link_mode)mode, ctx);
		mt_bpf_log_release(ret == 0);
		if (ret) {
			memleak_bpf__destroy(*skel);
			*skel = NULL;
		}
	}
	*attach_err = ret;
	if (ret == -EPERM || ret == -EACCES)
		return mt_fail("not allowed to attach uprobes: need %s",
			       MT_CAPS_NEEDED);
	return 0;
}
