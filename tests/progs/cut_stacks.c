/*
 * cut_stacks.c: built -O2 -fomit-frame-pointer.  Stacks a walk cannot
 * finish, one mode each (argv[1]), each leaking one block whose size the
 * test looks for (tests/integration/test_cut_stacks.py):
 *   deep N     recursion N frames deep (deep_rec), a block of 777 bytes
 *              at the bottom: main -> deep_rec x N -> malloc
 *   jit        malloc called from machine code in an anonymous executable
 *              mapping (as a JIT's), with no CFI and no frame pointer:
 *              rbp holds a value that is no frame's (1), 555 bytes
 *   corrupt    malloc called from a function whose return address on the
 *              stack was overwritten meanwhile (0x10, in no mapping): the
 *              stack does not unwind, 444 bytes
 *   ucontext   malloc on a stack of a ucontext (makecontext, swapcontext),
 *              as a coroutine library has it, 333 bytes
 *   bigframe   malloc called under a frame holding a 48 KiB buffer:
 *              main -> big_frame -> big_leaf -> malloc, 222 bytes (a
 *              copy of 32 KiB from big_leaf's frame does not reach
 *              big_frame's return address)
 * Each mode then frees nothing and exits 0; given "wait" last, it first
 * prints "ready" and waits for a line on stdin (for /metrics).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile keep;
volatile unsigned long spill;

/* Not a tail call: work after each call keeps the caller's frame. */
NOINLINE void *deep_rec(int n)
{
	void *p = n > 1 ? deep_rec(n - 1) : malloc(777);

	spill += (unsigned long)n;
	return p;
}

/* push %rbp; mov $1,%ebp; call *%rsi; pop %rbp; ret: calls its second
 * argument with its first, rbp 1 meanwhile (not a frame pointer). */
static const unsigned char jit_code[] = {
	0x55,                         /* push %rbp */
	0xbd, 0x01, 0x00, 0x00, 0x00, /* mov $1,%ebp */
	0xff, 0xd6,                   /* call *%rsi */
	0x5d,                         /* pop %rbp */
	0xc3,                         /* ret */
};

static int jit(void)
{
	void *(*fn)(size_t, void *(*)(size_t));
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return 1;
	memcpy(page, jit_code, sizeof(jit_code));
	fn = (void *(*)(size_t, void *(*)(size_t)))page;
	keep = fn(555, malloc);
	return 0;
}

/*
 * corrupt_alloc(size): malloc(size), with its own return address replaced
 * by 0x10 during the call (its CFI is right: the stack itself is wrong).
 */
void *corrupt_alloc(size_t n);
__asm__(".text\n"
	".globl corrupt_alloc\n"
	".type corrupt_alloc, @function\n"
	"corrupt_alloc:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %rbx, -16\n"
	"	mov 8(%rsp), %rbx\n"
	"	movq $0x10, 8(%rsp)\n"
	"	call malloc@PLT\n"
	"	mov %rbx, 8(%rsp)\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size corrupt_alloc, .-corrupt_alloc\n");

static ucontext_t main_ctx, co_ctx;

NOINLINE static void co_body(void)
{
	keep = malloc(333);
	spill++;
}

static int ucontext(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));

	if (getcontext(&co_ctx))
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_body, 0);
	return swapcontext(&main_ctx, &co_ctx) ? 1 : 0;
}

NOINLINE void *big_leaf(size_t n)
{
	void *p = malloc(n);

	spill += p != NULL; /* work after the call: not a tail call */
	return p;
}

/* 48 KiB of locals, each page written (so the stack is really there),
 * between main and the allocation. */
NOINLINE void *big_frame(size_t n)
{
	volatile char buf[48 * 1024];
	void *p;

	for (size_t i = 0; i < sizeof(buf); i += 4096)
		buf[i] = (char)i;
	p = big_leaf(n);
	spill += (unsigned long)buf[4096];
	return p;
}

static int run(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "deep") && argc > 2) {
		keep = deep_rec(atoi(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "jit"))
		return jit();
	if (!strcmp(mode, "corrupt")) {
		keep = corrupt_alloc(444);
		spill++;
		return 0;
	}
	if (!strcmp(mode, "ucontext"))
		return ucontext();
	if (!strcmp(mode, "bigframe")) {
		keep = big_frame(222);
		return 0;
	}
	fprintf(stderr, "usage: cut_stacks deep N | jit | corrupt | ucontext | bigframe [wait]\n");
	return 2;
}

int main(int argc, char **argv)
{
	int ret = run(argc, argv);
	char line[64];

	if (ret == 0 && argc > 2 && !strcmp(argv[argc - 1], "wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			ret = 1;
	}
	return ret;
}
