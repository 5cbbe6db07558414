/*
 * nolibc.c: a static program without libc (gcc -static -nostdlib): there
 * is no allocator for memtrace to probe.  Sleeps SECONDS seconds (argv[1],
 * default 30) with raw syscalls, then exits 0.
 */
#define SYS_nanosleep 35
#define SYS_exit 60

struct ts {
	long sec;
	long nsec;
};

static long syscall2(long n, long a, long b)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((used)) static void start_c(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	struct ts t = { 30, 0 };

	if (argc > 1) {
		t.sec = 0;
		for (const char *s = argv[1]; *s >= '0' && *s <= '9'; s++)
			t.sec = t.sec * 10 + (*s - '0');
	}
	syscall2(SYS_nanosleep, (long)&t, 0);
	syscall2(SYS_exit, 0, 0);
	for (;;)
		;
}

__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	xor %rbp, %rbp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call start_c\n"
	"	hlt\n");
