// SPDX-License-Identifier: MIT
/* runas.c: the invoking user under sudo, and becoming that user. */
#include "runas.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decimal.h"

/* A decimal id from the environment variable NAME: 0, 1 (unset) or -1. */
static int env_id(const char *name, unsigned *out)
{
	const char *s = getenv(name);
	unsigned long v;

	if (!s || !*s)
		return 1;
	if (mt_parse_decimal(s, UINT_MAX - 1, &v)) {
		fprintf(stderr, "memtrace: %s='%s' is not a user or group id\n",
			name, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

/* The supplementary groups of USER (SUDO_USER, or looked up by uid). */
static int user_groups(struct mt_runas *r)
{
	const char *user = getenv("SUDO_USER");
	struct passwd *pw = NULL;
	int n = 32;

	if (!user || !*user) {
		pw = getpwuid(r->uid);
		user = pw ? pw->pw_name : NULL;
	}
	if (!user) /* no such user: its primary group alone */
		n = 0;
	for (;;) {
		gid_t *g = realloc(r->groups, (size_t)(n > 0 ? n : 1) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		r->groups = g;
		if (!user) {
			g[0] = r->gid;
			r->ngroups = 1;
			return 0;
		}
		r->ngroups = n;
		if (getgrouplist(user, r->gid, g, &r->ngroups) >= 0)
			return 0;
		if (r->ngroups <= n) /* no growth asked for: give up */
			return -EINVAL;
		n = r->ngroups;
	}
}

int mt_runas_init(struct mt_runas *r)
{
	unsigned uid = 0, gid = 0;
	int u;

	memset(r, 0, sizeof(*r));
	r->uid = geteuid();
	r->gid = getegid();
	if (geteuid() != 0)
		return 0;
	u = env_id("SUDO_UID", &uid);
	if (u < 0 || (u == 0 && env_id("SUDO_GID", &gid) < 0))
		return -1;
	if (u != 0 || uid == 0)
		return 0;
	if (!getenv("SUDO_GID")) {
		struct passwd *pw = getpwuid((uid_t)uid);

		gid = pw ? (unsigned)pw->pw_gid : uid;
	}
	r->sudo = true;
	r->uid = (uid_t)uid;
	r->gid = (gid_t)gid;
	if (user_groups(r)) {
		fprintf(stderr, "memtrace: cannot read the groups of uid %u\n", uid);
		mt_runas_free(r);
		return -1;
	}
	return 0;
}

int mt_runas_become(const struct mt_runas *r)
{
	if (!r || !r->sudo)
		return 0;
	if (setgroups((size_t)r->ngroups, r->groups) || setgid(r->gid) ||
	    setuid(r->uid))
		return -errno;
	return 0;
}

void mt_runas_free(struct mt_runas *r)
{
	free(r->groups);
	r->groups = NULL;
	r->ngroups = 0;
}
