/* SPDX-License-Identifier: MIT */
/*
 * outfile.h: writing a report file without following another user's
 * symbolic link, and without touching the destination until the report is
 * complete.
 *
 * A symbolic link on the way to the destination (the final component and
 * the links it leads to) is followed only when it belongs to root or to
 * the owner set with mt_outfile_owner() (the user memtrace writes for):
 * one another user planted in /tmp is refused, whatever
 * fs.protected_symlinks says.  An existing regular file of another user in
 * a sticky directory (such as /tmp) is refused too (fs.protected_regular).
 *
 * A regular file is written to a new temporary file, created with O_EXCL
 * in the destination's directory, and renamed over the destination when
 * complete: a failed run leaves the destination as it was, and the rename
 * replaces whatever name is there (even a link planted meanwhile) without
 * following it.  The new file gets the replaced file's owner and mode, or,
 * when there was none, the owner set with mt_outfile_owner() and mode
 * 0666 & ~umask.  A device, FIFO or socket (/dev/null, /dev/stdout) is
 * opened and written in place.
 */
#ifndef MEMTRACE_OUTFILE_H
#define MEMTRACE_OUTFILE_H

#include <sys/types.h>

/* Errors of our own, beyond errno's range (see mt_outfile_strerror). */
#define MT_OUTFILE_EFOREIGN_LINK 4096 /* a symlink owned by another user */
#define MT_OUTFILE_EFOREIGN_FILE 4097 /* another user's file, sticky dir */

struct mt_outfile {
	int fd;      /* write here; the caller may hand it to stdio or zlib and
		      * set it to -1 once that has closed it */
	char *dest;  /* the file the report replaces or creates */
	char *tmp;   /* the temporary file renamed over DEST; NULL: in place */
};

/*
 * Files created are owned by UID:GID (default: the effective ids), and
 * links owned by UID (or root) are followed.  Call once, before any other.
 */
void mt_outfile_owner(uid_t uid, gid_t gid);

/* The message for a negative ERR from the functions below. */
const char *mt_outfile_strerror(int err);

/*
 * Would PATH be written?  Checks links, the directory's existence and
 * write permission, without creating anything.  0 or a negative error.
 */
int mt_outfile_check(const char *path);

/* Open F to write PATH.  0, or a negative error with nothing created. */
int mt_outfile_open(struct mt_outfile *f, const char *path);

/*
 * Open F to write PATH as it grows (a file a user may `tail -f`): the same
 * checks and the same new temporary file (O_EXCL, in PATH's directory) as
 * mt_outfile_open, renamed over PATH at once, before anything is written.
 * F's descriptor is then the file at F->dest, to append to; the rename
 * replaces whatever name is at PATH (a link planted there meanwhile is
 * replaced, never followed).  A device or FIFO is opened in place.  0 or
 * a negative error; close F with mt_outfile_commit.
 */
int mt_outfile_open_now(struct mt_outfile *f, const char *path);

/* Write N bytes at P to F's descriptor, all of them (an interrupted write
 * goes on).  0, or a negative error (-EIO for a write of nothing). */
int mt_outfile_write(struct mt_outfile *f, const void *p, size_t n);

/*
 * Close F's descriptor (unless already -1) and put the file in place.
 * 0 or a negative error; F is released either way (on error, as by abort).
 */
int mt_outfile_commit(struct mt_outfile *f);

/* Close F and remove its temporary file: the destination is untouched. */
void mt_outfile_abort(struct mt_outfile *f);

#endif
