// SPDX-License-Identifier: MIT
/* images.c: process images and the files they map, reference counted. */
#include "images.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "build_id.h"
#include "proc_maps.h"

/* The kernel's dev_t encoding, as an inode's superblock holds it. */
static uint64_t kernel_dev(dev_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

static int key_cmp(const struct mt_file_key *a, const struct mt_file_key *b)
{
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return 0;
}

/* Where KEY is in R's files, or would go (*FOUND says which). */
static size_t file_slot(const struct mt_images *r, const struct mt_file_key *key,
			bool *found)
{
	size_t lo = 0, hi = r->nfiles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(&r->files[mid]->key, key);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

const struct mt_image_file *mt_images_file(const struct mt_images *r,
					   const struct mt_file_key *key)
{
	bool found;
	size_t i = file_slot(r, key, &found);

	return found ? r->files[i] : NULL;
}

static size_t proc_slot(const struct mt_images *r, uint32_t pid, bool *found)
{
	size_t lo = 0, hi = r->nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->procs[mid].pid == pid) {
			*found = true;
			return mid;
		}
		if (r->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

const struct mt_image *mt_images_of(const struct mt_images *r, pid_t pid)
{
	bool found;
	size_t i = proc_slot(r, (uint32_t)pid, &found);

	return found ? r->procs[i].img : NULL;
}

static void file_free(struct mt_images *r, struct mt_image_file *f)
{
	bool found;
	size_t i = file_slot(r, &f->key, &found);

	if (found && r->files[i] == f) {
		memmove(r->files + i, r->files + i + 1,
			(r->nfiles - i - 1) * sizeof(*r->files));
		r->nfiles--;
	}
	if (r->on_file_gone)
		r->on_file_gone(r->ctx, f);
	if (f->fd >= 0)
		close(f->fd);
	r->closed++;
	free(f->path);
	free(f);
}

/* One process less runs IMG: at the last, its files lose a user. */
static void image_put(struct mt_images *r, struct mt_image *img)
{
	if (!img || --img->refs)
		return;
	r->gen++; /* each file counted once */
	for (size_t i = 0; i < img->n; i++) {
		struct mt_image_file *f = img->v[i].file;

		if (f->mark != r->gen) {
			f->mark = r->gen;
			f->refs--;
		}
	}
	/* Then those no image maps go (their later mappings forgotten
	 * first: pointers compared, never read once freed). */
	for (size_t i = 0; i < img->n; i++) {
		struct mt_image_file *f = img->v[i].file;

		if (!f || f->refs)
			continue;
		for (size_t j = i + 1; j < img->n; j++)
			if (img->v[j].file == f)
				img->v[j].file = NULL;
		file_free(r, f);
	}
	free(img->v);
	free(img);
}

/*
 * The kernel's " (deleted)" after the name of a file unlinked since it was
 * mapped: gone from NAME, and whether it was there.
 */
static bool strip_deleted(char *name)
{
	static const char tag[] = " (deleted)";
	size_t n = strlen(name), t = sizeof(tag) - 1;

	if (n <= t || strcmp(name + n - t, tag) != 0)
		return false;
	name[n - t] = '\0';
	return true;
}

/* The file mapped at M by PID, known or opened now; NULL when it cannot
 * be read (errno ENOMEM: out of memory). */
static struct mt_image_file *file_of(struct mt_images *r, pid_t pid,
				     const struct mt_mapping *m,
				     const struct mt_vma_file *kern,
				     size_t nkern)
{
	struct mt_file_key key = { 0, 0 };
	struct mt_image_file *f, **nv;
	bool have_key = false, found;
	char name[4200];
	struct stat st;
	size_t at;
	int fd;

	for (size_t i = 0; i < nkern && !have_key; i++)
		if (kern[i].start == m->start && kern[i].end == m->end) {
			key = kern[i].file;
			have_key = true;
		}
	if (have_key) {
		at = file_slot(r, &key, &found);
		if (found)
			return r->files[at];
	}
	/* The mapped file itself: map_files survives deletion and
	 * resolves in the process's root; else by its path there. */
	snprintf(name, sizeof(name), "/proc/%d/map_files/%lx-%lx", (int)pid,
		 (unsigned long)m->start, (unsigned long)m->end);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && !strstr(m->path, " (deleted)")) {
		snprintf(name, sizeof(name), "/proc/%d/root%s", (int)pid, m->path);
		fd = open(name, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		struct rlimit rl;

		if (r->no_fd++ == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0)
			fprintf(stderr, "memtrace: out of file descriptors (ulimit -n %llu): files processes map are left out, and their stacks and names with them\n",
				(unsigned long long)rl.rlim_cur);
		errno = EMFILE;
	}
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	if (!have_key) {
		key.dev = kernel_dev(st.st_dev);
		key.ino = (uint64_t)st.st_ino;
	}
	at = file_slot(r, &key, &found);
	if (found) {
		close(fd);
		return r->files[at];
	}
	nv = realloc(r->files, (r->nfiles + 1) * sizeof(*nv));
	if (nv)
		r->files = nv;
	f = nv ? calloc(1, sizeof(*f)) : NULL;
	if (f)
		f->path = strdup(m->path);
	if (!f || !f->path) {
		free(f);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	f->key = key;
	f->st_dev = st.st_dev;
	f->st_ino = st.st_ino;
	f->fd = fd;
	f->deleted = strip_deleted(f->path);
	mt_build_id_hex(fd, f->build_id, sizeof(f->build_id));
	memmove(r->files + at + 1, r->files + at,
		(r->nfiles - at) * sizeof(*r->files));
	r->files[at] = f;
	r->nfiles++;
	r->opened++;
	return f;
}

/* Files no image maps (opened by a read that failed) go. */
static void sweep(struct mt_images *r)
{
	for (size_t i = r->nfiles; i-- > 0;) {
		struct mt_image_file *f = r->files[i];

		if (!f->refs)
			file_free(r, f); /* takes it out of r->files */
	}
}

/* The file of the executable mapping of M's path in MAPS, or NULL. */
static struct mt_image_file *exec_file_of(const struct mt_maps *maps,
					  const struct mt_mapping *m,
					  struct mt_image_file **files)
{
	for (size_t i = 0; i < maps->n; i++)
		if (files[i] && strcmp(maps->v[i].path, m->path) == 0)
			return files[i];
	return NULL;
}

/* IMG from MAPS: the mappings of the files PID maps executable. */
static int image_build(struct mt_images *r, pid_t pid,
		       const struct mt_maps *maps,
		       const struct mt_vma_file *kern, size_t nkern,
		       struct mt_image *img)
{
	struct mt_image_file **files = calloc(maps->n ? maps->n : 1,
					      sizeof(*files));

	if (!files)
		return -ENOMEM;
	img->v = calloc(maps->n ? maps->n : 1, sizeof(*img->v));
	if (!img->v) {
		free(files);
		return -ENOMEM;
	}
	for (size_t i = 0; i < maps->n; i++) {
		const struct mt_mapping *m = &maps->v[i];

		if (!m->exec || !m->path)
			continue;
		files[i] = file_of(r, pid, m, kern, nkern);
		if (!files[i] && errno == ENOMEM) {
			free(files);
			sweep(r);
			return -ENOMEM;
		}
	}
	r->gen++;
	for (size_t i = 0; i < maps->n; i++) {
		const struct mt_mapping *m = &maps->v[i];
		struct mt_image_file *f;

		if (!m->path)
			continue;
		f = m->exec ? files[i] : exec_file_of(maps, m, files);
		if (!f)
			continue;
		img->v[img->n++] = (struct mt_image_map){ m->start, m->end,
							  m->offset, m->exec,
							  f };
		if (f->mark != r->gen) {
			f->mark = r->gen;
			f->refs++;
		}
	}
	free(files);
	return 0;
}

/* The files IMG maps that OLD did not, counted into R (before OLD goes). */
static void count_grown(struct mt_images *r, const struct mt_image *old,
			const struct mt_image *img)
{
	r->grew = 0;
	if (!old)
		return;
	r->gen++;
	for (size_t i = 0; i < old->n; i++)
		if (old->v[i].file)
			old->v[i].file->mark = r->gen;
	for (size_t i = 0; i < img->n; i++) {
		struct mt_image_file *f = img->v[i].file;

		if (f->mark == r->gen)
			continue;
		f->mark = r->gen;
		if (r->grew < MT_IMAGES_GREW_MAX)
			r->grew_files[r->grew] = f;
		r->grew++;
	}
}

/* PID runs IMG from now on (the one it ran is put). */
static int set_image(struct mt_images *r, uint32_t pid, struct mt_image *img)
{
	bool found;
	size_t i = proc_slot(r, pid, &found);
	struct mt_image_proc *nv;

	if (found) {
		image_put(r, r->procs[i].img);
		r->procs[i].img = img;
		return 0;
	}
	nv = realloc(r->procs, (r->nprocs + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	r->procs = nv;
	memmove(nv + i + 1, nv + i, (r->nprocs - i) * sizeof(*nv));
	nv[i] = (struct mt_image_proc){ pid, img };
	r->nprocs++;
	return 0;
}

const struct mt_image *mt_images_read(struct mt_images *r, pid_t pid,
				      const struct mt_vma_file *kern,
				      size_t nkern)
{
	struct mt_maps maps;
	struct mt_image *img;
	int ret = mt_maps_read(pid, &maps);

	if (ret) {
		errno = -ret;
		return NULL;
	}
	r->reads++;
	img = calloc(1, sizeof(*img));
	ret = img ? image_build(r, pid, &maps, kern, nkern, img) : -ENOMEM;
	mt_maps_free(&maps);
	if (img)
		img->refs = 1;
	if (!ret) {
		count_grown(r, mt_images_of(r, pid), img);
		ret = set_image(r, (uint32_t)pid, img);
	}
	if (ret) {
		image_put(r, img);
		errno = -ret;
		return NULL;
	}
	return img;
}

int mt_images_fork(struct mt_images *r, pid_t parent, pid_t child)
{
	struct mt_image *img;
	bool found;
	size_t i = proc_slot(r, (uint32_t)parent, &found);
	int ret;

	if (!found)
		return -ESRCH;
	img = r->procs[i].img;
	img->refs++;
	ret = set_image(r, (uint32_t)child, img);
	if (ret)
		image_put(r, img);
	return ret;
}

void mt_images_exit(struct mt_images *r, pid_t pid)
{
	bool found;
	size_t i = proc_slot(r, (uint32_t)pid, &found);
	struct mt_image *img;

	if (!found)
		return;
	img = r->procs[i].img;
	memmove(r->procs + i, r->procs + i + 1,
		(r->nprocs - i - 1) * sizeof(*r->procs));
	r->nprocs--;
	r->dropped += img->refs == 1;
	image_put(r, img);
}

void mt_images_keep_only(struct mt_images *r, const uint32_t *live,
			 size_t nlive)
{
	size_t k = nlive;

	/* Both by pid: from the end, so that an exit moves nothing unseen. */
	for (size_t i = r->nprocs; i-- > 0;) {
		uint32_t pid = r->procs[i].pid;

		while (k > 0 && live[k - 1] > pid)
			k--;
		if (k == 0 || live[k - 1] != pid)
			mt_images_exit(r, (pid_t)pid);
	}
}

int mt_image_file_open(const struct mt_image_file *f)
{
	char name[64];
	int fd;

	/* Through /proc/self/fd: a new open file description of the very
	 * file (deleted or not), not a dup() sharing the offset. */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", f->fd);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void mt_image_file_shown(const struct mt_image_file *f, char *buf,
			 size_t len)
{
	snprintf(buf, len, "%s%s", f->path, f->deleted ? " (deleted)" : "");
}

void mt_images_free(struct mt_images *r)
{
	while (r->nprocs)
		mt_images_exit(r, (pid_t)r->procs[r->nprocs - 1].pid);
	free(r->procs);
	free(r->files);
	r->procs = NULL;
	r->files = NULL;
	r->nfiles = 0;
}
