/*
 * sym_lookup_lib.S: a shared object (linked without libc, never run: its
 * "code" is filler bytes) whose symbol table has the cases libdwfl's
 * address lookup treats apart, for tests/unit/test_sym_index.c, which
 * checks mt_sym_index_containing against dwfl_module_addrinfo at every
 * address of it (this file, and a stripped copy: .dynsym only).
 */
	.text

/* A sized function nested in a larger one: the nearer one contains. */
	.globl	outer
	.type	outer, @function
outer:
	.skip	16, 0xcc
	.globl	inner
	.type	inner, @function
inner:
	.skip	16, 0xcc
	.size	inner, 16
	.skip	32, 0xcc
	.size	outer, 64

/* Three names at one address: bindings and sizes break the tie. */
	.globl	tie_global
	.type	tie_global, @function
	.weak	tie_weak
	.type	tie_weak, @function
	.type	tie_local, @function
tie_global:
tie_weak:
tie_local:
	.skip	40, 0xcc
	.size	tie_global, 32
	.size	tie_weak, 24
	.size	tie_local, 40

/* A nearer weak function inside a farther global one. */
	.globl	far_global
	.type	far_global, @function
	.weak	near_weak
	.type	near_weak, @function
far_global:
	.skip	8, 0xcc
near_weak:
	.skip	8, 0xcc
	.size	near_weak, 8
	.skip	8, 0xcc
	.size	far_global, 24

/* A size-0 label after a sized function: names what follows it. */
	.globl	sized_before
	.type	sized_before, @function
sized_before:
	.skip	16, 0xcc
	.size	sized_before, 16
	.globl	label_after
	.type	label_after, @function
label_after:
	.skip	16, 0xcc

/* Local ones: found in the second pass, when no global one fits. */
	.type	local_sized, @function
local_sized:
	.skip	16, 0xcc
	.size	local_sized, 16
local_label:
	.skip	16, 0xcc

/* A label inside a sized function's extent: the function contains. */
	.globl	spanning
	.type	spanning, @function
spanning:
	.skip	8, 0xcc
	.globl	label_inside
label_inside:
	.skip	24, 0xcc
	.size	spanning, 32
	.skip	16, 0xcc

/* A global label and a local sized function at one address. */
	.globl	label_global_at
	.type	label_global_at, @function
	.type	sized_local_at, @function
label_global_at:
sized_local_at:
	.skip	16, 0xcc
	.size	sized_local_at, 16

/* A size-0 function alias of a sized one (clang's folded functions). */
	.globl	a_sized_function_with_a_longer_name
	.type	a_sized_function_with_a_longer_name, @function
	.globl	zero_alias
	.type	zero_alias, @function
a_sized_function_with_a_longer_name:
zero_alias:
	.skip	16, 0xcc
	.size	a_sized_function_with_a_longer_name, 16

/* A label last in .text: the next section's addresses are not its. */
	.globl	last_label
	.type	last_label, @function
last_label:
	.skip	16, 0xcc

/* Another executable section (not merged into .text by the linker). */
	.section othertext, "ax", @progbits
	.skip	16, 0xcc
	.globl	other_sized
	.type	other_sized, @function
other_sized:
	.skip	16, 0xcc
	.size	other_sized, 16

/* Data, and a symbol outside every section. */
	.data
	.globl	data_object
	.type	data_object, @object
data_object:
	.skip	16, 0
	.size	data_object, 16
	.globl	data_label
data_label:
	.skip	16, 0

	.globl	absolute
	.set	absolute, 0x300

	.section .note.GNU-stack, "", @progbits
