/* SPDX-License-Identifier: MIT */
/*
 * vma_files.h: the files a process maps executable, identified as the
 * kernel maps them (device and inode of the mapping's inode, the key the
 * BPF stack walk looks tables up by), read with the BPF program's task_vma
 * iterator.  /proc/PID/maps and stat() can name another inode: on
 * overlayfs (containers) they show the overlay's file, the mapping holds
 * the layer's.
 */
#ifndef MEMTRACE_VMA_FILES_H
#define MEMTRACE_VMA_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memleak.h"

struct memleak_bpf;

/*
 * The executable file mappings of process PID into *OUT (*N of them,
 * malloc()ed; one per mapping).  Returns 0 or -errno (-ESRCH: gone;
 * -EOPNOTSUPP: the iterator is not loaded).
 */
int mt_vma_files(const struct memleak_bpf *skel, pid_t pid,
		 struct mt_vma_file **out, size_t *n);

/*
 * Process PID's image read into the registry R (images.h), each file
 * under the identity the iterator gives (stat()'s where it cannot say).
 * NULL with errno when PID is gone.
 */
struct mt_images;
struct mt_image;
const struct mt_image *mt_images_read_task(struct mt_images *r,
					   const struct memleak_bpf *skel,
					   pid_t pid);

/*
 * PROC's new modules (mapping_capture.h) from its image read now into R;
 * R NULL: from its maps alone (mt_modules_refresh).  Returns how many
 * were added, -ESRCH when it is gone, or -errno.
 */
struct mt_process;
int mt_images_refresh_modules(struct mt_images *r,
			      const struct memleak_bpf *skel,
			      struct mt_process *proc, bool keep_fds);

#endif
