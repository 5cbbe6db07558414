// SPDX-License-Identifier: MIT
/* follow.c: following processes through exec (see follow.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "follow.h"
#include "memleak.h"
#include "memleak.skel.h"

int mt_follow_attach(struct memleak_bpf *skel)
{
	struct bpf_link *link = bpf_program__attach(skel->progs.follow_exec);

	if (!link)
		return -errno;
	skel->links.follow_exec = link; /* destroyed with the skeleton */
	return 0;
}

bool mt_follow_comm(struct memleak_bpf *skel, uint32_t pid, char *buf,
		    size_t len)
{
	struct mt_comm c;
	struct mt_exec e;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.comms), &pid, &c) == 0)
		snprintf(buf, len, "%.*s", (int)sizeof(c.comm), c.comm);
	else if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.execs), &pid, &e) == 0)
		snprintf(buf, len, "%.*s", (int)sizeof(e.comm), e.comm);
	else
		return false;
	return true;
}
