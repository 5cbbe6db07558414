/*
 * unwind_fixture.S: functions whose call frame information is known row
 * by row, for tests/unit/test_unwind_table.c (built into
 * libunwind_fixture.so).  Each label L_* marks the first byte a row of
 * the compiled table must start at; the test finds them by name.
 */
	.text

	/* CFA from rsp as the frame grows and shrinks; rbx saved (ignored). */
	.globl	fx_rsp
	.type	fx_rsp, @function
fx_rsp:
	.cfi_startproc
	push	%rbx
	.globl	L_rsp_pushed
L_rsp_pushed:
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	sub	$24, %rsp
	.globl	L_rsp_sub
L_rsp_sub:
	.cfi_adjust_cfa_offset 24
	nop
	add	$24, %rsp
	.globl	L_rsp_add
L_rsp_add:
	.cfi_adjust_cfa_offset -24
	pop	%rbx
	.globl	L_rsp_pop
L_rsp_pop:
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size	fx_rsp, .-fx_rsp

	/* A frame-pointer prologue: CFA from rbp, rbp saved at CFA - 16. */
	.globl	fx_rbp
	.type	fx_rbp, @function
fx_rbp:
	.cfi_startproc
	push	%rbp
	.globl	L_rbp_pushed
L_rbp_pushed:
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.globl	L_rbp_set
L_rbp_set:
	.cfi_def_cfa_register %rbp
	nop
	pop	%rbp
	.globl	L_rbp_popped
L_rbp_popped:
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	fx_rbp, .-fx_rbp

	/* No CFI at all. */
	.globl	fx_nocfi
	.type	fx_nocfi, @function
fx_nocfi:
	nop
	nop
	ret
	.size	fx_nocfi, .-fx_nocfi

	/* The outermost frame: the return address is undefined. */
	.globl	fx_end
	.type	fx_end, @function
fx_end:
	.cfi_startproc
	.cfi_undefined %rip
	xor	%ebp, %ebp
	call	fx_rsp
	hlt
	.cfi_endproc
	.size	fx_end, .-fx_end

	/* Rules the unwinder cannot follow: a CFA offset that is not a
	 * multiple of 8, then a CFA in r12. */
	.globl	fx_stop
	.type	fx_stop, @function
fx_stop:
	.cfi_startproc
	sub	$3, %rsp
	.globl	L_stop_odd
L_stop_odd:
	.cfi_adjust_cfa_offset 3
	add	$3, %rsp
	.globl	L_stop_back
L_stop_back:
	.cfi_adjust_cfa_offset -3
	mov	%rsp, %r12
	.globl	L_stop_r12
L_stop_r12:
	.cfi_def_cfa %r12, 8
	nop
	.globl	L_stop_rsp
L_stop_rsp:
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	fx_stop, .-fx_stop

	/* A lazy-binding PLT entry's CFA expression (as ld writes it):
	 * rsp + 8 + ((rip & 15) >= 11 ? 8 : 0). */
	.globl	fx_plt
	.type	fx_plt, @function
fx_plt:
	.cfi_startproc
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	nop
	ret
	.cfi_endproc
	.size	fx_plt, .-fx_plt

	/* rbp kept in another register: the caller's rbp is lost. */
	.globl	fx_lost
	.type	fx_lost, @function
fx_lost:
	.cfi_startproc
	mov	%rbp, %rbx
	.globl	L_lost_moved
L_lost_moved:
	.cfi_register %rbp, %rbx
	mov	%rbx, %rbp
	.globl	L_lost_back
L_lost_back:
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	fx_lost, .-fx_lost

	/* A frame of 70000 bytes: past 16 bits, in reach of 8-byte units. */
	.globl	fx_big
	.type	fx_big, @function
fx_big:
	.cfi_startproc
	sub	$70000, %rsp
	.globl	L_big_sub
L_big_sub:
	.cfi_adjust_cfa_offset 70000
	add	$70000, %rsp
	.globl	L_big_add
L_big_add:
	.cfi_adjust_cfa_offset -70000
	ret
	.cfi_endproc
	.size	fx_big, .-fx_big

	.section .note.GNU-stack, "", @progbits
