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
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

#define MAX_LINKS 40

static uid_t owner_uid = (uid_t)-1;
static gid_t owner_gid = (gid_t)-1;

void mt_outfile_owner(uid_t uid, gid_t gid)
{
	owner_uid = uid;
	owner_gid = gid;
}

static uid_t owner(void)
{
	return owner_uid == (uid_t)-1 ? geteuid() : owner_uid;
}

const char *mt_outfile_strerror(int err)
{
	err = err < 0 ? -err : err;
	if (err == MT_OUTFILE_EFOREIGN_LINK)
		return "it is a symbolic link owned by another user (remove it or choose another name)";
	if (err == MT_OUTFILE_EFOREIGN_FILE)
		return "it is another user's file in a sticky directory (remove it or choose another name)";
	return strerror(err);
}

enum dest_kind {
	DEST_NEW,      /* nothing there: create PATH */
	DEST_FILE,     /* a regular file: replace PATH */
	DEST_IN_PLACE, /* a device, FIFO or socket: open PATH */
};

struct dest {
	enum dest_kind kind;
	char path[PATH_MAX];
	struct stat st;        /* DEST_FILE: the file replaced */
};

/* The directory part of PATH ("." for a bare name) into DIR. */
static int dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash)
		return (size_t)snprintf(dir, len, ".") >= len ? -ENAMETOOLONG : 0;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return 0;
}

static bool on_procfs(const char *path)
{
	char dir[PATH_MAX];
	struct statfs sf;

	return dir_of(path, dir, sizeof(dir)) == 0 && statfs(dir, &sf) == 0 &&
	       sf.f_type == PROC_SUPER_MAGIC;
}

/* CUR := the target of the link CUR, relative to CUR's directory. */
static int follow(char *cur, size_t len)
{
	char target[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink(cur, target, sizeof(target) - 1);
	int ret;

	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (target[0] == '/')
		return (size_t)snprintf(cur, len, "%s", target) >= len ? -ENAMETOOLONG : 0;
	ret = dir_of(cur, dir, sizeof(dir));
	if (!ret && (size_t)snprintf(cur, len, "%s/%s", dir, target) >= len)
		ret = -ENAMETOOLONG;
	return ret;
}

/* An existing file of another user in a sticky directory is not ours. */
static int check_sticky(const char *path, const struct stat *st)
{
	char dir[PATH_MAX];
	struct stat ds;
	int ret = dir_of(path, dir, sizeof(dir));

	if (ret)
		return ret;
	if (stat(dir, &ds))
		return -errno;
	if ((ds.st_mode & S_ISVTX) && st->st_uid != 0 &&
	    st->st_uid != owner() && st->st_uid != ds.st_uid)
		return -MT_OUTFILE_EFOREIGN_FILE;
	return 0;
}

/*
 * Where PATH leads: follow the links of the final component that root or
 * the owner made; refuse another user's.  A link on procfs (/dev/stdout
 * leads to /proc/self/fd/1) is a descriptor's: PATH is opened in place.
 */
static int resolve(const char *path, struct dest *d)
{
	int ret = 0;

	if ((size_t)snprintf(d->path, sizeof(d->path), "%s", path) >= sizeof(d->path))
		return -ENAMETOOLONG;
	for (int hops = 0; ; hops++) {
		if (lstat(d->path, &d->st)) {
			if (errno != ENOENT)
				return -errno;
			d->kind = DEST_NEW;
			return 0;
		}
		if (!S_ISLNK(d->st.st_mode))
			break;
		if (hops == MAX_LINKS)
			return -ELOOP;
		if (d->st.st_uid != 0 && d->st.st_uid != owner())
			return -MT_OUTFILE_EFOREIGN_LINK;
		if (on_procfs(d->path)) { /* a descriptor's: never replaced */
			snprintf(d->path, sizeof(d->path), "%s", path);
			if (stat(d->path, &d->st))
				return -errno;
			if (S_ISDIR(d->st.st_mode))
				return -EISDIR;
			d->kind = DEST_IN_PLACE;
			return 0;
		}
		ret = follow(d->path, sizeof(d->path));
		if (ret)
			return ret;
	}
	if (S_ISDIR(d->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(d->st.st_mode)) {
		d->kind = DEST_IN_PLACE;
		return 0;
	}
	d->kind = DEST_FILE;
	return check_sticky(d->path, &d->st);
}

int mt_outfile_check(const char *path)
{
	struct dest d = { 0 };
	char dir[PATH_MAX];
	struct stat ds;
	int ret = resolve(path, &d);

	if (ret)
		return ret;
	if (d.kind == DEST_IN_PLACE)
		return faccessat(AT_FDCWD, d.path, W_OK, AT_EACCESS) ? -errno : 0;
	ret = dir_of(d.path, dir, sizeof(dir));
	if (ret)
		return ret;
	if (stat(dir, &ds))
		return -errno;
	if (!S_ISDIR(ds.st_mode))
		return -ENOTDIR;
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) ? -errno : 0;
}

/* A new file next to DEST, readable as DEST will be; its name in *TMP. */
static int create_tmp(const struct dest *d, char **tmp)
{
	const char *base = strrchr(d->path, '/');
	char dir[PATH_MAX];
	mode_t mask = umask(0);
	int fd = -1, ret;

	umask(mask);
	base = base ? base + 1 : d->path;
	*tmp = NULL;
	ret = dir_of(d->path, dir, sizeof(dir));
	if (!ret && asprintf(tmp, "%s/.%.200s.XXXXXX", dir, base) < 0) {
		*tmp = NULL;
		ret = -ENOMEM;
	}
	if (!ret) {
		fd = mkostemp(*tmp, O_CLOEXEC);
		if (fd < 0)
			ret = -errno;
	}
	if (!ret && d->kind == DEST_FILE)
		ret = fchmod(fd, d->st.st_mode & 07777) ? -errno : 0;
	else if (!ret)
		ret = fchmod(fd, 0666 & ~mask) ? -errno : 0;
	/* The replaced file's owner, when we may give it (root may). */
	if (!ret && d->kind == DEST_FILE && geteuid() == 0 &&
	    fchown(fd, d->st.st_uid, d->st.st_gid))
		ret = -errno;
	if (!ret && d->kind == DEST_NEW && owner_uid != (uid_t)-1 &&
	    (owner_uid != geteuid() || owner_gid != getegid()) &&
	    fchown(fd, owner_uid, owner_gid))
		ret = -errno;
	if (ret && fd >= 0) {
		close(fd);
		unlink(*tmp);
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
	struct dest d = { 0 };
	int ret = resolve(path, &d);

	f->fd = -1;
	f->dest = NULL;
	f->tmp = NULL;
	if (ret)
		return ret;
	f->dest = strdup(d.path);
	if (!f->dest)
		return -ENOMEM;
	if (d.kind == DEST_IN_PLACE)
		ret = open(d.path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
	else
		ret = create_tmp(&d, &f->tmp);
	if (ret < 0) {
		ret = d.kind == DEST_IN_PLACE ? -errno : ret;
		free(f->dest);
		f->dest = NULL;
		return ret;
	}
	f->fd = ret;
	return 0;
}

int mt_outfile_open_now(struct mt_outfile *f, const char *path)
{
	int ret = mt_outfile_open(f, path);

	if (ret || !f->tmp)
		return ret;
	if (rename(f->tmp, f->dest)) {
		ret = -errno;
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
	free(f->dest);
	free(f->tmp);
	f->fd = -1;
	f->dest = NULL;
	f->tmp = NULL;
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
	if (!ret && f->tmp && rename(f->tmp, f->dest))
		ret = -errno;
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
	if (f->tmp)
		unlink(f->tmp);
	release(f);
}
