// SPDX-License-Identifier: MIT
/* privs.c: a capability check through libcap. */
#include "privs.h"

#include <sys/capability.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has(cap_t caps, cap_value_t v)
{
	cap_flag_value_t on = CAP_CLEAR;

	return cap_get_flag(caps, v, CAP_EFFECTIVE, &on) == 0 && on == CAP_SET;
}

bool mt_privileged(void)
{
	cap_t caps = cap_get_proc();
	bool ok;

	if (!caps)
		return geteuid() == 0;
	ok = has(caps, CAP_SYS_ADMIN) ||
	     (has(caps, CAP_BPF) && has(caps, CAP_PERFMON));
	cap_free(caps);
	return ok;
}
