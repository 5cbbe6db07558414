// SPDX-License-Identifier: MIT
/* proc_files.c: the ELF files of a process, from its maps or from ld.so --list. */
#include "proc_files.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "images.h"
#include "proc_maps.h"

bool mt_objects_has(const struct mt_objects *objs, const struct mt_object *o)
{
	for (size_t i = 0; i < objs->n; i++)
		if (objs->v[i].dev == o->dev && objs->v[i].ino == o->ino)
			return true;
	return false;
}

int mt_objects_add(struct mt_objects *objs, const struct mt_object *o)
{
	struct mt_object *nv = realloc(objs->v, (objs->n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	objs->v = nv;
	nv[objs->n] = *o;
	nv[objs->n].path = strdup(o->path);
	nv[objs->n].shown = strdup(o->shown);
	if (!nv[objs->n].path || !nv[objs->n].shown) {
		free(nv[objs->n].path);
		free(nv[objs->n].shown);
		return -ENOMEM;
	}
	objs->n++;
	return 0;
}

/* Add the file at PATH (known as SHOWN) unless it is there already. */
static int add(struct mt_objects *objs, const char *path, const char *shown)
{
	struct mt_object o = { .path = (char *)path, .shown = (char *)shown };
	struct stat st;

	if (stat(path, &st) != 0)
		return 0; /* gone, or not ours to read: nothing to probe */
	o.dev = st.st_dev;
	o.ino = st.st_ino;
	return mt_objects_has(objs, &o) ? 0 : mt_objects_add(objs, &o);
}

void mt_objects_free(struct mt_objects *objs)
{
	for (size_t i = 0; i < objs->n; i++) {
		free(objs->v[i].path);
		free(objs->v[i].shown);
	}
	free(objs->v);
	objs->v = NULL;
	objs->n = 0;
}

const char *mt_object_name(const struct mt_object *o)
{
	const char *slash = strrchr(o->shown, '/');

	return slash ? slash + 1 : o->shown;
}

/*
 * The kernel's " (deleted)" after the name of a file unlinked since it was
 * mapped (a library an upgrade replaced while the process runs): gone
 * from NAME, and whether it was there.
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

/* PID's executable first in OBJS (emptied). */
static int exe_of(pid_t pid, struct mt_objects *objs)
{
	char exe[64], shown[PATH_MAX];
	ssize_t len;

	objs->v = NULL;
	objs->n = 0;
	objs->has_exe = true;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	len = readlink(exe, shown, sizeof(shown) - 1);
	if (len < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	shown[len] = '\0';
	strip_deleted(shown);
	return add(objs, exe, shown);
}

/*
 * The file PID maps at [START, END), known as MAPPED (maps's name): the
 * mapped file itself (maps names it as seen from our root: a chroot's
 * file by its full path, a container's by its path inside; a file
 * deleted since, replaced by an upgrade, by nothing else), else through
 * the process's root.  Into PATH and SHOWN; false when it cannot be.
 */
static bool path_of(pid_t pid, uint64_t start, uint64_t end,
		    const char *mapped, char *path, size_t plen, char *shown,
		    size_t slen)
{
	bool deleted;

	snprintf(shown, slen, "%s", mapped);
	deleted = strip_deleted(shown);
	snprintf(path, plen, "/proc/%d/map_files/%lx-%lx", (int)pid,
		 (unsigned long)start, (unsigned long)end);
	if (!access(path, F_OK))
		return true;
	if (deleted)
		return false;
	snprintf(path, plen, "/proc/%d/root%s", (int)pid, mapped);
	return true;
}

int mt_objects_of_pid(pid_t pid, struct mt_objects *objs)
{
	char shown[PATH_MAX], path[PATH_MAX + 64];
	struct mt_maps maps;
	int ret = exe_of(pid, objs);

	if (ret)
		return ret;
	ret = mt_maps_read(pid, &maps);
	for (size_t i = 0; i < maps.n && ret == 0; i++) {
		const struct mt_mapping *m = &maps.v[i];

		if (m->exec && m->path &&
		    path_of(pid, m->start, m->end, m->path, path, sizeof(path),
			    shown, sizeof(shown)))
			ret = add(objs, path, shown);
	}
	mt_maps_free(&maps);
	if (ret)
		mt_objects_free(objs);
	return ret;
}

int mt_objects_of_image(pid_t pid, const struct mt_image *img,
			struct mt_objects *objs)
{
	char shown[PATH_MAX], path[PATH_MAX + 64], mapped[PATH_MAX + 16];
	int ret = exe_of(pid, objs);

	for (size_t i = 0; i < img->n && ret == 0; i++) {
		const struct mt_image_map *m = &img->v[i];
		struct mt_object o = { .path = path, .shown = shown,
				       .dev = m->file->st_dev,
				       .ino = m->file->st_ino };

		mt_image_file_shown(m->file, mapped, sizeof(mapped));
		/* Its identity is the registry's: no stat() again. */
		if (m->exec && !mt_objects_has(objs, &o) &&
		    path_of(pid, m->start, m->end, mapped, path, sizeof(path),
			    shown, sizeof(shown)))
			ret = mt_objects_add(objs, &o);
	}
	if (ret)
		mt_objects_free(objs);
	return ret;
}

/* PT_INTERP of EXE into BUF; -ENOENT for a static executable. */
static int interpreter(const char *exe, char *buf, size_t len)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC), ret = -ENOENT;
	size_t n;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		ret = -ENOEXEC;
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		size_t size;
		const char *raw;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		raw = elf_rawfile(elf, &size);
		if (raw && ph.p_offset < size && ph.p_filesz < len &&
		    ph.p_offset + ph.p_filesz <= size) {
			memcpy(buf, raw + ph.p_offset, ph.p_filesz);
			buf[ph.p_filesz] = '\0';
			ret = 0;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* "\tlibc.so.6 => /lib/.../libc.so.6 (0x...)" or "\t/lib64/ld.so (0x...)". */
static int parse_list_line(struct mt_objects *objs, char *line)
{
	char *p = strstr(line, "=> "), *end;

	p = p ? p + 3 : line + strspn(line, " \t");
	if (*p != '/')
		return 0;
	end = strstr(p, " (");
	if (end)
		*end = '\0';
	p[strcspn(p, "\n")] = '\0';
	return add(objs, p, p);
}

static int run_list(const char *interp, const char *exe, struct mt_objects *objs)
{
	char *line = NULL;
	size_t cap = 0;
	int pfd[2], status, ret = 0;
	pid_t pid;
	FILE *f;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(pfd[1], STDOUT_FILENO);
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f) {
		close(pfd[0]);
		ret = -errno;
	}
	while (f && getline(&line, &cap, f) > 0 && ret == 0)
		ret = parse_list_line(objs, line);
	free(line);
	if (f)
		fclose(f);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return ret;
}

/* For a script: the libraries of memtrace's own libc. */
static int own_libc(struct mt_objects *objs)
{
	struct mt_maps self;
	const struct mt_mapping *libc;
	int ret = mt_maps_read(getpid(), &self);

	if (ret)
		return ret;
	libc = mt_maps_find_libc(&self);
	ret = libc ? add(objs, libc->path, libc->path) : 0;
	mt_maps_free(&self);
	return ret;
}

bool mt_objects_loading(pid_t pid, const struct mt_objects *objs)
{
	char exe[64], interp[PATH_MAX];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	return objs->n <= 2 && interpreter(exe, interp, sizeof(interp)) == 0;
}

int mt_objects_of_exe(const char *exe, struct mt_objects *objs)
{
	char interp[PATH_MAX] = "";
	int ret;

	objs->v = NULL;
	objs->n = 0;
	objs->has_exe = false;
	ret = interpreter(exe, interp, sizeof(interp));
	if (ret == -ENOEXEC)
		return own_libc(objs);
	if (ret && ret != -ENOENT)
		return ret;
	objs->has_exe = true;
	ret = add(objs, exe, exe);
	if (ret == 0 && interp[0] && access(interp, X_OK) == 0)
		ret = run_list(interp, exe, objs);
	if (ret)
		mt_objects_free(objs);
	return ret;
}
