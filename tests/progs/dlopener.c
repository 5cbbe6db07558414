/*
 * dlopener.c: a C program (no libstdc++) that dlopens libplugin.so (C++),
 * waits 0.5 s (memtrace -p looks for new libraries ten times a second), and
 * calls plugin_leak: 4 x new char[300], leaked.  `dlopener PLUGIN now`
 * calls it at once (-- CMD holds the process at ld.so's hook instead).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void (*leak)(void);
	void *h;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 1;
	if (argc < 3)
		usleep(500000);
	leak = (void (*)(void))dlsym(h, "plugin_leak");
	if (!leak)
		return 1;
	leak(); /* CALL_PLUGIN */
	return 0;
}
