/* SPDX-License-Identifier: MIT */
/* perf_map.c: JIT code named by /tmp/perf-PID.map (see perf_map.h). */
#include "perf_map.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int cmp_start(const void *a, const void *b)
{
	const struct mt_perf_sym *x = a, *y = b;

	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* A hex number of LINE at *P, no sign, no space before; *P moves past it. */
static bool hex_field(const char **p, uint64_t *v)
{
	const char *s = *p;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 16);
	if (errno)
		return false;
	*p = end;
	return true;
}

/* Parse one line (NUL-terminated, no newline) into *SYM, its name in NAME. */
static bool parse_line(const char *line, struct mt_perf_sym *sym,
		       const char **name)
{
	const char *p = line;
	uint64_t start, size;

	if (!hex_field(&p, &start) || *p++ != ' ' || !hex_field(&p, &size) ||
	    *p++ != ' ' || !*p || size == 0 || start + size < start)
		return false;
	sym->start = start;
	sym->end = start + size;
	*name = p;
	return true;
}

int mt_perf_map_parse(struct mt_perf_map *m, const char *text, size_t len)
{
	char line[MT_PERF_MAP_LINE + 1];
	size_t lines = 1, used = 0;
	uint64_t hi = 0;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	m->v = calloc(lines, sizeof(*m->v));
	m->names = malloc(len + 1);
	if (!m->v || !m->names) {
		mt_perf_map_free(m);
		return -ENOMEM;
	}
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		const char *name;
		struct mt_perf_sym sym;

		if (n && text[at + n - 1] == '\r')
			n--;
		if (n <= MT_PERF_MAP_LINE && !memchr(text + at, '\0', n)) {
			memcpy(line, text + at, n);
			line[n] = '\0';
			if (parse_line(line, &sym, &name)) {
				size_t k = strlen(name) + 1;

				sym.seq = (uint32_t)m->n;
				sym.name = m->names + used;
				memcpy(m->names + used, name, k);
				used += k;
				m->v[m->n++] = sym;
			}
		}
		at += (nl ? (size_t)(nl - (text + at)) + 1 : len - at);
	}
	qsort(m->v, m->n, sizeof(*m->v), cmp_start);
	m->max_end = calloc(m->n ? m->n : 1, sizeof(*m->max_end));
	if (!m->max_end) {
		mt_perf_map_free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].end > hi)
			hi = m->v[i].end;
		m->max_end[i] = hi;
	}
	return 0;
}

const struct mt_perf_sym *mt_perf_map_find(const struct mt_perf_map *m,
					   uint64_t pc)
{
	const struct mt_perf_sym *best = NULL;
	size_t lo = 0, hi = m ? m->n : 0;

	/* The entries starting at or below PC... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ...back while one of them may still reach it. */
	for (size_t i = lo; i-- > 0 && m->max_end[i] > pc;)
		if (m->v[i].end > pc && (!best || m->v[i].seq > best->seq))
			best = &m->v[i];
	return best;
}

void mt_perf_map_free(struct mt_perf_map *m)
{
	free(m->v);
	free(m->max_end);
	free(m->names);
	memset(m, 0, sizeof(*m));
}

/* What /proc/PID/status says: its pid in its namespace and its uids. */
struct proc_ids {
	uint32_t nspid;
	uid_t euid, fsuid;
};

static int read_ids(uint32_t pid, struct proc_ids *ids)
{
	char path[64], buf[256];
	bool uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	ids->nspid = pid;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long r, e, s, fs;

		if (sscanf(buf, "Uid: %lu %lu %lu %lu", &r, &e, &s, &fs) == 4) {
			ids->euid = (uid_t)e;
			ids->fsuid = (uid_t)fs;
			uid = true;
		} else if (strncmp(buf, "NSpid:", 6) == 0) {
			/* The last one: the pid in its own namespace. */
			char *last = strrchr(buf, '\t');
			unsigned long v;

			if (last && sscanf(last, "%lu", &v) == 1)
				ids->nspid = (uint32_t)v;
		}
	}
	fclose(f);
	return uid ? 0 : -ESRCH;
}

/* Open /tmp/perf-NSPID.map inside PID's root: resolved there, no
 * symbolic link followed at its end, a FIFO not waited for. */
static int open_in_root(uint32_t pid, uint32_t nspid)
{
	char root[64], name[64];
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			 O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int rfd, fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	snprintf(name, sizeof(name), "tmp/perf-%u.map", nspid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = (int)syscall(SYS_openat2, rfd, name, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) /* before Linux 5.6 */
		fd = openat(rfd, name, (int)how.flags);
	if (fd < 0)
		fd = -errno;
	close(rfd);
	return fd;
}

/* Read FD's first LEN bytes (at most) into a malloc'd buffer. */
static int read_all(int fd, size_t len, char **text, size_t *got)
{
	char *buf = malloc(len + 1);

	*got = 0;
	if (!buf)
		return -ENOMEM;
	while (*got < len) {
		ssize_t n = read(fd, buf + *got, len - *got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*got += (size_t)n;
	}
	*text = buf;
	return 0;
}

int mt_perf_map_load(struct mt_perf_map *m, uint32_t pid)
{
	struct proc_ids ids = { 0 };
	struct mt_perf_map fresh;
	struct stat st;
	char *text;
	size_t len;
	int err = read_ids(pid, &ids);
	int fd = err ? err : open_in_root(pid, ids.nspid);

	if (fd < 0)
		return fd == -ESRCH || fd == -ENOMEM ? fd : -ENOENT;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != ids.euid &&
	     st.st_uid != ids.fsuid)) {
		close(fd);
		return -ENOENT;
	}
	if (m->names && st.st_size == m->size &&
	    st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec) {
		close(fd);
		return 0;
	}
	err = read_all(fd, (size_t)st.st_size < MT_PERF_MAP_MAX
				   ? (size_t)st.st_size : MT_PERF_MAP_MAX,
		       &text, &len);
	close(fd);
	if (err)
		return err;
	err = mt_perf_map_parse(&fresh, text, len);
	free(text);
	if (err)
		return err;
	mt_perf_map_free(m);
	*m = fresh;
	m->size = st.st_size;
	m->mtime = st.st_mtim;
	return 0;
}

/* --- maps of processes that exited -------------------------------------- */

struct kept {
	uint32_t pid;
	struct mt_perf_map *map;  /* NULL: it had none */
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept *kept;
static size_t nkept, kept_cap;

void mt_perf_map_keep(uint32_t pid)
{
	struct mt_perf_map *m = calloc(1, sizeof(*m));
	int err = m ? mt_perf_map_load(m, pid) : -ENOMEM;

	if (err == -ENOMEM || err == -ESRCH) {
		free(m);
		return;
	}
	if (err || m->n == 0) {
		/* None: an earlier process's map of this pid is not its. */
		mt_perf_map_free(m);
		free(m);
		m = NULL;
	}
	pthread_mutex_lock(&kept_lock);
	if (nkept == kept_cap) {
		size_t cap = kept_cap ? kept_cap * 2 : 16;
		struct kept *v = realloc(kept, cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&kept_lock);
			if (m)
				mt_perf_map_free(m);
			free(m);
			return;
		}
		kept = v;
		kept_cap = cap;
	}
	/* Never freed while running: reports may hold the older ones. */
	kept[nkept++] = (struct kept){ pid, m };
	pthread_mutex_unlock(&kept_lock);
}

const struct mt_perf_map *mt_perf_map_kept(uint32_t pid)
{
	const struct mt_perf_map *m = NULL;

	pthread_mutex_lock(&kept_lock);
	for (size_t i = nkept; i-- > 0;)
		if (kept[i].pid == pid) {
			m = kept[i].map;
			break;
		}
	pthread_mutex_unlock(&kept_lock);
	return m;
}

void mt_perf_map_forget_all(void)
{
	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < nkept; i++) {
		if (kept[i].map)
			mt_perf_map_free(kept[i].map);
		free(kept[i].map);
	}
	free(kept);
	kept = NULL;
	nkept = kept_cap = 0;
	pthread_mutex_unlock(&kept_lock);
}
