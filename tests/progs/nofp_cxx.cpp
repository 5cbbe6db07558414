/*
 * nofp_cxx.cpp: C++ built -O2 -fomit-frame-pointer.  operator new is
 * libstdc++'s, which calls malloc: the first frame of each allocation is
 * still the function that called new.
 *   48 bytes   main -> build_all -> make_widget -> new Widget
 *   4000 bytes main -> build_all -> make_buffer -> new int[1000]
 * Markers in comments are looked up by tests/integration/test_unwind.py.
 */
#include <cstring>

#define NOINLINE __attribute__((noinline))

struct Widget {
	long a[6];
};

Widget *volatile widget;
int *volatile buffer;
volatile unsigned long spill;

#define CLOBBER(x) __asm__ volatile("" : "+r"(x) : : "rbx", "rbp", "r12", "r13", "r14", "r15", "memory")

NOINLINE Widget *make_widget(long seed)
{
	unsigned long v = spill;
	Widget *w = new Widget; /* MAKE_WIDGET */

	CLOBBER(v);
	w->a[0] = seed;
	spill = v;
	return w;
}

NOINLINE int *make_buffer(int n)
{
	char scratch[40];
	int *b;

	memset(scratch, n, sizeof(scratch));
	b = new int[n + scratch[1] - (char)n]; /* MAKE_BUFFER */
	spill += (unsigned long)scratch[9];
	return b;
}

NOINLINE void build_all(void)
{
	unsigned long v = spill;

	widget = make_widget(7); /* BUILD_WIDGET */
	buffer = make_buffer(1000); /* BUILD_BUFFER */
	CLOBBER(v);
	spill = v;
}

int main()
{
	build_all(); /* MAIN_BUILD */
	return (int)(spill & 0);
}
