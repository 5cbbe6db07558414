/* SPDX-License-Identifier: MIT */
/*
 * images.h: the registry of process images and the files they map.
 *
 * A file has one identity, the kernel's: the device and inode of the
 * mapping's inode (what the BPF stack walk finds in a mapping; on
 * overlayfs not what stat() names), and one descriptor, opened through
 * /proc/PID/map_files, so a deleted file, a chroot's, a container's or an
 * overlay's is the file the process really mapped.  A process image is
 * the sorted list of a process's executable files' mappings, each
 * pointing at its file.  Images are reference counted by the processes
 * running them (a fork shares its parent's until it is read again), files
 * by the images mapping them: a file goes (and ON_FILE_GONE is told, for
 * what hangs off it) when the last image mapping it goes.
 *
 * An exec, a dlopen and a dlclose are one operation, mt_images_read(): the
 * process's image is read again and replaces the one it had.
 */
#ifndef MEMTRACE_IMAGES_H
#define MEMTRACE_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memleak.h"
#include "profile.h"

struct mt_image_file {
	struct mt_file_key key;   /* the kernel's identity */
	dev_t st_dev;             /* stat()'s of the descriptor (the overlay's */
	ino_t st_ino;             /* file on overlayfs), as mt_object has it */
	int fd;                   /* open on the mapped file itself */
	char *path;               /* as the process mapped it */
	bool deleted;             /* unlinked since */
	char build_id[MT_BUILD_ID_HEX]; /* hex, or "" */
	unsigned refs;            /* images that map it */
	uint64_t mark;            /* the read that last counted it */
};

/* A file mapping of a file mapped executable somewhere. */
struct mt_image_map {
	uint64_t start, end, offset;
	bool exec;
	struct mt_image_file *file;
};

struct mt_image {
	unsigned refs;            /* processes running it */
	struct mt_image_map *v;   /* by start */
	size_t n;
};

#define MT_IMAGES_GREW_MAX 8

struct mt_images {
	struct mt_image_file **files;  /* by key */
	size_t nfiles;
	struct mt_image_proc {
		uint32_t pid;
		struct mt_image *img;
	} *procs;                 /* by pid */
	size_t nprocs;
	/* Told of each file as it goes, before its descriptor is closed. */
	void (*on_file_gone)(void *ctx, const struct mt_image_file *f);
	void *ctx;
	uint64_t reads;           /* mt_images_read() calls */
	uint64_t gen;             /* marks files counted once per image */
	uint64_t opened;          /* files opened (each once) */
	uint64_t dropped;         /* images dropped as their last process exited */
	uint64_t closed;          /* files gone with their last image */
	/* Mappings left out of images for want of a descriptor (EMFILE,
	 * ENFILE): said once on stderr, counted here. */
	uint64_t no_fd;
	/* The last mt_images_read(): how many files its image maps that the
	 * image it replaced did not (0 when it replaced none), and the
	 * first MT_IMAGES_GREW_MAX of them. */
	size_t grew;
	const struct mt_image_file *grew_files[MT_IMAGES_GREW_MAX];
};

/*
 * Read process PID's image now (after its exec, a dlopen, a dlclose): its
 * file mappings from /proc/PID/maps, each file's identity from KERN (the
 * vma_files iterator's records, NKERN of them; NULL: from the mapped
 * file's fstat(), right but on overlayfs).  It replaces the image PID had.
 * Returns the image (the registry's), or NULL with errno (ESRCH: gone).
 */
const struct mt_image *mt_images_read(struct mt_images *r, pid_t pid,
				      const struct mt_vma_file *kern,
				      size_t nkern);

/* PID's image, or NULL when it has none. */
const struct mt_image *mt_images_of(const struct mt_images *r, pid_t pid);

/* CHILD, forked by PARENT, runs PARENT's image (shared until CHILD's is
 * read).  Returns 0, -ESRCH when PARENT has none, or -ENOMEM. */
int mt_images_fork(struct mt_images *r, pid_t parent, pid_t child);

/* PID has exited: its image is dropped, and the files only it mapped. */
void mt_images_exit(struct mt_images *r, pid_t pid);

/* Drop the images of every process but those of the NLIVE pids in LIVE
 * (sorted): they have exited (a scan of /proc did not find them). */
void mt_images_keep_only(struct mt_images *r, const uint32_t *live,
			 size_t nlive);

/* The file of identity KEY, or NULL. */
const struct mt_image_file *mt_images_file(const struct mt_images *r,
					   const struct mt_file_key *key);

/* A descriptor of F of its own (its own file offset: F's may be read on
 * another thread), or -errno. */
int mt_image_file_open(const struct mt_image_file *f);

/* F's path as /proc/PID/maps shows it (" (deleted)" after it, if so). */
void mt_image_file_shown(const struct mt_image_file *f, char *buf,
			 size_t len);

void mt_images_free(struct mt_images *r);

#endif
