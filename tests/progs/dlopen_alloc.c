/*
 * dlopen_alloc.c: says "ready", waits for a line on standard input, then
 * dlopens the allocator library named by argv[1] (libtcmalloc_minimal.so.4;
 * jemalloc cannot be dlopened: static TLS) and at
 * once calls its malloc from use_lib_malloc: 7 x 777 bytes, kept.  Says
 * "done", waits for a line, exits.  With memtrace -p attached before the
 * dlopen, the seven calls are traced only if the library's malloc was
 * probed before it was mapped (memtrace's look at a new library comes
 * later than these calls).
 */
#include <dlfcn.h>
#include <stdio.h>

static void *kept[7];

void *use_lib_malloc(void *(*lib_malloc)(size_t))
{
	for (int i = 0; i < 7; i++)
		kept[i] = lib_malloc(777); /* LIB_MALLOC */
	return kept[0];
}

int main(int argc, char **argv)
{
	char line[16];
	void *h, *sym;

	if (argc < 2)
		return 2;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	sym = h ? dlsym(h, "malloc") : NULL;
	if (!sym)
		return 1;
	use_lib_malloc((void *(*)(size_t))sym);
	printf("done\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return 0;
}
