// SPDX-License-Identifier: MIT
/*
 * The registry of process images and their files (images.c): reference
 * counts through fork, exec, dlopen, dlclose and exit, on real processes
 * (this test and a child); a file's identity through its deletion, two
 * paths to one inode, and the kernel's identity over stat()'s.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "images.h"
#include "mapping_capture.h"
#include "proc_files.h"

/* Files the registry let go of, by path. */
static char gone[64][PATH_MAX];
static size_t ngone;

static void on_gone(void *ctx, const struct mt_image_file *f)
{
	(void)ctx;
	assert_true(f->fd >= 0); /* still open as it is told */
	if (ngone < 64)
		snprintf(gone[ngone++], PATH_MAX, "%s", f->path);
}

static bool was_gone(const char *path)
{
	for (size_t i = 0; i < ngone; i++)
		if (strcmp(gone[i], path) == 0)
			return true;
	return false;
}

static struct mt_file_key key_of_stat(const struct stat *st)
{
	return (struct mt_file_key){
		((uint64_t)major(st->st_dev) << 20) | minor(st->st_dev),
		(uint64_t)st->st_ino };
}

static const struct mt_image_file *file_at(const struct mt_images *r,
					   const char *path)
{
	struct stat st;
	struct mt_file_key k;

	if (stat(path, &st))
		return NULL;
	k = key_of_stat(&st);
	return mt_images_file(r, &k);
}

/* The file IMG maps whose path ends in SUFFIX, or NULL. */
static const struct mt_image_file *mapped(const struct mt_image *img,
					  const char *suffix)
{
	size_t n = strlen(suffix);

	for (size_t i = 0; img && i < img->n; i++) {
		const char *p = img->v[i].file->path;
		size_t len = strlen(p);

		if (len >= n && strcmp(p + len - n, suffix) == 0)
			return img->v[i].file;
	}
	return NULL;
}

static size_t maps_of(const struct mt_image *img,
		      const struct mt_image_file *f)
{
	size_t n = 0;

	for (size_t i = 0; i < img->n; i++)
		n += img->v[i].file == f;
	return n;
}

static void setup_registry(struct mt_images *r)
{
	memset(r, 0, sizeof(*r));
	r->on_file_gone = on_gone;
	ngone = 0;
}

/* A file in a new directory, of SIZE bytes copied from FROM (or zeros). */
static char dir[256];

static void make_file(const char *name, const char *from, char *path)
{
	int out, in = from ? open(from, O_RDONLY) : -1;
	char buf[65536];
	ssize_t n;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/mt-images-XXXXXX");
		assert_non_null(mkdtemp(dir));
	}
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(out >= 0);
	if (in >= 0) {
		while ((n = read(in, buf, sizeof(buf))) > 0)
			assert_int_equal(write(out, buf, (size_t)n), n);
		close(in);
	} else {
		memset(buf, 0, 8192);
		assert_int_equal(write(out, buf, 8192), 8192);
	}
	close(out);
}

static void *map_exec(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

static void remove_dir(void)
{
	if (dir[0])
		rmdir(dir);
	dir[0] = '\0';
}

/* Wait (at most 5 s) until PID's image maps files ending in A and B. */
static const struct mt_image *read_until(struct mt_images *r, pid_t pid,
					 const char *a, const char *b)
{
	const struct mt_image *img = NULL;

	for (int i = 0; i < 500; i++) {
		img = mt_images_read(r, pid, NULL, 0);
		if (img && mapped(img, a) && mapped(img, b))
			return img;
		usleep(10000);
	}
	return img;
}

/* fork shares the image; exec replaces it; exit drops what only it used. */
static void test_fork_exec_exit(void **state)
{
	struct mt_images r;
	const struct mt_image *self, *img;
	const struct mt_image_file *libc, *exe, *sleep_exe;
	char self_exe[PATH_MAX];
	int go[2], status;
	pid_t child;
	ssize_t n;

	(void)state;
	setup_registry(&r);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	assert_true(n > 0);
	self_exe[n] = '\0';
	self = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(self);
	assert_int_equal(self->refs, 1);
	libc = mapped(self, "/libc.so.6");
	exe = file_at(&r, self_exe);
	assert_non_null(libc);
	assert_non_null(exe);
	assert_ptr_equal(mapped(self, self_exe), exe);
	assert_int_equal(libc->refs, 1);
	assert_int_equal(exe->refs, 1);
	/* Mappings sorted, each of a file mapped executable. */
	for (size_t i = 1; i < self->n; i++)
		assert_true(self->v[i - 1].start < self->v[i].start);
	assert_true(maps_of(self, libc) >= 2); /* its data too */

	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	/* fork: the child runs its parent's image, shared. */
	assert_int_equal(mt_images_fork(&r, getpid(), child), 0);
	img = mt_images_of(&r, child);
	assert_ptr_equal(img, self);
	assert_int_equal(self->refs, 2);
	assert_int_equal(libc->refs, 1);
	assert_int_equal(mt_images_fork(&r, 999999999, child + 1), -ESRCH);

	/* exec: its image is read again, replacing the shared one. */
	assert_int_equal(write(go[1], "x", 1), 1);
	close(go[1]);
	img = read_until(&r, child, "/sleep", "/libc.so.6");
	assert_non_null(img);
	assert_ptr_not_equal(img, self);
	assert_int_equal(self->refs, 1);
	assert_int_equal(img->refs, 1);
	assert_ptr_equal(mapped(img, "/libc.so.6"), libc); /* one file */
	assert_int_equal(libc->refs, 2);
	assert_int_equal(exe->refs, 1);
	sleep_exe = mapped(img, "/sleep");
	assert_non_null(sleep_exe);
	assert_int_equal(sleep_exe->refs, 1);
	assert_null(mapped(img, self_exe));
	assert_int_equal(ngone, 0);

	/* exit: the files only it mapped go, the shared ones stay. */
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_null(mt_images_read(&r, child, NULL, 0));
	assert_int_equal(errno, ESRCH);
	mt_images_exit(&r, child);
	assert_null(mt_images_of(&r, child));
	assert_true(ngone >= 1);
	assert_true(was_gone("/usr/bin/sleep") || was_gone("/bin/sleep"));
	assert_false(was_gone(libc->path));
	assert_int_equal(libc->refs, 1);
	assert_ptr_equal(mt_images_of(&r, getpid()), self);

	mt_images_exit(&r, getpid());
	assert_int_equal(r.nfiles, 0);
	assert_true(was_gone(self_exe));
	mt_images_free(&r);
}

/* dlopen adds a file to the image, dlclose takes it out: it goes. */
static void test_dlopen_dlclose(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	const struct mt_image_file *f;
	char path[PATH_MAX];
	size_t before;
	void *p;

	(void)state;
	setup_registry(&r);
	make_file("plugin.so", NULL, path);
	assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
	before = r.nfiles;
	p = map_exec(path);
	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(img);
	f = mapped(img, "/plugin.so");
	assert_non_null(f);
	assert_string_equal(f->path, path);
	assert_int_equal(f->refs, 1);
	assert_int_equal(r.nfiles, before + 1);
	assert_int_equal(ngone, 0); /* the old image's files are the new's */
	/* Read again, nothing changed: nothing opened again. */
	{
		uint64_t opened = r.opened;

		assert_non_null(mt_images_read(&r, getpid(), NULL, 0));
		assert_int_equal(r.opened, opened);
		assert_int_equal(ngone, 0);
	}
	munmap(p, 4096);
	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_null(mapped(img, "/plugin.so"));
	assert_int_equal(r.nfiles, before);
	assert_int_equal(ngone, 1);
	assert_string_equal(gone[0], path);
	unlink(path);
	remove_dir();
	mt_images_free(&r);
}

/* A file deleted after it was mapped: still the file the process maps. */
static void test_deleted(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	const struct mt_image_file *f;
	char path[PATH_MAX], copy[PATH_MAX], from[PATH_MAX];
	struct stat st;
	ssize_t n;
	void *p;

	(void)state;
	setup_registry(&r);
	n = readlink("/proc/self/exe", from, sizeof(from) - 1);
	assert_true(n > 0);
	from[n] = '\0';
	make_file("gone.so", from, path);
	p = map_exec(path);
	assert_int_equal(unlink(path), 0);
	/* Another file where it was: not the one mapped. */
	make_file("gone.so", NULL, copy);
	img = mt_images_read(&r, getpid(), NULL, 0);
	f = mapped(img, "/gone.so");
	assert_non_null(f);
	assert_true(f->deleted);
	assert_string_equal(f->path, path);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(st.st_nlink, 0);
	assert_true(st.st_size > 8192); /* the copy, not the zeros */
	/* A descriptor of its own: its offset moves alone. */
	{
		int fd = mt_image_file_open(f);
		char magic[4];
		char shown[PATH_MAX + 16], want[PATH_MAX + 16];

		assert_true(fd >= 0 && fd != f->fd);
		assert_int_equal(read(fd, magic, 4), 4);
		assert_memory_equal(magic, "\177ELF", 4);
		assert_int_equal(lseek(f->fd, 0, SEEK_CUR), 0);
		close(fd);
		mt_image_file_shown(f, shown, sizeof(shown));
		snprintf(want, sizeof(want), "%s (deleted)", path);
		assert_string_equal(shown, want);
	}
	/* Its build id, read from the descriptor: our own executable's. */
	assert_string_not_equal(f->build_id, "");
	assert_string_equal(f->build_id, file_at(&r, from)->build_id);
	assert_ptr_not_equal(f, file_at(&r, from));
	munmap(p, 4096);
	unlink(copy);
	remove_dir();
	mt_images_free(&r);
}

/* One inode under two paths (a hard link, as a chroot's copy may be): one
 * file, mapped twice. */
static void test_two_paths(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	const struct mt_image_file *a, *b;
	char path[PATH_MAX], link2[PATH_MAX];
	void *p, *q;

	(void)state;
	setup_registry(&r);
	make_file("one.so", NULL, path);
	snprintf(link2, sizeof(link2), "%s/two.so", dir);
	assert_int_equal(link(path, link2), 0);
	p = map_exec(path);
	q = map_exec(link2);
	img = mt_images_read(&r, getpid(), NULL, 0);
	a = file_at(&r, path);
	b = mapped(img, "/one.so") ? mapped(img, "/one.so")
				   : mapped(img, "/two.so");
	assert_non_null(a);
	assert_ptr_equal(a, b); /* named by one of its paths */
	assert_int_equal(maps_of(img, a), 2);
	assert_int_equal(a->refs, 1);
	{
		size_t named = 0;

		for (size_t i = 0; i < img->n; i++)
			named += strstr(img->v[i].file->path, "/one.so") ||
				 strstr(img->v[i].file->path, "/two.so");
		assert_int_equal(named, 2);
	}
	munmap(p, 4096);
	munmap(q, 4096);
	unlink(path);
	unlink(link2);
	remove_dir();
	mt_images_free(&r);
}

/* A bind mount in another mount namespace (as a container's or a chroot's
 * view of a library): the child maps the file by another path, which is
 * one file with ours, held by both images. */
static void test_bind_mount(void **state)
{
	struct mt_images r;
	const struct mt_image *mine, *its;
	const struct mt_image_file *a, *b;
	char path[PATH_MAX], other[PATH_MAX], seen[PATH_MAX];
	int go[2], ready[2], status;
	void *p;
	pid_t child;

	(void)state;
	setup_registry(&r);
	make_file("lib.so", NULL, path);
	snprintf(other, sizeof(other), "%s/view", dir);
	assert_int_equal(mkdir(other, 0755), 0);
	p = map_exec(path);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char c = 'n', lib[PATH_MAX + 16];

		snprintf(lib, sizeof(lib), "%s/lib.so", other);
		if (unshare(CLONE_NEWNS) == 0 &&
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		    mount(dir, other, NULL, MS_BIND, NULL) == 0) {
			int fd = open(lib, O_RDONLY);

			if (fd >= 0 && mmap(NULL, 4096, PROT_READ | PROT_EXEC,
					    MAP_PRIVATE, fd, 0) != MAP_FAILED)
				c = 'y';
		}
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], seen, 1), 1);
	if (seen[0] != 'y') {
		assert_int_equal(write(go[1], "x", 1), 1);
		waitpid(child, &status, 0);
		fail_msg("cannot bind-mount in a mount namespace of its own");
	}
	mine = mt_images_read(&r, getpid(), NULL, 0);
	its = mt_images_read(&r, child, NULL, 0);
	assert_non_null(mine);
	assert_non_null(its);
	a = mapped(mine, "/lib.so");
	assert_non_null(a);
	/* Ours, inherited at P, and its own through the bind mount. */
	b = NULL;
	for (size_t i = 0; i < its->n && !b; i++)
		if (its->v[i].start != (uint64_t)(uintptr_t)p &&
		    its->v[i].exec && its->v[i].file == a)
			b = a;
	assert_ptr_equal(a, b); /* one file */
	assert_int_equal(maps_of(its, a), 2);
	assert_int_equal(a->refs, 2);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	mt_images_exit(&r, child);
	assert_int_equal(a->refs, 1);
	assert_int_equal(ngone, 0); /* it mapped no file of its own */
	munmap(p, 4096);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	unlink(path);
	rmdir(other);
	remove_dir();
	mt_images_free(&r);
}

/* Out of descriptors (RLIMIT_NOFILE reached): the files a read cannot
 * open are left out of the image, counted (and said once on stderr), and
 * a read once descriptors are back has them. */
static void test_out_of_fds(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	struct rlimit old, low;
	int probe;

	(void)state;
	setup_registry(&r);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(probe >= 0);
	close(probe);
	/* One descriptor free: /proc/PID/maps is read, then the first file
	 * opened (kept) and no other. */
	low = old;
	low.rlim_cur = (rlim_t)probe + 1;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_non_null(img);
	assert_true(r.no_fd > 0);
	assert_true(r.nfiles <= 1);
	assert_true(img->n < 2 || img->v[0].file == img->v[img->n - 1].file);

	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(img);
	assert_non_null(mapped(img, "/libc.so.6"));
	mt_images_free(&r);
}

/* The kernel's identity (the vma_files iterator's) is the key, not
 * stat()'s: on overlayfs they differ. */
static void test_kernel_identity(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	const struct mt_image_file *f;
	struct mt_vma_file k;
	struct mt_file_key layer = { 0xfff00042, 4242 };
	char path[PATH_MAX];
	struct stat st;
	void *p;

	(void)state;
	setup_registry(&r);
	make_file("layer.so", NULL, path);
	assert_int_equal(stat(path, &st), 0);
	p = map_exec(path);
	k.start = (uint64_t)(uintptr_t)p;
	k.end = k.start + 4096;
	k.file = layer;
	img = mt_images_read(&r, getpid(), &k, 1);
	f = mapped(img, "/layer.so");
	assert_non_null(f);
	assert_int_equal(f->key.dev, layer.dev);
	assert_int_equal(f->key.ino, layer.ino);
	assert_ptr_equal(mt_images_file(&r, &layer), f);
	assert_null(file_at(&r, path)); /* not under stat()'s */
	assert_int_equal(f->st_ino, st.st_ino); /* which it keeps too */
	munmap(p, 4096);
	unlink(path);
	remove_dir();
	mt_images_free(&r);
}

/* What the probes and the report get from an image is what they got
 * reading the process's maps themselves. */
static void test_same_as_maps(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	struct mt_objects a, b;
	struct mt_process pa = { .pid = (uint32_t)getpid() };
	struct mt_process pb = { .pid = (uint32_t)getpid() };

	(void)state;
	setup_registry(&r);
	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(img);
	assert_int_equal(mt_objects_of_pid(getpid(), &a), 0);
	assert_int_equal(mt_objects_of_image(getpid(), img, &b), 0);
	assert_true(a.n >= 3);
	assert_int_equal(a.n, b.n);
	assert_int_equal(a.has_exe, b.has_exe);
	for (size_t i = 0; i < a.n; i++) {
		assert_string_equal(a.v[i].path, b.v[i].path);
		assert_string_equal(a.v[i].shown, b.v[i].shown);
		assert_int_equal(a.v[i].dev, b.v[i].dev);
		assert_int_equal(a.v[i].ino, b.v[i].ino);
	}
	mt_objects_free(&a);
	mt_objects_free(&b);

	assert_true(mt_modules_refresh(&pa, true) >= 3);
	assert_int_equal(mt_modules_from_image(&pb, img, true), (int)pa.nmods);
	for (size_t i = 0; i < pa.nmods; i++) {
		const struct mt_module *x = &pa.mods[i], *y = &pb.mods[i];

		assert_string_equal(x->path, y->path);
		assert_int_equal(x->start, y->start);
		assert_int_equal(x->end, y->end);
		assert_int_equal(x->bias, y->bias);
		assert_int_equal(x->text_start, y->text_start);
		assert_int_equal(x->text_end, y->text_end);
		assert_int_equal(x->text_offset, y->text_offset);
		assert_string_equal(x->build_id, y->build_id);
		assert_true(y->fd >= 0);
	}
	/* Again: nothing new. */
	assert_int_equal(mt_modules_from_image(&pb, img, true), 0);
	mt_process_free_mods(&pa);
	mt_process_free_mods(&pb);
	mt_images_free(&r);
}

/* A chrooted process maps "/chroot.so", its root's file (a copy of our
 * executable): the registry knows it as that file, whatever "/chroot.so"
 * names in memtrace's root (here nothing), opened through the mapping:
 * its identity, content and build id are the copy's, and the same file
 * mapped by us is the same one. */
static void test_chroot(void **state)
{
	struct mt_images r;
	const struct mt_image *mine, *its;
	const struct mt_image_file *a, *f;
	char path[PATH_MAX], from[PATH_MAX], seen[2];
	struct stat st, fst;
	int go[2], ready[2], status;
	ssize_t n;
	void *p;
	pid_t child;

	(void)state;
	setup_registry(&r);
	n = readlink("/proc/self/exe", from, sizeof(from) - 1);
	assert_true(n > 0);
	from[n] = '\0';
	make_file("chroot.so", from, path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_not_equal(access("/chroot.so", F_OK), 0); /* not ours */
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char c = 'n';

		alarm(60); /* gone even if the test fails before telling it */
		close(go[1]);
		if (chroot(dir) == 0 && chdir("/") == 0) {
			int fd = open("/chroot.so", O_RDONLY);

			if (fd >= 0 && mmap(NULL, 4096, PROT_READ | PROT_EXEC,
					    MAP_PRIVATE, fd, 0) != MAP_FAILED)
				c = 'y';
		}
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], seen, 1), 1);
	if (seen[0] != 'y') {
		assert_int_equal(write(go[1], "x", 1), 1);
		waitpid(child, &status, 0);
		fail_msg("cannot chroot and map a file there");
	}
	its = mt_images_read(&r, child, NULL, 0);
	assert_non_null(its);
	f = mapped(its, "/chroot.so");
	assert_non_null(f);
	/* The file in its root, not a path resolved in ours. */
	assert_int_equal(f->st_dev, st.st_dev);
	assert_int_equal(f->st_ino, st.st_ino);
	assert_int_equal(f->key.ino, (uint64_t)st.st_ino);
	assert_false(f->deleted);
	assert_int_equal(fstat(f->fd, &fst), 0);
	assert_int_equal(fst.st_ino, st.st_ino);
	{
		int fd = mt_image_file_open(f);
		char magic[4];

		assert_true(fd >= 0);
		assert_int_equal(read(fd, magic, 4), 4);
		assert_memory_equal(magic, "\177ELF", 4);
		close(fd);
	}
	/* Our executable's build id: the copy's content. */
	mine = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(mine);
	assert_string_not_equal(f->build_id, "");
	assert_string_equal(f->build_id, file_at(&r, from)->build_id);
	assert_int_equal(f->refs, 1);
	/* Mapped by us by its path in our root: one file, two images. */
	p = map_exec(path);
	mine = mt_images_read(&r, getpid(), NULL, 0);
	a = mapped(mine, "/chroot.so");
	assert_ptr_equal(a, f);
	assert_int_equal(f->refs, 2);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	mt_images_exit(&r, child);
	assert_int_equal(f->refs, 1);
	munmap(p, 4096);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	unlink(path);
	remove_dir();
	mt_images_free(&r);
}

/* A file on overlayfs (a container's root), from its lower layer.  The
 * kernel maps the layer's file; /proc/PID/maps and stat() name the
 * overlay's inode.  Read from the maps alone, the registry's file is the
 * overlay's, opened through the mapping (its content, its build id);
 * given the kernel's identity (the vma_files iterator's, BPF: the layer's
 * file), that is the key, the overlay's kept beside, and the same file
 * mapped through the layer's own path is the same registry file.  In a
 * mount namespace of this test's own (the mount goes with it). */
static void test_overlayfs(void **state)
{
	struct mt_images r;
	const struct mt_image *img;
	const struct mt_image_file *f, *g;
	struct mt_vma_file k[2];
	char lower[PATH_MAX], upper[PATH_MAX], work[PATH_MAX], merged[PATH_MAX];
	char opts[4 * PATH_MAX + 64], lib[PATH_MAX + 16], inlower[PATH_MAX];
	char from[PATH_MAX], shown[PATH_MAX + 16];
	struct stat lst, ost;
	void *p, *q;
	ssize_t n;

	(void)state;
	setup_registry(&r);
	n = readlink("/proc/self/exe", from, sizeof(from) - 1);
	assert_true(n > 0);
	from[n] = '\0';
	make_file("marker", NULL, lower); /* makes dir */
	unlink(lower);
	snprintf(lower, sizeof(lower), "%s/lower", dir);
	snprintf(upper, sizeof(upper), "%s/upper", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	assert_int_equal(mkdir(lower, 0755), 0);
	assert_int_equal(mkdir(upper, 0755), 0);
	assert_int_equal(mkdir(work, 0755), 0);
	assert_int_equal(mkdir(merged, 0755), 0);
	make_file("lower/ovl.so", from, inlower);
	snprintf(lib, sizeof(lib), "%s/ovl.so", merged);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 lower, upper, work);
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("overlay", merged, "overlay", 0, opts))
		fail_msg("cannot mount overlayfs in a mount namespace of its own: %s",
			 strerror(errno));
	assert_int_equal(stat(inlower, &lst), 0);
	assert_int_equal(stat(lib, &ost), 0);
	assert_true(ost.st_dev != lst.st_dev);
	p = map_exec(lib);
	q = map_exec(inlower);

	/* From the maps alone: the overlay's inode, as they name it. */
	img = mt_images_read(&r, getpid(), NULL, 0);
	f = g = NULL;
	for (size_t i = 0; img && i < img->n; i++) {
		if (img->v[i].start == (uint64_t)(uintptr_t)p)
			f = img->v[i].file;
		if (img->v[i].start == (uint64_t)(uintptr_t)q)
			g = img->v[i].file;
	}
	assert_non_null(f);
	assert_non_null(g);
	assert_int_equal(f->key.dev, key_of_stat(&ost).dev);
	assert_int_equal(f->key.ino, key_of_stat(&ost).ino);
	assert_int_equal(g->key.dev, key_of_stat(&lst).dev);
	assert_string_equal(f->path, lib);
	mt_image_file_shown(f, shown, sizeof(shown));
	assert_string_equal(shown, lib);
	{
		int fd = mt_image_file_open(f);
		char magic[4];

		assert_true(fd >= 0);
		assert_int_equal(read(fd, magic, 4), 4);
		assert_memory_equal(magic, "\177ELF", 4);
		close(fd);
	}
	assert_string_equal(f->build_id, file_at(&r, from)->build_id);
	mt_images_free(&r);

	/* With the kernel's identity: the layer's file, for both. */
	setup_registry(&r);
	k[0].start = (uint64_t)(uintptr_t)(p < q ? p : q);
	k[1].start = (uint64_t)(uintptr_t)(p < q ? q : p);
	for (int i = 0; i < 2; i++) {
		k[i].end = k[i].start + 4096;
		k[i].file = key_of_stat(&lst);
	}
	img = mt_images_read(&r, getpid(), k, 2);
	f = g = NULL;
	for (size_t i = 0; img && i < img->n; i++) {
		if (img->v[i].start == (uint64_t)(uintptr_t)p)
			f = img->v[i].file;
		if (img->v[i].start == (uint64_t)(uintptr_t)q)
			g = img->v[i].file;
	}
	assert_non_null(f);
	assert_ptr_equal(f, g); /* one file, under two paths */
	assert_int_equal(maps_of(img, f), 2);
	assert_int_equal(f->refs, 1);
	assert_int_equal(f->key.dev, key_of_stat(&lst).dev);
	assert_int_equal(f->key.ino, key_of_stat(&lst).ino);
	assert_ptr_equal(mt_images_file(&r, &f->key), f);
	assert_string_equal(f->build_id, file_at(&r, from)->build_id);
	munmap(p, 4096);
	munmap(q, 4096);
	mt_images_free(&r);
	assert_int_equal(umount2(merged, MNT_DETACH), 0);
	unlink(inlower);
	rmdir(lower);
	rmdir(upper);
	rmdir(work);
	rmdir(merged);
	remove_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_exec_exit),
		cmocka_unit_test(test_dlopen_dlclose),
		cmocka_unit_test(test_deleted),
		cmocka_unit_test(test_two_paths),
		cmocka_unit_test(test_kernel_identity),
		cmocka_unit_test(test_out_of_fds),
		cmocka_unit_test(test_same_as_maps),
		cmocka_unit_test(test_bind_mount),
		cmocka_unit_test(test_chroot),
		/* Last: it moves this test into a mount namespace of its own. */
		cmocka_unit_test(test_overlayfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
