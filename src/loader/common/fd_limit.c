// SPDX-License-Identifier: MIT
/* fd_limit.c: room for the descriptors a run keeps open (fd_limit.h). */
#include "fd_limit.h"

#include <sys/resource.h>

void mt_fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
