/*
 * jit.c: allocates from "JIT-compiled" code, as a JIT does: machine code
 * copied into an anonymous executable mapping, named only by the perf map
 * the program writes (/tmp/perf-PID.map, "START SIZE name" in hex, as
 * node --perf-basic-prof writes it).  The code (x86-64, with a frame
 * pointer) calls the function it is given:
 *
 *   jit_alloc_fn:  push %rbp; mov %rsp,%rbp; call *%rsi
 *   jit_epilogue:  pop %rbp; ret
 *
 * so the allocation's return address is jit_epilogue's first byte: the
 * frame is jit_alloc_fn's (the call is its last instruction).  It
 * allocates JIT_BLOCKS blocks of JIT_SIZE bytes from there, keeps them,
 * then one from main, and exits leaving the map for the test to remove.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define JIT_BLOCKS 3
#define JIT_SIZE 1000
#define CODE_AT 0x100

static const unsigned char code[] = {
	0x55,             /* push %rbp */
	0x48, 0x89, 0xe5, /* mov %rsp,%rbp */
	0xff, 0xd6,       /* call *%rsi */
	0x5d,             /* pop %rbp */
	0xc3,             /* ret */
};

int main(void)
{
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *(*fn)(size_t, void *(*)(size_t));
	void *keep[JIT_BLOCKS];
	char path[64];
	FILE *f;

	if (page == MAP_FAILED)
		return 1;
	memcpy(page + CODE_AT, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx 6 jit_alloc_fn\n%lx 2 jit_epilogue\n",
		(unsigned long)(page + CODE_AT), (unsigned long)(page + CODE_AT + 6));
	if (fclose(f) != 0)
		return 1;
	fn = (void *(*)(size_t, void *(*)(size_t)))(void *)(page + CODE_AT);
	for (int i = 0; i < JIT_BLOCKS; i++)
		keep[i] = fn(JIT_SIZE, malloc);
	void *mine = malloc(77);

	printf("%p %p\n", keep[0], mine);
	return 0;
}
