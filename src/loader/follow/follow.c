// SPDX-License-Identifier: MIT
/* follow.c: following processes through exec and fork (see follow.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "follow.h"
#include "memleak.h"
#include "memleak.skel.h"

int mt_follow_attach(struct memleak_bpf *skel, bool children)
{
	struct bpf_link *link = bpf_program__attach(skel->progs.follow_exec);

	if (!link)
		return -errno;
	skel->links.follow_exec = link; /* destroyed with the skeleton */
	/* Exiting threads give back their slot of per-thread state. */
	link = bpf_program__attach(skel->progs.thread_exit);
	if (!link)
		return -errno;
	skel->links.thread_exit = link;
	if (!children)
		return 0;
	link = bpf_program__attach(skel->progs.follow_fork);
	if (!link)
		return -errno;
	skel->links.follow_fork = link;
	return 0;
}

int mt_follow_add(struct memleak_bpf *skel, uint32_t pid)
{
	struct mt_follow root = { 0, 0 };

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.followed), &pid, &root,
				BPF_ANY))
		return -errno;
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

int mt_follow_hold(struct memleak_bpf *skel, uint32_t pid, uint8_t stops)
{
	int fd = bpf_map__fd(skel->maps.dl_hold);

	if (stops ? bpf_map_update_elem(fd, &pid, &stops, BPF_ANY)
		  : bpf_map_delete_elem(fd, &pid) && errno != ENOENT)
		return -errno;
	return 0;
}

uint8_t mt_follow_held(struct memleak_bpf *skel, uint32_t pid)
{
	uint8_t v;

	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.dl_hold), &pid, &v) ? 0 : v;
}

bool mt_follow_hold_taken(struct memleak_bpf *skel, uint32_t tid)
{
	return bpf_map_delete_elem(bpf_map__fd(skel->maps.hold_sent), &tid) == 0;
}

bool mt_follow_parent(struct memleak_bpf *skel, uint32_t pid, uint32_t *parent)
{
	struct mt_follow f;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.followed), &pid, &f) ||
	    !f.parent)
		return false;
	*parent = f.parent;
	return true;
}
