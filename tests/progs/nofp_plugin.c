/*
 * nofp_plugin.c: libnofp_plugin.so, dlopened by nofp.c; -O2
 * -fomit-frame-pointer.  plugin_outer -> plugin_inner -> malloc.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

volatile unsigned long plugin_spill;

#define CLOBBER(x) __asm__ volatile("" : "+r"(x) : : "rbx", "rbp", "r12", "r13", "r14", "r15", "memory")

NOINLINE void *plugin_inner(size_t n)
{
	unsigned long v = plugin_spill;
	void *p = malloc(n); /* PLUGIN_INNER */

	CLOBBER(v);
	plugin_spill = v + 1;
	return p;
}

NOINLINE void *plugin_outer(size_t n)
{
	char buf[48];
	void *p;

	for (int i = 0; i < 48; i++)
		buf[i] = (char)(n + (size_t)i);
	p = plugin_inner(n + (size_t)(buf[0] - (char)n)); /* PLUGIN_OUTER */
	plugin_spill += (unsigned long)buf[7];
	return p;
}
