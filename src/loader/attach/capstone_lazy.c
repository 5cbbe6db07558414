// SPDX-License-Identifier: MIT
/* capstone_lazy.c: libcapstone, opened when first needed (see capstone_lazy.h). */
#include "capstone_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#define MT_STR_(x) #x
#define MT_STR(x) MT_STR_(x)
/* The soname of the capstone the headers are from (Debian: libcapstone4). */
#define CAPSTONE_SONAME "libcapstone.so." MT_STR(CS_API_MAJOR)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct mt_capstone cap;
static const struct mt_capstone *loaded;

static void load(void)
{
	void *h = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	cap.open = (__typeof__(cap.open))dlsym(h, "cs_open");
	cap.option = (__typeof__(cap.option))dlsym(h, "cs_option");
	cap.disasm = (__typeof__(cap.disasm))dlsym(h, "cs_disasm");
	cap.free = (__typeof__(cap.free))dlsym(h, "cs_free");
	cap.close = (__typeof__(cap.close))dlsym(h, "cs_close");
	cap.insn_group = (__typeof__(cap.insn_group))dlsym(h, "cs_insn_group");
	if (cap.open && cap.option && cap.disasm && cap.free && cap.close &&
	    cap.insn_group)
		loaded = &cap;
	else
		dlclose(h);
}

const struct mt_capstone *mt_capstone_get(void)
{
	pthread_once(&once, load);
	return loaded;
}
