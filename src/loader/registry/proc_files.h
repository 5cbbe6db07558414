/* SPDX-License-Identifier: MIT */
/*
 * proc_files.h: the ELF files (executable and shared libraries) a target uses,
 * where its allocator and its C++ operator new/delete are to be found.
 */
#ifndef MEMTRACE_PROC_FILES_H
#define MEMTRACE_PROC_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mt_object {
	char *path;   /* as memtrace opens it (/proc/PID/root/... for -p) */
	char *shown;  /* as the target knows it */
	dev_t dev;    /* identity: one file can have several names */
	ino_t ino;
};

/* The executable first (when has_exe), then the libraries. */
struct mt_objects {
	struct mt_object *v;
	size_t n;
	bool has_exe;
};

/* A running process: its executable and every file it maps executable. */
int mt_objects_of_pid(pid_t pid, struct mt_objects *objs);

/* The same, from process PID's image IMG just read (images.h): its maps
 * are not read again. */
struct mt_image;
int mt_objects_of_image(pid_t pid, const struct mt_image *img,
			struct mt_objects *objs);

/*
 * Whether process PID, whose files are OBJS, is still being loaded: a
 * dynamic executable with nothing mapped but itself and its interpreter
 * (ld.so maps the libraries, in user space, just after the exec).
 */
bool mt_objects_loading(pid_t pid, const struct mt_objects *objs);

/*
 * An executable about to be started: itself and the libraries its dynamic
 * loader would load (as `ld.so --list` prints them, LD_PRELOAD included).
 * A script gets the libraries of memtrace's own libc.
 */
int mt_objects_of_exe(const char *exe, struct mt_objects *objs);

void mt_objects_free(struct mt_objects *objs);

/* True when OBJS holds the same file as O. */
bool mt_objects_has(const struct mt_objects *objs, const struct mt_object *o);

/* Append a copy of O.  Returns 0 or -ENOMEM. */
int mt_objects_add(struct mt_objects *objs, const struct mt_object *o);

/* Basename of an object's shown path. */
const char *mt_object_name(const struct mt_object *o);

#endif
