// SPDX-License-Identifier: MIT
/* allocator.c: which file's malloc family to probe. */
#include "allocator.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf_syms.h"
#include "proc_maps.h"

static int use_static_exe(const char *path, const char *shown,
			  struct mt_allocator *a)
{
	uint64_t off;

	if (mt_elf_func_offset(path, "malloc", &off) != 0)
		return -ENOENT;
	snprintf(a->path, sizeof(a->path), "%s", path);
	snprintf(a->shown, sizeof(a->shown), "%s", shown);
	a->kind = "static executable";
	return 0;
}

int mt_allocator_for_pid(pid_t pid, struct mt_allocator *a)
{
	struct mt_maps maps;
	const struct mt_mapping *libc;
	char exe[64], shown[PATH_MAX];
	ssize_t n;
	int ret = mt_maps_read(pid, &maps);

	if (ret)
		return ret;
	libc = mt_maps_find_libc(&maps);
	if (libc) {
		snprintf(a->path, sizeof(a->path), "/proc/%d/root%s", (int)pid,
			 libc->path);
		snprintf(a->shown, sizeof(a->shown), "%s", libc->path);
		a->kind = "glibc";
		mt_maps_free(&maps);
		return 0;
	}
	mt_maps_free(&maps);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, shown, sizeof(shown) - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	shown[n] = '\0';
	return use_static_exe(exe, shown, a);
}

int mt_allocator_for_exe(const char *exe, struct mt_allocator *a)
{
	struct mt_maps self;
	const struct mt_mapping *libc;
	bool dynamic;
	int ret = mt_elf_is_dynamic(exe, &dynamic);

	/* Not ELF (a script): its interpreter is a dynamic executable. */
	if (ret == -ENOEXEC)
		dynamic = true;
	else if (ret)
		return ret;
	if (!dynamic)
		return use_static_exe(exe, exe, a);
	/* A dynamic executable loads the same libc as memtrace itself. */
	ret = mt_maps_read(getpid(), &self);
	if (ret)
		return ret;
	libc = mt_maps_find_libc(&self);
	if (libc) {
		snprintf(a->path, sizeof(a->path), "%s", libc->path);
		snprintf(a->shown, sizeof(a->shown), "%s", libc->path);
		a->kind = "glibc";
	}
	mt_maps_free(&self);
	return libc ? 0 : -ENOENT;
}
