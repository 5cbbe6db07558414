/*
 * dlopen_soon.c: dlopens each library named on the command line (copies of
 * libnofp_plugin.so, or libraries built by a test, so each is a file of
 * its own) and allocates through it at once, before memtrace can have
 * made the library's unwind table: that first stack is whole only if it
 * is unwound later, on a copy (deferred unwinding).  -O2
 * -fomit-frame-pointer.
 *
 *   library i (from 0): 1000 + i bytes,
 *       main -> call_soon -> plugin_outer -> plugin_inner -> malloc
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *keep[64];
volatile unsigned long soon_spill;

NOINLINE void *call_soon(void *(*outer)(size_t), size_t n)
{
	void *p = outer(n); /* CALL_SOON */

	soon_spill++;
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 65) {
		fprintf(stderr, "usage: dlopen_soon LIB.so...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		void *(*outer)(size_t);
		void *h = dlopen(argv[i], RTLD_NOW);

		if (!h) {
			fprintf(stderr, "dlopen_soon: %s\n", dlerror());
			return 1;
		}
		outer = (void *(*)(size_t))dlsym(h, "plugin_outer");
		if (!outer)
			return 1;
		keep[i - 1] = call_soon(outer, 1000 + (size_t)i - 1); /* MAIN_SOON */
	}
	return (int)(soon_spill & 0);
}
