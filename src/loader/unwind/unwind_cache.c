// SPDX-License-Identifier: MIT
/* unwind_cache.c: unwind tables kept on disk (unwind_cache.h). */
#include "unwind_cache.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "memleak.h"
#include "profile.h"

#define MAGIC "MTUWTAB\n"
#define VERSION 1
#define SUFFIX ".uwt"
#define TMP_PREFIX ".tmp-"
/* A temporary file this old was left by a writer that died. */
#define TMP_STALE_SEC 600
/* Bounds no real table reaches (--max-unwind-rows is at most 2^27). */
#define MAX_ROWS (1U << 28)

struct header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint32_t row_size;
	uint32_t nrows;
	uint32_t npages;
	uint32_t nstop;
	uint64_t first_page;
	uint64_t uncovered;
	char key[MT_UNWIND_CACHE_KEY];
	char tool[MT_UNWIND_CACHE_KEY];
	uint32_t crc;            /* of this header (crc 0), rows, pages */
	uint32_t pad;
};

/* The key of the file ST is: its identity. */
static void identity_key(const struct stat *st, struct mt_unwind_cache_key *k)
{
	snprintf(k->name, sizeof(k->name), "f-%llx-%llx-%llx-%llx-%lx",
		 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
		 (unsigned long long)st->st_size,
		 (unsigned long long)st->st_mtim.tv_sec,
		 (unsigned long)st->st_mtim.tv_nsec);
}

/*
 * The GNU build id of the ELF file open on FD into HEX, "" when none: as
 * mt_build_id_hex(), but read with pread, not mmap: the builder thread's
 * mmap of a file waited up to 7 ms for the mm lock while memtrace's main
 * thread loaded its BPF programs, 15 times a table's whole read.
 */
static void build_id_of(int fd, char *hex, size_t len)
{
	Elf *elf;
	const void *id = NULL;
	ssize_t n;

	hex[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (n > 0 && (size_t)n * 2 < len)
		for (ssize_t i = 0; i < n; i++)
			snprintf(hex + i * 2, 3, "%02x",
				 ((const unsigned char *)id)[i]);
	if (elf)
		elf_end(elf);
}

int mt_unwind_cache_key_of(int fd, struct mt_unwind_cache_key *k)
{
	char hex[MT_BUILD_ID_HEX];
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	build_id_of(fd, hex, sizeof(hex));
	if (hex[0]) {
		snprintf(k->name, sizeof(k->name), "b-%s-%llx", hex,
			 (unsigned long long)st.st_size);
		return 0;
	}
	identity_key(&st, k);
	return 0;
}

void mt_unwind_cache_file_name(const struct mt_unwind_cache_key *key,
			       char *buf, size_t len)
{
	snprintf(buf, len, "%s" SUFFIX, key->name);
}

int mt_unwind_cache_default_dir(char *buf, size_t len)
{
	const char *env = getenv("MEMTRACE_UNWIND_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw;
	int n;

	if (env && env[0])
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		/* Root, sudo too: never a directory of the invoking user's. */
		n = snprintf(buf, len, "/var/cache/memtrace");
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/memtrace", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/memtrace", home);
	else if ((pw = getpwuid(geteuid())) && pw->pw_dir &&
		 pw->pw_dir[0] == '/')
		n = snprintf(buf, len, "%s/.cache/memtrace", pw->pw_dir);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p PATH, each directory made 0700. */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Whether ST is what this user may trust: owned by the effective user,
 * writable by no one else. */
static bool trusted(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int mt_unwind_cache_open(struct mt_unwind_cache *c, const char *dir,
			 uint64_t max_bytes)
{
	struct stat st;
	int ret, fd;

	memset(c, 0, sizeof(*c));
	c->dirfd = -1;
	c->max_bytes = max_bytes ? max_bytes : MT_UNWIND_CACHE_DEFAULT_MAX;
	if (dir) {
		if (strlen(dir) >= sizeof(c->dir))
			return -ENAMETOOLONG;
		snprintf(c->dir, sizeof(c->dir), "%s", dir);
	} else if ((ret = mt_unwind_cache_default_dir(c->dir,
						      sizeof(c->dir))) != 0) {
		return ret;
	}
	/* The binary that makes the tables: its identity (a rebuild or a
	 * new version is another binary), not its build id, which libelf
	 * took 5 ms to read in memtrace while the BPF programs load. */
	if (stat("/proc/self/exe", &st))
		return -errno;
	identity_key(&st, &c->tool);
	ret = make_dirs(c->dir);
	if (ret)
		return ret;
	fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !trusted(&st)) {
		close(fd);
		return -EPERM;
	}
	c->dirfd = fd;
	return 0;
}

void mt_unwind_cache_close(struct mt_unwind_cache *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
}

static uint32_t crc_of(const struct header *h, const struct mt_unwind_table *t,
		       size_t npages)
{
	struct header copy = *h;
	uLong crc = crc32(0L, Z_NULL, 0);

	copy.crc = 0;
	crc = crc32(crc, (const Bytef *)&copy, sizeof(copy));
	crc = crc32(crc, (const Bytef *)t->rows,
		    (uInt)(t->nrows * sizeof(*t->rows)));
	crc = crc32(crc, (const Bytef *)t->pages,
		    (uInt)(npages * sizeof(*t->pages)));
	return (uint32_t)crc;
}

/* Whether T's rows and pages are a table the BPF unwinder can follow as
 * unwind_table.c makes them: rows sorted by pc, the page index theirs. */
static bool well_formed(const struct mt_unwind_table *t)
{
	uint64_t last;

	if (!t->nrows)
		return t->npages == 0 && t->first_page == 0;
	for (uint32_t i = 1; i < t->nrows; i++)
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			return false;
	last = t->rows[t->nrows - 1].pc >> MT_UW_PAGE_SHIFT;
	if (t->first_page != t->rows[0].pc >> MT_UW_PAGE_SHIFT ||
	    t->npages != last - t->first_page + 1)
		return false;
	for (uint32_t k = 0; k <= t->npages; k++)
		if (t->pages[k] >= t->nrows ||
		    (k && t->pages[k] < t->pages[k - 1]))
			return false;
	return true;
}

static size_t pages_of(uint32_t nrows, uint32_t npages)
{
	return nrows ? (size_t)npages + 1 : 0;
}

int mt_unwind_cache_lookup(struct mt_unwind_cache *c,
			   const struct mt_unwind_cache_key *key,
			   struct mt_unwind_table *t)
{
	char name[MT_UNWIND_CACHE_KEY + 8];
	struct header h;
	struct stat st;
	struct iovec iov[3];
	size_t npages, want;
	ssize_t got;
	int fd, ret = -EBADMSG;
	struct timespec cpu0, wall0, cpu1, wall1;

	memset(t, 0, sizeof(*t));
	if (c->dirfd < 0)
		return -ENOENT;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	clock_gettime(CLOCK_MONOTONIC, &wall0);
	mt_unwind_cache_file_name(key, name, sizeof(name));
	fd = openat(c->dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = errno == ELOOP ? -EPERM : -ENOENT;
		goto out;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !trusted(&st)) {
		ret = -EPERM;
		goto out;
	}
	if ((size_t)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, MAGIC, sizeof(h.magic)) != 0 ||
	    h.version != VERSION ||
	    h.header_size != sizeof(h) ||
	    h.row_size != sizeof(struct mt_unwind_row) ||
	    h.nrows > MAX_ROWS || h.npages > MAX_ROWS ||
	    strncmp(h.key, key->name, sizeof(h.key)) != 0 ||
	    strncmp(h.tool, c->tool.name, sizeof(h.tool)) != 0)
		goto out;
	npages = pages_of(h.nrows, h.npages);
	want = sizeof(h) + h.nrows * sizeof(*t->rows) +
	       npages * sizeof(*t->pages);
	if ((uint64_t)st.st_size != want)
		goto out;
	t->nrows = h.nrows;
	t->npages = h.npages;
	t->first_page = h.first_page;
	t->nstop = h.nstop;
	t->uncovered = h.uncovered;
	if (h.nrows) {
		t->rows = malloc(h.nrows * sizeof(*t->rows));
		t->pages = malloc(npages * sizeof(*t->pages));
		if (!t->rows || !t->pages) {
			ret = -ENOMEM;
			goto out;
		}
	}
	iov[0] = (struct iovec){ t->rows, h.nrows * sizeof(*t->rows) };
	iov[1] = (struct iovec){ t->pages, npages * sizeof(*t->pages) };
	got = preadv(fd, iov, 2, sizeof(h));
	if (got < 0 || (size_t)got != want - sizeof(h) ||
	    crc_of(&h, t, npages) != h.crc || !well_formed(t))
		goto out;
	/* Used now: the last to be evicted. */
	futimens(fd, (struct timespec[2]){ { 0, UTIME_NOW },
					   { 0, UTIME_OMIT } });
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret)
		mt_unwind_table_free(t);
	if (ret == 0) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
		clock_gettime(CLOCK_MONOTONIC, &wall1);
		c->hits++;
		c->hit_rows += t->nrows;
		c->hit_cpu_ns += (uint64_t)((cpu1.tv_sec - cpu0.tv_sec) * 1000000000LL +
					    (cpu1.tv_nsec - cpu0.tv_nsec));
		c->hit_ns += (uint64_t)((wall1.tv_sec - wall0.tv_sec) * 1000000000LL +
					(wall1.tv_nsec - wall0.tv_nsec));
	} else if (ret == -ENOENT)
		c->misses++;
	else
		c->bad++;
	return ret;
}

struct entry {
	char name[MT_UNWIND_CACHE_KEY + 8];
	uint64_t bytes;
	struct timespec used;
};

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Remove the least recently used tables (and stale temporary files)
 * until the directory holds at most max_bytes; KEEP stays. */
static void evict(struct mt_unwind_cache *c, const char *keep)
{
	int fd = dup(c->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	time_t now = time(NULL);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* The copy shares the offset of the last listing: from the start. */
	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		bool tmp = strncmp(e->d_name, TMP_PREFIX,
				   strlen(TMP_PREFIX)) == 0;

		if ((!tmp && !ends_with(e->d_name, SUFFIX)) ||
		    strlen(e->d_name) >= sizeof(v->name) ||
		    fstatat(c->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (tmp) {
			if (now - st.st_mtime > TMP_STALE_SEC &&
			    unlinkat(c->dirfd, e->d_name, 0) == 0)
				c->evicted++;
			continue;
		}
		total += (uint64_t)st.st_size;
		if (strcmp(e->d_name, keep) == 0)
			continue;
		if (n == cap) {
			struct entry *nv;

			cap = cap ? 2 * cap : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		/* Its length was checked above. */
		memcpy(v[n].name, e->d_name, strlen(e->d_name) + 1);
		v[n].bytes = (uint64_t)st.st_size;
		/* atime is set at each use; a file never used since it was
		 * written has its mtime. */
		v[n].used = st.st_atim.tv_sec > st.st_mtim.tv_sec ||
					    (st.st_atim.tv_sec == st.st_mtim.tv_sec &&
					     st.st_atim.tv_nsec > st.st_mtim.tv_nsec)
				    ? st.st_atim
				    : st.st_mtim;
		n++;
	}
	closedir(d);
	if (total > c->max_bytes && n) {
		qsort(v, n, sizeof(*v), older_first);
		for (size_t i = 0; i < n && total > c->max_bytes; i++) {
			if (unlinkat(c->dirfd, v[i].name, 0))
				continue;
			total -= v[i].bytes;
			c->evicted++;
		}
	}
	free(v);
}

int mt_unwind_cache_store(struct mt_unwind_cache *c,
			  const struct mt_unwind_cache_key *key,
			  const struct mt_unwind_table *t)
{
	char name[MT_UNWIND_CACHE_KEY + 8], tmp[64];
	size_t npages = pages_of(t->nrows, t->npages);
	struct header h = {
		.version = VERSION,
		.header_size = sizeof(h),
		.row_size = sizeof(struct mt_unwind_row),
		.nrows = t->nrows,
		.npages = t->npages,
		.nstop = t->nstop,
		.first_page = t->first_page,
		.uncovered = t->uncovered,
	};
	struct iovec iov[3];
	size_t bytes = sizeof(h) + t->nrows * sizeof(*t->rows) +
		       npages * sizeof(*t->pages);
	struct timespec ts;
	ssize_t put;
	int fd, ret = 0;

	if (c->dirfd < 0)
		return -EBADF;
	if (bytes > c->max_bytes)
		return -EFBIG;
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	snprintf(h.key, sizeof(h.key), "%s", key->name);
	snprintf(h.tool, sizeof(h.tool), "%s", c->tool.name);
	h.crc = crc_of(&h, t, npages);
	mt_unwind_cache_file_name(key, name, sizeof(name));
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d-%lx", (int)getpid(),
		 (unsigned long)ts.tv_nsec ^ (unsigned long)(uintptr_t)t);
	fd = openat(c->dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	iov[0] = (struct iovec){ &h, sizeof(h) };
	iov[1] = (struct iovec){ t->rows, t->nrows * sizeof(*t->rows) };
	iov[2] = (struct iovec){ t->pages, npages * sizeof(*t->pages) };
	put = writev(fd, iov, 3);
	if (put < 0)
		ret = -errno;
	else if ((size_t)put != bytes)
		ret = -ENOSPC;
	if (close(fd) && !ret)
		ret = -errno;
	/* Over whatever is there: a corrupt table, a link (not followed). */
	if (!ret && renameat(c->dirfd, tmp, c->dirfd, name))
		ret = -errno;
	if (ret) {
		unlinkat(c->dirfd, tmp, 0);
		return ret;
	}
	c->stored++;
	evict(c, name);
	return 0;
}
