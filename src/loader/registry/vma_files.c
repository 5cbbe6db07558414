// SPDX-License-Identifier: MIT
/* vma_files.c: a process's executable mappings as the kernel maps them. */
#include "vma_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "images.h"
#include "mapping_capture.h"
#include "memleak.skel.h"

int mt_vma_files(const struct memleak_bpf *skel, pid_t pid,
		 struct mt_vma_file **out, size_t *n)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	struct mt_vma_file *v = NULL;
	size_t cap = 0, have = 0;
	struct bpf_link *link;
	int fd, ret = 0;

	*out = NULL;
	*n = 0;
	if (!skel->progs.vma_files || bpf_program__fd(skel->progs.vma_files) < 0)
		return -EOPNOTSUPP;
	memset(&linfo, 0, sizeof(linfo));
	linfo.task.pid = (__u32)pid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.vma_files, &opts);
	if (!link)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		ret = -errno;
	/* Records, whole or cut at any byte by read(): gathered, then cut. */
	while (ret == 0) {
		ssize_t r;

		if (cap - have < sizeof(*v)) {
			size_t ncap = cap ? cap * 2 : 64 * sizeof(*v);
			struct mt_vma_file *nv = realloc(v, ncap);

			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		r = read(fd, (char *)v + have, cap - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = -errno;
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = have / sizeof(*v);
	return 0;
}

const struct mt_image *mt_images_read_task(struct mt_images *r,
					   const struct memleak_bpf *skel,
					   pid_t pid)
{
	struct mt_vma_file *v = NULL;
	const struct mt_image *img;
	size_t n = 0;

	if (!skel || mt_vma_files(skel, pid, &v, &n)) {
		v = NULL; /* no iterator: each file's own identity */
		n = 0;
	}
	img = mt_images_read(r, pid, v, n);
	free(v);
	return img;
}

int mt_images_refresh_modules(struct mt_images *r,
			      const struct memleak_bpf *skel,
			      struct mt_process *proc, bool keep_fds)
{
	const struct mt_image *img;

	if (!r)
		return mt_modules_refresh(proc, keep_fds);
	img = mt_images_read_task(r, skel, (pid_t)proc->pid);
	if (!img)
		return errno == ENOENT ? -ESRCH : -errno;
	return mt_modules_from_image(proc, img, keep_fds);
}
