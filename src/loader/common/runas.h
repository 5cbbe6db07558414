/* SPDX-License-Identifier: MIT */
/*
 * runas.h: who memtrace works for.  Started through sudo, that is the user
 * who ran sudo (SUDO_UID, SUDO_GID, SUDO_USER): `-- CMD` runs as that user,
 * with that user's supplementary groups, unless --as-root; the files
 * memtrace writes are that user's.  Otherwise, the effective user.
 */
#ifndef MEMTRACE_RUNAS_H
#define MEMTRACE_RUNAS_H

#include <stdbool.h>
#include <sys/types.h>

struct mt_runas {
	bool sudo;       /* started by root through sudo for another user */
	uid_t uid;       /* the invoking user (sudo) or the effective ids */
	gid_t gid;
	gid_t *groups;   /* that user's supplementary groups (sudo) */
	int ngroups;
};

/*
 * Fill R from the environment: with an effective uid of 0 and SUDO_UID
 * set to another user, that user.  0, or -1 after a one-line message (a
 * malformed SUDO_UID or SUDO_GID).
 */
int mt_runas_init(struct mt_runas *r);

/*
 * In the child, before exec: become R's user (groups, gid, then uid) when
 * R->sudo.  Async-signal-safe.  0 or -errno.
 */
int mt_runas_become(const struct mt_runas *r);

void mt_runas_free(struct mt_runas *r);

#endif
