/* SPDX-License-Identifier: MIT */
/* fd_limit.h: room for the descriptors a run keeps open. */
#ifndef MEMTRACE_FD_LIMIT_H
#define MEMTRACE_FD_LIMIT_H

/*
 * Raise the soft limit of open files to the hard one: following many
 * processes (their links) or the whole machine (a descriptor per mapped
 * file, in the registry) needs more than 1,024.  Nothing in memtrace uses
 * select() (libmicrohttpd is started with poll()), so descriptors above
 * FD_SETSIZE are fine.
 */
void mt_fd_limit_raise(void);

#endif
