/* SPDX-License-Identifier: MIT */
/*
 * sym_alias_lib.c: a shared object (built without debug information, with
 * sym_alias.map) whose functions have several names at one address, the
 * way glibc's have, for tests/unit/test_sym_alias.c:
 *   __widget (GLOBAL), widget (WEAK), __GI___widget (LOCAL: hidden);
 *   vfun@V1 (GLOBAL) = __vfun_old (LOCAL), vfun@@V2 (GLOBAL) = __vfun_new;
 *   longer_public_name (GLOBAL) = lp (LOCAL, shorter);
 *   __lonely and lonely_impl, both LOCAL;
 *   fused_sized_function_name (GLOBAL, sized) = za (GLOBAL, size 0: clang's
 *   libraries have such aliases of functions folded into one).
 */
int __widget(int x);
int __vfun_old(int x);
int __vfun_new(int x);
int longer_public_name(int x);
int (*get_lonely(void))(int);

int __widget(int x)
{
	return x * 3 + 1;
}
extern __typeof(__widget) widget __attribute__((weak, alias("__widget")));
extern __typeof(__widget) __GI___widget
	__attribute__((alias("__widget"), visibility("hidden")));

int __vfun_old(int x)
{
	return x + 7;
}
__asm__(".symver __vfun_old, vfun@V1");

int __vfun_new(int x)
{
	return x + 8;
}
__asm__(".symver __vfun_new, vfun@@V2");

int longer_public_name(int x)
{
	return x * 5 - 2;
}
extern __typeof(longer_public_name) lp
	__attribute__((alias("longer_public_name"), visibility("hidden")));

static __attribute__((noinline, used)) int lonely_impl(int x)
{
	return x ^ 0x55;
}
static __typeof(lonely_impl) __lonely __attribute__((alias("lonely_impl"), used));

int (*get_lonely(void))(int)
{
	return __lonely;
}

/* Written in assembly: a C alias would get the size of its target. */
__asm__(".text\n"
	".globl fused_sized_function_name\n"
	".type fused_sized_function_name, @function\n"
	".globl za\n"
	".type za, @function\n"
	"fused_sized_function_name:\n"
	"za:\n"
	"\tleal 9(%rdi), %eax\n"
	"\tret\n"
	".size fused_sized_function_name, .-fused_sized_function_name\n");
