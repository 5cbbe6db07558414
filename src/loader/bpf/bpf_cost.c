// SPDX-License-Identifier: MIT
/* bpf_cost.c: the BPF programs' own run time, for -v (bpf_cost.h). */
#include "bpf_cost.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memleak.skel.h"

int mt_bpf_cost_begin(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

void mt_bpf_cost_say(const struct memleak_bpf *skel, FILE *out)
{
	struct bpf_program *prog;

	if (!skel)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int pfd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &info, &len) ||
		    !info.run_cnt)
			continue;
		fprintf(out, "memtrace: BPF %s: %llu runs, %.1f ns each, %.1f ms in all\n",
			bpf_program__name(prog), (unsigned long long)info.run_cnt,
			(double)info.run_time_ns / (double)info.run_cnt,
			(double)info.run_time_ns / 1e6);
	}
}

void mt_bpf_cost_end(int fd)
{
	if (fd >= 0)
		close(fd);
}
