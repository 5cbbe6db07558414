// SPDX-License-Identifier: MIT
/* outfile.c: report files written through a temporary file and rename(). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

#define MAX_LINKS 40

/* The user memtrace writes for (mt_outfile_owner), and root's groups. */
static struct {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
	gid_t *own_groups;
	int own_ngroups;
} user = { (uid_t)-1, (gid_t)-1, NULL, 0, NULL, 0 };

void mt_outfile_owner(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	int n;

	free(user.groups);
	free(user.own_groups);
	user.groups = user.own_groups = NULL;
	user.ngroups = user.own_ngroups = 0;
	user.uid = uid;
	user.gid = gid;
	if (groups && ngroups > 0) {
		user.groups = malloc((size_t)ngroups * sizeof(*groups));
		if (user.groups) {
			memcpy(user.groups, groups, (size_t)ngroups * sizeof(*groups));
			user.ngroups = ngroups;
		}
	}
	n = getgroups(0, NULL);
	if (n > 0 && (user.own_groups = malloc((size_t)n * sizeof(gid_t))))
		user.own_ngroups = getgroups(n, user.own_groups);
	if (user.own_ngroups < 0)
		user.own_ngroups = 0;
}

static uid_t owner(void)
{
	return user.uid == (uid_t)-1 ? geteuid() : user.uid;
}

/* Root writing for another user: the files are opened with that user's rights. */
static bool switching(void)
{
	return user.uid != (uid_t)-1 && user.uid != 0 && geteuid() == 0;
}

int mt_outfile_user_enter(void)
{
	if (!switching())
		return 0;
	/*
	 * This thread's credentials alone (the raw system calls: glibc's
	 * setgroups would change every thread's): the user's groups, then
	 * the filesystem gid and uid.  A filesystem uid other than 0 drops
	 * the capabilities that bypass file permissions, so the kernel
	 * checks every path, open, rename and unlink as the user's.
	 */
	if (syscall(SYS_setgroups, (size_t)user.ngroups, user.groups))
		return -errno;
	setfsgid(user.gid);
	setfsuid(user.uid);
	if ((uid_t)setfsuid((uid_t)-1) != user.uid ||
	    (gid_t)setfsgid((gid_t)-1) != user.gid) {
		mt_outfile_user_leave(1);
		return -EPERM;
	}
	return 1;
}

void mt_outfile_user_leave(int entered)
{
	if (entered <= 0)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	if (syscall(SYS_setgroups, (size_t)user.own_ngroups, user.own_groups))
		abort(); /* root keeping another user's groups: never go on */
}

const char *mt_outfile_strerror(int err)
{
	err = err < 0 ? -err : err;
	if (err == MT_OUTFILE_EFOREIGN_LINK)
		return "it is a symbolic link owned by another user (remove it or choose another name)";
	if (err == MT_OUTFILE_EFOREIGN_FILE)
		return "it is another user's file (remove it or choose another name)";
	if (err == MT_OUTFILE_ENOREADER)
		return "it is a FIFO with no reader";
	if (err == MT_OUTFILE_ECHANGED)
		return "it changed while it was opened";
	return strerror(err);
}

enum dest_kind {
	DEST_NEW,      /* nothing there: create it */
	DEST_FILE,     /* a regular file: replace it */
	DEST_IN_PLACE, /* a device, FIFO or socket: open it */
	DEST_DIR,      /* a directory (mt_outfile_mkdir only) */
};

/* Where a path leads: a name in a directory opened on the way. */
struct dest {
	enum dest_kind kind;
	int dirfd;             /* the directory holding NAME (O_PATH) */
	char name[NAME_MAX + 1];
	bool magic;            /* NAME is a procfs link (/proc/self/fd/1) */
	struct stat st;        /* what NAME is, unless DEST_NEW */
	struct stat dir_st;    /* the directory */
};

static bool ours(uid_t uid)
{
	return uid == 0 || uid == owner();
}

static bool on_procfs(int dirfd)
{
	struct statfs sf;

	return fstatfs(dirfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

static int open_dir(int at, const char *name)
{
	int fd = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Walk PATH a component at a time, each directory opened (O_PATH) below
 * the previous one: a symbolic link anywhere on the way is followed only
 * when root or the owner made it, never another user's; one on procfs at
 * the end (/dev/stdout -> /proc/self/fd/1) is a descriptor's, opened in
 * place.  On success D->dirfd is open (close it) and D says what NAME is.
 */
static int walk(const char *path, struct dest *d, bool want_dir)
{
	char rest[PATH_MAX * 2], target[PATH_MAX];
	int hops = 0, ret;

	memset(d, 0, sizeof(*d));
	d->dirfd = -1;
	if (!*path)
		return -ENOENT;
	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= PATH_MAX)
		return -ENAMETOOLONG;
	d->dirfd = open_dir(AT_FDCWD, rest[0] == '/' ? "/" : ".");
	if (d->dirfd < 0)
		return d->dirfd;
	for (char *p = rest;;) {
		char *comp, *slash;
		bool last;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p) { /* "dir/" or "/": the path names a directory */
			if (!want_dir) {
				ret = -EISDIR;
				goto fail;
			}
			/* D->dirfd is the directory itself: its name is "." */
			snprintf(d->name, sizeof(d->name), ".");
			d->kind = DEST_DIR;
			if (fstat(d->dirfd, &d->st) || fstat(d->dirfd, &d->dir_st)) {
				ret = -errno;
				goto fail;
			}
			return 0;
		}
		comp = p;
		slash = strchr(p, '/');
		len = slash ? (size_t)(slash - p) : strlen(p);
		if (len > NAME_MAX) {
			ret = -ENAMETOOLONG;
			goto fail;
		}
		p = slash ? slash + 1 : p + len;
		while (*p == '/')
			p++;
		last = !*p;
		memcpy(d->name, comp, len);
		d->name[len] = '\0';
		if (fstatat(d->dirfd, d->name, &d->st, AT_SYMLINK_NOFOLLOW)) {
			ret = -errno;
			if (ret != -ENOENT || !last || !strcmp(d->name, ".."))
				goto fail;
			d->kind = DEST_NEW;
			break;
		}
		if (S_ISLNK(d->st.st_mode)) {
			ssize_t n;

			if (++hops > MAX_LINKS) {
				ret = -ELOOP;
				goto fail;
			}
			if (!ours(d->st.st_uid)) {
				ret = -MT_OUTFILE_EFOREIGN_LINK;
				goto fail;
			}
			if (last && on_procfs(d->dirfd)) {
				/* A descriptor's: never replaced, opened through it. */
				if (fstatat(d->dirfd, d->name, &d->st, 0)) {
					ret = -errno;
					goto fail;
				}
				if (S_ISDIR(d->st.st_mode)) {
					ret = -EISDIR;
					goto fail;
				}
				d->kind = DEST_IN_PLACE;
				d->magic = true;
				break;
			}
			n = readlinkat(d->dirfd, d->name, target, sizeof(target) - 1);
			if (n < 0) {
				ret = -errno;
				goto fail;
			}
			target[n] = '\0';
			/* The link's target, then what came after the link. */
			if ((size_t)snprintf(rest, sizeof(rest), "%s%s%s", target,
					     last ? "" : "/", last ? "" : p) >=
			    sizeof(rest)) {
				ret = -ENAMETOOLONG;
				goto fail;
			}
			if (target[0] == '/') {
				close(d->dirfd);
				d->dirfd = open_dir(AT_FDCWD, "/");
				if (d->dirfd < 0)
					return d->dirfd;
			}
			p = rest;
			continue;
		}
		if (S_ISDIR(d->st.st_mode)) {
			int fd;

			if (last && want_dir) {
				d->kind = DEST_DIR;
				break;
			}
			if (last) {
				ret = -EISDIR;
				goto fail;
			}
			fd = open_dir(d->dirfd, d->name);
			if (fd < 0) {
				ret = fd;
				goto fail;
			}
			close(d->dirfd);
			d->dirfd = fd;
			continue;
		}
		if (!last) {
			ret = -ENOTDIR;
			goto fail;
		}
		d->kind = S_ISREG(d->st.st_mode) ? DEST_FILE : DEST_IN_PLACE;
		break;
	}
	if (fstat(d->dirfd, &d->dir_st)) {
		ret = -errno;
		goto fail;
	}
	if (want_dir && d->kind != DEST_DIR && d->kind != DEST_NEW) {
		ret = -ENOTDIR;
		goto fail;
	}
	if (!want_dir && d->kind == DEST_DIR) {
		ret = -EISDIR;
		goto fail;
	}
	/* Another user's FIFO, socket or device is not written into. */
	if (d->kind == DEST_IN_PLACE && !d->magic && !ours(d->st.st_uid)) {
		ret = -MT_OUTFILE_EFOREIGN_FILE;
		goto fail;
	}
	/* Nor another user's file in a sticky directory (/tmp). */
	if (d->kind == DEST_FILE && (d->dir_st.st_mode & S_ISVTX) &&
	    !ours(d->st.st_uid) && d->st.st_uid != d->dir_st.st_uid) {
		ret = -MT_OUTFILE_EFOREIGN_FILE;
		goto fail;
	}
	return 0;
fail:
	if (d->dirfd >= 0)
		close(d->dirfd);
	d->dirfd = -1;
	return ret;
}

/* WALK under the user's rights. */
static int walk_as_user(const char *path, struct dest *d, bool want_dir, int *entered)
{
	int ret;

	*entered = mt_outfile_user_enter();
	if (*entered < 0)
		return *entered;
	ret = walk(path, d, want_dir);
	if (ret) {
		mt_outfile_user_leave(*entered);
		*entered = 0;
	}
	return ret;
}

static int done(struct dest *d, int entered, int ret)
{
	if (d->dirfd >= 0)
		close(d->dirfd);
	d->dirfd = -1;
	mt_outfile_user_leave(entered);
	return ret;
}

int mt_outfile_check(const char *path)
{
	struct dest d;
	int entered, ret = walk_as_user(path, &d, false, &entered);

	if (ret)
		return ret;
	if (d.kind == DEST_IN_PLACE)
		ret = faccessat(d.dirfd, d.name, W_OK, AT_EACCESS) ? -errno : 0;
	else
		ret = faccessat(d.dirfd, ".", W_OK | X_OK, AT_EACCESS) ? -errno : 0;
	return done(&d, entered, ret);
}

/*
 * Open a device, FIFO or socket in place: without blocking (a FIFO with no
 * reader is an error, not a hang), and only what was looked at.
 */
static int open_in_place(const struct dest *d)
{
	struct stat st;
	int fd, flags;

	fd = openat(d->dirfd, d->name,
		    O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC | O_NONBLOCK |
			    (d->magic ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return errno == ENXIO && S_ISFIFO(d->st.st_mode)
			       ? -MT_OUTFILE_ENOREADER : -errno;
	if (fstat(fd, &st) || (!d->magic && (st.st_dev != d->st.st_dev ||
					      st.st_ino != d->st.st_ino))) {
		close(fd);
		return -MT_OUTFILE_ECHANGED;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* A new file next to D's name, readable as D will be; its name in *TMP. */
static int create_tmp(const struct dest *d, char **tmp)
{
	mode_t mask = umask(0);
	int fd = -1, ret = 0;

	umask(mask);
	*tmp = NULL;
	for (int tries = 0; tries < 100; tries++) {
		unsigned long long r = 0;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r ^= (unsigned long long)random() << 20 ^ (unsigned long long)getpid();
		free(*tmp);
		if (asprintf(tmp, ".%.200s.%012llx", d->name, r & 0xffffffffffffULL) < 0) {
			*tmp = NULL;
			return -ENOMEM;
		}
		fd = openat(d->dirfd, *tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		ret = -errno;
	if (!ret && d->kind == DEST_FILE)
		ret = fchmod(fd, d->st.st_mode & 07777) ? -errno : 0;
	else if (!ret)
		ret = fchmod(fd, 0666 & ~mask) ? -errno : 0;
	/* Root writing for itself: the replaced file keeps its owner. */
	if (!ret && d->kind == DEST_FILE && geteuid() == 0 && !switching() &&
	    fchown(fd, d->st.st_uid, d->st.st_gid))
		ret = -errno;
	if (ret && fd >= 0) {
		close(fd);
		unlinkat(d->dirfd, *tmp, 0);
	}
	if (ret) {
		free(*tmp);
		*tmp = NULL;
		return ret;
	}
	return fd;
}

int mt_outfile_open(struct mt_outfile *f, const char *path)
{
	struct dest d;
	int entered, ret;

	f->fd = f->dirfd = -1;
	f->dest = f->tmp = f->name = NULL;
	ret = walk_as_user(path, &d, false, &entered);
	if (ret)
		return ret;
	f->dest = strdup(path);
	f->name = strdup(d.name);
	if (!f->dest || !f->name)
		ret = -ENOMEM;
	else if (d.kind == DEST_IN_PLACE)
		ret = open_in_place(&d);
	else
		ret = create_tmp(&d, &f->tmp);
	if (ret < 0) {
		free(f->dest);
		free(f->name);
		f->dest = f->name = NULL;
		return done(&d, entered, ret);
	}
	f->fd = ret;
	if (f->tmp) { /* the directory, to rename in */
		f->dirfd = d.dirfd;
		d.dirfd = -1;
	}
	return done(&d, entered, 0);
}

/* F's temporary file over its destination, with the user's rights. */
static int put_in_place(struct mt_outfile *f)
{
	int entered = mt_outfile_user_enter(), ret;

	if (entered < 0)
		return entered;
	ret = renameat(f->dirfd, f->tmp, f->dirfd, f->name) ? -errno : 0;
	mt_outfile_user_leave(entered);
	return ret;
}

int mt_outfile_open_now(struct mt_outfile *f, const char *path)
{
	int ret = mt_outfile_open(f, path);

	if (ret || !f->tmp)
		return ret;
	ret = put_in_place(f);
	if (ret) {
		mt_outfile_abort(f);
		return ret;
	}
	free(f->tmp);
	f->tmp = NULL;
	return 0;
}

static void release(struct mt_outfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->dest);
	free(f->tmp);
	free(f->name);
	f->fd = f->dirfd = -1;
	f->dest = f->tmp = f->name = NULL;
}

int mt_outfile_write(struct mt_outfile *f, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(f->fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int mt_outfile_commit(struct mt_outfile *f)
{
	int ret = 0;

	if (f->fd >= 0 && close(f->fd))
		ret = -errno;
	f->fd = -1;
	if (!ret && f->tmp)
		ret = put_in_place(f);
	if (ret) {
		mt_outfile_abort(f);
		return ret;
	}
	release(f);
	return 0;
}

void mt_outfile_abort(struct mt_outfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp && f->dirfd >= 0) {
		int entered = mt_outfile_user_enter();

		if (entered >= 0) {
			unlinkat(f->dirfd, f->tmp, 0);
			mt_outfile_user_leave(entered);
		}
	}
	release(f);
}

int mt_outfile_mkdir(const char *path, mode_t mode)
{
	struct dest d;
	int entered, ret = walk_as_user(path, &d, true, &entered);

	if (ret)
		return ret;
	if (d.kind == DEST_NEW)
		ret = mkdirat(d.dirfd, d.name, mode) ? -errno : 0;
	else if (!ours(d.st.st_uid))
		ret = -MT_OUTFILE_EFOREIGN_FILE;
	return done(&d, entered, ret);
}

int mt_outfile_append(const char *path, mode_t mode)
{
	struct dest d;
	int entered, ret = walk_as_user(path, &d, false, &entered);

	if (ret)
		return ret;
	if (d.kind == DEST_IN_PLACE)
		ret = open_in_place(&d);
	else {
		ret = openat(d.dirfd, d.name,
			     O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
		if (ret < 0)
			ret = -errno;
	}
	return done(&d, entered, ret);
}

int mt_outfile_unlink(const char *path)
{
	struct dest d;
	int entered, ret = walk_as_user(path, &d, false, &entered);

	if (ret)
		return ret;
	ret = d.kind == DEST_NEW ? -ENOENT
	      : unlinkat(d.dirfd, d.name, 0) ? -errno : 0;
	return done(&d, entered, ret);
}

int mt_outfile_rename(const char *from, const char *to)
{
	struct dest a, b;
	int entered, ret = walk_as_user(from, &a, false, &entered);

	if (ret)
		return ret;
	if (a.kind == DEST_NEW)
		return done(&a, entered, -ENOENT);
	ret = walk(to, &b, false);
	if (!ret) {
		ret = renameat(a.dirfd, a.name, b.dirfd, b.name) ? -errno : 0;
		close(b.dirfd);
	}
	return done(&a, entered, ret);
}
