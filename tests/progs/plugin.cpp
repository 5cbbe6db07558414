// plugin.cpp: a library dlopen'ed by dlopener.c; it brings libstdc++ (and
// its operator new) into a C program that had none.
#define NOINLINE __attribute__((noinline))

extern "C" NOINLINE void plugin_leak(void) /* DEF_PLUGIN_LEAK */
{
	for (int i = 0; i < 4; i++)
		(void)new char[300]; /* PLUGIN_NEW */
}
