/* SPDX-License-Identifier: MIT */
/*
 * http_listen.h: the socket --http listens on, made before anything else
 * starts (a port in use is an error before CMD is started or a process
 * is touched).  A TCP address ([::] bound dual-stack: IPv4 peers too), or
 * unix:PATH: a socket file made without following a symlink (bind()
 * makes it or fails), mode 0600 (narrower if the umask says so), owned
 * by the user who ran sudo, and removed at exit if it is still the one
 * made; a stale socket of ours nobody listens on is replaced.
 */
#ifndef MEMTRACE_HTTP_LISTEN_H
#define MEMTRACE_HTTP_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "options.h"

struct mt_http_listener {
	int fd;                        /* listening; -1: none */
	struct sockaddr_storage addr;  /* as bound (PORT 0: the one chosen) */
	socklen_t len;
};

/*
 * Bind o->http and listen (nothing when o->http is NULL); UID, GID: the
 * owner a unix socket gets (sudo's user), or -1.  Says on standard error
 * when any host that can reach a TCP address can read the profiles.  0,
 * or 1 after a one-line message.  Call before any thread is started (the
 * umask is changed for the bind).
 */
int mt_http_listen(const struct mt_options *o, uid_t uid, gid_t gid);

/* The socket mt_http_listen made, or NULL; its fd is the caller's then
 * (MHD_stop_daemon closes it). */
struct mt_http_listener *mt_http_listener_take(void);

#endif
