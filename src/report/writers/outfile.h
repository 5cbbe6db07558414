/* SPDX-License-Identifier: MIT */
/*
 * outfile.h: writing a report file without following another user's
 * symbolic link, without writing where the user memtrace works for could
 * not, and without touching the destination until the report is complete.
 *
 * Started through sudo (mt_outfile_owner with the invoking user), every
 * file operation here (the path walked, the file created, renamed,
 * removed) runs with that user's filesystem uid, gid and groups, in the
 * calling thread alone: the kernel allows exactly what the user could do,
 * and root's rights to bypass file permissions do not apply.
 *
 * The path is walked a component at a time: a symbolic link anywhere on
 * it (a directory's or the final name's) is followed only when it belongs
 * to root or to that user, never another user's.  An existing regular
 * file of another user in a sticky directory (such as /tmp) is refused,
 * and so is another user's FIFO, socket or device.
 *
 * A regular file is written to a new temporary file, created with O_EXCL
 * in the destination's directory, and renamed over the destination when
 * complete: a failed run leaves the destination as it was, and the rename
 * replaces whatever name is there (even a link planted meanwhile) without
 * following it.  The new file gets the replaced file's mode (and, root
 * writing for itself, its owner), or mode 0666 & ~umask.  A device, FIFO
 * or socket (/dev/null, /dev/stdout) is opened and written in place,
 * without blocking in open(): a FIFO with no reader is an error.
 */
#ifndef MEMTRACE_OUTFILE_H
#define MEMTRACE_OUTFILE_H

#include <sys/types.h>

/* Errors of our own, beyond errno's range (see mt_outfile_strerror). */
#define MT_OUTFILE_EFOREIGN_LINK 4096 /* a symlink owned by another user */
#define MT_OUTFILE_EFOREIGN_FILE 4097 /* another user's file, sticky dir,
					* or another user's FIFO/device */
#define MT_OUTFILE_ENOREADER 4098     /* a FIFO nobody reads */
#define MT_OUTFILE_ECHANGED 4099      /* replaced between look and open */

struct mt_outfile {
	int fd;      /* write here; the caller may hand it to stdio or zlib and
		      * set it to -1 once that has closed it */
	char *dest;  /* the file the report replaces or creates */
	char *tmp;   /* the temporary file renamed over DEST; NULL: in place */
	char *name;  /* DEST's last name, in DIRFD */
	int dirfd;   /* the directory TMP is renamed in (-1: in place) */
};

/*
 * Write for the user UID:GID with supplementary GROUPS (NGROUPS of them):
 * root started through sudo opens files with that user's rights (above);
 * links owned by UID (or root) are followed.  (uid_t)-1: the effective
 * user, no switch.  Call once, before any other.
 */
void mt_outfile_owner(uid_t uid, gid_t gid, const gid_t *groups, int ngroups);

/*
 * Take the user's filesystem rights in this thread, for a file operation
 * of the caller's own (a socket bound, a file read back): 1 taken, 0
 * nothing to take (not root writing for another user), or a negative
 * error.  Hand the result to mt_outfile_user_leave.
 */
int mt_outfile_user_enter(void);
void mt_outfile_user_leave(int entered);

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

/* mkdir PATH with MODE as the user (an existing directory of root's or
 * the user's is fine).  0 or a negative error. */
int mt_outfile_mkdir(const char *path, mode_t mode);

/* A descriptor appending to PATH, created with MODE if new, as the user:
 * the same walk and refusals as mt_outfile_open.  fd or a negative error. */
int mt_outfile_append(const char *path, mode_t mode);

/* Remove PATH / rename FROM to TO, as the user, through the same walk.
 * 0 or a negative error (-ENOENT: nothing there). */
int mt_outfile_unlink(const char *path);
int mt_outfile_rename(const char *from, const char *to);

#endif
