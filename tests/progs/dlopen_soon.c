/*
 * dlopen_soon.c: dlopens each library named on the command line (copies of
 * libnofp_plugin.so, so each is a file of its own) and allocates through it
 * 30 ms later, well before memtrace's next look at the mappings (ten times
 * a second): that first stack is whole only if memtrace made the
 * library's unwind table when it was mapped.  -O2 -fomit-frame-pointer.
 *
 * With DLOPEN_SOON_US=0 in its environment it allocates at once, as a
 * library's own start-up does (-- CMD holds it at ld.so's hook instead).
 *
 *   library i (from 0): 1000 + i bytes,
 *       main -> call_soon -> plugin_outer -> plugin_inner -> malloc
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
	const char *us = getenv("DLOPEN_SOON_US");
	long wait_us = us ? atol(us) : 30000;

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
		if (wait_us > 0)
			usleep((useconds_t)wait_us);
		outer = (void *(*)(size_t))dlsym(h, "plugin_outer");
		if (!outer)
			return 1;
		keep[i - 1] = call_soon(outer, 1000 + (size_t)i - 1); /* MAIN_SOON */
	}
	return (int)(soon_spill & 0);
}
