// SPDX-License-Identifier: MIT
/* http_listen.c: the socket of --http, bound first (http_listen.h). */
#include "http_listen.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "errmsg.h"
#include "net_addr.h"

static struct mt_http_listener listener = { .fd = -1 };
static bool taken;

/* The unix socket's file, removed at exit by the process that made it,
 * if it is still that file. */
static struct {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;
	ino_t ino;
	pid_t pid;
} made;

static void remove_socket(void)
{
	struct stat st;

	if (!made.path[0] || getpid() != made.pid)
		return;
	if (lstat(made.path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == made.dev && st.st_ino == made.ino)
		unlink(made.path);
	made.path[0] = '\0';
}

/* Is PATH a socket of UID's (or ours) that nobody listens on? */
static bool stale(const struct sockaddr_un *un, socklen_t len, uid_t uid)
{
	struct stat st;
	int fd, ret;

	if (lstat(un->sun_path, &st) || !S_ISSOCK(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != uid))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ret = connect(fd, (const struct sockaddr *)un, len);
	close(fd);
	return ret < 0 && errno == ECONNREFUSED;
}

/* Bind FD to the unix socket of O: mode 0600 (the umask may narrow it),
 * UID's. */
static int bind_unix(int fd, const char *opt, const struct sockaddr_un *un,
		     socklen_t len, uid_t uid, gid_t gid)
{
	mode_t old = umask(0177);
	struct stat st;
	int ret, err;

	umask(old | 0177);
	ret = bind(fd, (const struct sockaddr *)un, len);
	if (ret && errno == EADDRINUSE && stale(un, len, uid) &&
	    unlink(un->sun_path) == 0)
		ret = bind(fd, (const struct sockaddr *)un, len);
	err = errno;
	umask(old);
	if (ret) {
		if (err == EADDRINUSE)
			return mt_fail("--http %s: %s exists (a file, or a socket in use); remove it or pick another path",
				       opt, un->sun_path);
		return mt_fail("--http %s: cannot make the socket: %s", opt,
			       strerror(err));
	}
	if (lstat(un->sun_path, &st))
		return mt_fail("--http %s: %s", opt, strerror(errno));
	snprintf(made.path, sizeof(made.path), "%s", un->sun_path);
	made.dev = st.st_dev;
	made.ino = st.st_ino;
	made.pid = getpid();
	atexit(remove_socket);
	/* Under sudo the socket is its user's (connecting needs write
	 * permission on the file: 0600 lets that user, and root, in). */
	if (uid != (uid_t)-1 && lchown(un->sun_path, uid, gid))
		return mt_fail("--http %s: cannot give the socket to uid %u: %s",
			       opt, (unsigned)uid, strerror(errno));
	return 0;
}

int mt_http_listen(const struct mt_options *o, uid_t uid, gid_t gid)
{
	struct mt_http_listener *l = &listener;
	char err[256], where[160];
	int fd, one = 1, zero = 0, family;

	if (!o->http || l->fd >= 0)
		return 0;
	if (mt_listen_addr(o->http, &l->addr, &l->len, err, sizeof(err)))
		return mt_fail("--http: %s", err);
	family = l->addr.ss_family;
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return mt_fail("--http %s: %s", o->http, strerror(errno));
	if (family == AF_UNIX) {
		if (bind_unix(fd, o->http, (const struct sockaddr_un *)&l->addr,
			      l->len, uid, gid)) {
			close(fd);
			return 1;
		}
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* [::]: IPv4 peers too, whatever net.ipv6.bindv6only says. */
		if (family == AF_INET6 &&
		    mt_addr_is_any((const struct sockaddr *)&l->addr))
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		if (bind(fd, (const struct sockaddr *)&l->addr, l->len)) {
			int e = errno;

			close(fd);
			return mt_fail("--http: cannot listen on %s: %s", o->http,
				       strerror(e));
		}
		l->len = sizeof(l->addr);
		getsockname(fd, (struct sockaddr *)&l->addr, &l->len);
	}
	if (listen(fd, 64)) {
		int e = errno;

		close(fd);
		remove_socket();
		return mt_fail("--http: cannot listen on %s: %s", o->http,
			       strerror(e));
	}
	l->fd = fd;
	if (family != AF_UNIX && !o->http_token_file &&
	    !mt_addr_is_loopback((const struct sockaddr *)&l->addr)) {
		mt_addr_str((const struct sockaddr *)&l->addr, where,
			    sizeof(where));
		fprintf(stderr, "memtrace: warning: --http %s: every host that can reach %s can read the profiles (paths, functions, load addresses); --http-token-file or --http-allow limits who\n",
			o->http, where);
	}
	return 0;
}

struct mt_http_listener *mt_http_listener_take(void)
{
	if (listener.fd < 0 || taken)
		return NULL;
	taken = true;
	return &listener;
}
