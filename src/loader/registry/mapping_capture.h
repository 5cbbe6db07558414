/* SPDX-License-Identifier: MIT */
/*
 * mapping_capture.h: capturing the executable files a process maps, while it runs,
 * so that its stacks can be symbolised after it has exited.
 */
#ifndef MEMTRACE_MAPPING_CAPTURE_H
#define MEMTRACE_MAPPING_CAPTURE_H

#include "profile.h"

/*
 * Add to PROC (whose pid is set) every executable file mapping not yet
 * captured, with its load bias and, with KEEP_FDS, a descriptor open on it
 * (so that it can be read after the process and the file are gone; without,
 * the file is read again by its path when the report is made).
 * Returns how many were added, -ESRCH when the process is gone, or -errno.
 */
int mt_modules_refresh(struct mt_process *proc, bool keep_fds);

/* The same, from PROC's image IMG just read (images.h): its maps are not
 * read again, nor its files opened or their build ids read. */
struct mt_image;
int mt_modules_from_image(struct mt_process *proc, const struct mt_image *img,
			  bool keep_fds);

#endif
