// SPDX-License-Identifier: MIT
/*
 * installed_allocators.c: the allocator libraries installed in the dynamic
 * loader's directories, found before any process maps them.
 */
#include "installed_allocators.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocator.h"

/* The directories ld.so searches without a configuration file. */
static const char *const default_dirs[] = {
	"/lib", "/usr/lib", "/lib64", "/usr/lib64",
};

/* Is the file at FD a shared object this machine's processes can map? */
static bool native_elf(int fd)
{
	Elf64_Ehdr eh;

	return pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	       memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	       eh.e_ident[EI_DATA] == ELFDATA2LSB &&
	       eh.e_machine == EM_X86_64 && eh.e_type == ET_DYN;
}

/* Does a file named NAME hold an allocator or C++ new/delete? */
static bool allocator_name(const char *name)
{
	return (mt_allocator_family(name) != NULL ||
		strncmp(name, "libstdc++", 9) == 0) &&
	       strstr(name, ".so") != NULL;
}

/* Add the allocator libraries in directory DIR to OUT. */
static int scan_dir(const char *dir, struct mt_objects *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0; /* absent, or not readable: nothing installed there */
	while (ret == 0 && (e = readdir(d)) != NULL) {
		char path[PATH_MAX], real[PATH_MAX];
		struct mt_object o;
		struct stat st;
		int fd;

		if (!allocator_name(e->d_name) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
			    (int)sizeof(path) ||
		    !realpath(path, real))
			continue;
		fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && native_elf(fd)) {
			o = (struct mt_object){ .path = real, .shown = real,
						.dev = st.st_dev,
						.ino = st.st_ino };
			if (!mt_objects_has(out, &o))
				ret = mt_objects_add(out, &o);
		}
		close(fd);
	}
	closedir(d);
	return ret;
}

static int read_conf(const char *file, struct mt_objects *out, int depth);

/* "include PATTERN" in a configuration file: each file it names. */
static int read_include(const char *pattern, struct mt_objects *out,
			int depth)
{
	glob_t g;
	int ret = 0;

	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc && ret == 0; i++)
		ret = read_conf(g.gl_pathv[i], out, depth + 1);
	globfree(&g);
	return ret;
}

/* The directories /etc/ld.so.conf (FILE) names, and the files it includes. */
static int read_conf(const char *file, struct mt_objects *out, int depth)
{
	FILE *f;
	char line[PATH_MAX + 16];
	int ret = 0;

	if (depth > 8 || !(f = fopen(file, "re")))
		return 0;
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		char *s = line, *end;

		s[strcspn(s, "#\n")] = '\0';
		s += strspn(s, " \t");
		end = s + strlen(s);
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t'))
			ret = read_include(s + 8 + strspn(s + 8, " \t"), out, depth);
		else if (s[0] == '/')
			ret = scan_dir(s, out);
	}
	fclose(f);
	return ret;
}

int mt_installed_allocators(const char *conf, struct mt_objects *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = read_conf(conf ? conf : "/etc/ld.so.conf", out, 0);
	for (size_t i = 0; ret == 0 && !conf && i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		ret = scan_dir(default_dirs[i], out);
	if (ret)
		mt_objects_free(out);
	return ret;
}
