// SPDX-License-Identifier: MIT
/*
 * prologue.c: move an entry uprobe from a function's first instruction to
 * the first one the kernel emulates (x86-64).
 *
 * What the kernel does (arch/x86/kernel/uprobes.c, 6.x): a probed
 * instruction is either emulated in the breakpoint handler or copied to an
 * out-of-line slot and single-stepped, which costs a second trap.
 * Emulated: branch_setup_xol_ops() - NOPs, jmp rel8/rel32, jcc rel8/rel32,
 * call rel32, the branches without a 66 prefix; and push_setup_xol_ops() -
 * push %reg encoded 50-57 or 41 50-57 (no other prefix).  NOPs: 90 always;
 * 0f 1f /0 (nopl/nopw) too since insn_is_nop() was generalised (measured
 * emulated on 6.18; an older kernel single-steps it: slower, not wrong).
 * This file recognises a subset of those, exactly.
 *
 * Safety argument.  The probe is moved from the entry E to a point P only
 * when all of these hold:
 *  1. Every instruction in [E, P) is straight-line code that writes no
 *     memory, and no register but the flags and registers that are
 *     neither rsp, rbp nor one of the function's arguments (which
 *     registers those are comes from its name: malloc rdi; calloc rdi and
 *     rsi; _ZdlPvm rdi and rsi; unknown: all six).  So at P the
 *     arguments, the stack pointer, the return address at [rsp] and the
 *     frame pointer are what they were at E: all the entry program reads
 *     (the stack is walked at the return).  Loads are fine (%rip- and
 *     %fs-relative too): one that faults faults untraced as well.  The
 *     instructions accepted are a list (mov, movzx/movsx, lea, the ALU
 *     operations, shifts, cmov, setcc, imul, not, neg, cmp, test, endbr64);
 *     anything else ends the scan, as does the first emulated instruction,
 *     within MAX_INSNS instructions.  The probe fires before the
 *     instruction at P executes, so P itself may be a push or a branch:
 *     the first branch is where the scan stops at the latest.
 *  2. The only branch skipped is, for free-like kinds (FREE, DELETE), a
 *     `je`/`jz` that directly follows `test %rdi,%rdi` (rdi unchanged since
 *     E by rule 1) and whose target is a `ret` reached through NOPs only:
 *     the path it leaves by frees nothing and calls nothing (no call, no
 *     jump: a tail jump could free).  So free(NULL) no longer reaches the
 *     probe.  Any other branch ends the scan (the probe may sit on it:
 *     branches are emulated).
 *  3. No direct branch anywhere in the file's executable segments targets
 *     (E, P], and no symbol is defined there: P is reached only by falling
 *     through from E, so once per call (a loop back into (E, P] would make
 *     it fire twice).  The byte-wise search finds every rel8/rel32 jmp,
 *     jcc, loop/jrcxz and call, even ones at misaligned offsets (false hits
 *     only cost the optimisation), but for the bytes of [E, P) themselves:
 *     decoded from E, none is a branch, and a misaligned reading of them
 *     runs only after a jump into (E, P], looked for anyway (jemalloc's
 *     free has an `and $imm,%rcx` whose e1 byte reads as `loope` back into
 *     its own prologue).  Indirect jumps are not followed: a jump
 *     table case or computed goto landing on one of a function's first few
 *     instructions is assumed away.
 * When in doubt (unknown instruction, short file, non x86-64 ELF) the
 * answer is E itself.
 */
#include "prologue.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "memleak.h"

/* How many instructions from the entry may be looked at or skipped. */
#define MAX_INSNS 24
/* How many NOPs may stand before the ret a NULL check jumps to. */
#define MAX_NOPS 8
/* Bytes read at the entry: the prologue and a NULL check's target. */
#define CODE_WINDOW 4096
/* Executable segments are searched for branches this many bytes at a time. */
#define SCAN_CHUNK (1U << 20)
/* Longest direct branch (0f 8x rel32): chunks overlap by one less. */
#define MAX_BRANCH 6
#define SYM_BATCH 1024

/* Registers by x86 number: rax 0, rcx 1, rdx 2, rbx 3, rsp 4, rbp 5,
 * rsi 6, rdi 7, r8 8, ..., r15 15. */
#define REG_RSP 4
#define REG_RBP 5

/* The integer argument registers of the SysV x86-64 ABI, in order. */
static const unsigned arg_regs[6] = { 7, 6, 2, 1, 8, 9 };

/*
 * The registers no skipped instruction may write (a bit per register):
 * rsp, rbp and the function's first NARGS argument registers (all six when
 * NARGS is out of range: unknown).
 */
static unsigned kept_regs(int nargs)
{
	unsigned m = 1U << REG_RSP | 1U << REG_RBP;

	if (nargs < 0 || nargs > 6)
		nargs = 6;
	for (int i = 0; i < nargs; i++)
		m |= 1U << arg_regs[i];
	return m;
}

static int32_t rel32(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

	return (int32_t)v;
}

/*
 * Bytes taken by a ModRM byte with the SIB byte and displacement it
 * implies (64-bit addressing), or 0 when AVAIL is too short.
 */
static size_t modrm_len(const uint8_t *p, size_t avail)
{
	unsigned mod, rm;
	size_t n = 1;

	if (avail < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (avail < 2)
			return 0;
		n = 2;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4; /* SIB without base: disp32 */
	} else if (mod == 0 && rm == 5) {
		n += 4; /* rip-relative disp32 */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n <= avail ? n : 0;
}

/* An insn_is_nop() NOP: [66]* 90, or [66]* 0f 1f /0.  Its length, or 0. */
static size_t nop_len(const uint8_t *c, size_t len)
{
	size_t i = 0, m;

	while (i < len && i < 4 && c[i] == 0x66)
		i++;
	if (i < len && c[i] == 0x90)
		return i + 1;
	if (i + 2 < len && c[i] == 0x0f && c[i + 1] == 0x1f &&
	    ((c[i + 2] >> 3) & 7) == 0) {
		m = modrm_len(c + i + 2, len - i - 2);
		return m ? i + 2 + m : 0;
	}
	return 0;
}

/* push %reg the way push_setup_xol_ops() takes it: 50-57 or 41 50-57. */
static size_t push_len(const uint8_t *c, size_t len)
{
	if (len >= 1 && c[0] >= 0x50 && c[0] <= 0x57)
		return 1;
	if (len >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
		return 2;
	return 0;
}

/* A relative jmp, jcc or call without prefixes: its length, or 0. */
static size_t branch_len(const uint8_t *c, size_t len)
{
	size_t n = 0;

	if (len < 1)
		return 0;
	if (c[0] == 0xeb || (c[0] >= 0x70 && c[0] <= 0x7f))
		n = 2;
	else if (c[0] == 0xe8 || c[0] == 0xe9)
		n = 5;
	else if (len >= 2 && c[0] == 0x0f && (c[1] & 0xf0) == 0x80)
		n = 6;
	return n <= len ? n : 0;
}

size_t mt_prologue_emulated_len(const uint8_t *code, size_t len)
{
	size_t n = push_len(code, len);

	if (!n)
		n = nop_len(code, len);
	if (!n)
		n = branch_len(code, len);
	return n;
}

/*
 * The instructions that may be skipped (rule 1), by what they write
 * besides the flags: nothing (compares, tests), ModRM.reg, ModRM.rm (in
 * register form only: a memory destination is refused), the register in
 * the opcode's low bits (mov $imm), or rax or rdx implicitly (cltq, cqto).
 */
enum dst { D_FLAGS, D_REG, D_RM, D_OPREG, D_RAX, D_RDX };

/* Immediates: none, 8 bits, 16/32 by operand size, or 16/32/64 (b8+r). */
enum imm { I_0, I_8, I_Z, I_V };

struct form {
	enum dst dst;
	enum imm imm;
	bool modrm;   /* a ModRM byte follows the opcode */
	bool byte;    /* the destination is an 8-bit register */
	bool mem;     /* lea: the ModRM operand must be a memory one */
};

/*
 * The form of one-byte opcode OP (REG3: its ModRM.reg, when it has one):
 * false for anything not known to be harmless (stores aside, which the
 * caller refuses by their ModRM): push, pop, call, ret, xchg, string
 * operations, mul and div (implicit rdx:rax, and div traps), ...
 */
static bool form1(uint8_t op, unsigned reg3, struct form *f)
{
	*f = (struct form){ .modrm = true, .byte = !(op & 1) };
	if (op < 0x40 && (op & 7) <= 5) {
		/* add, or, adc, sbb, and, sub, xor, cmp: 8 forms each */
		bool cmp = op >> 3 == 7;

		switch (op & 7) {
		case 0: case 1: f->dst = cmp ? D_FLAGS : D_RM; break;
		case 2: case 3: f->dst = cmp ? D_FLAGS : D_REG; break;
		default: /* al/eax, imm */
			f->dst = cmp ? D_FLAGS : D_RAX;
			f->imm = (op & 7) == 4 ? I_8 : I_Z;
			f->modrm = false;
			break;
		}
		return true;
	}
	f->byte = false;
	switch (op) {
	case 0x63: f->dst = D_REG; return true;               /* movslq */
	case 0x69: f->dst = D_REG; f->imm = I_Z; return true; /* imul $z */
	case 0x6b: f->dst = D_REG; f->imm = I_8; return true; /* imul $8 */
	case 0x80: case 0x81: case 0x83: /* group 1: alu $imm; /7 is cmp */
		f->dst = reg3 == 7 ? D_FLAGS : D_RM;
		f->imm = op == 0x81 ? I_Z : I_8;
		f->byte = op == 0x80;
		return true;
	case 0x84: case 0x85: f->dst = D_FLAGS; return true;  /* test */
	case 0x88: case 0x89: f->dst = D_RM; f->byte = op == 0x88; return true;
	case 0x8a: case 0x8b: f->dst = D_REG; f->byte = op == 0x8a; return true;
	case 0x8d: f->dst = D_REG; f->mem = true; return true; /* lea */
	case 0x98: f->dst = D_RAX; f->modrm = false; return true; /* cltq */
	case 0x99: f->dst = D_RDX; f->modrm = false; return true; /* cqto */
	case 0xc0: case 0xc1: /* group 2 (shifts, rotates), $imm8 */
		f->dst = D_RM; f->imm = I_8; f->byte = op == 0xc0;
		return true;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: /* group 2, by 1 or %cl */
		f->dst = D_RM; f->byte = !(op & 1);
		return true;
	case 0xc6: case 0xc7: /* mov $imm, r/m (/0 only) */
		f->dst = D_RM; f->imm = op == 0xc6 ? I_8 : I_Z;
		f->byte = op == 0xc6;
		return reg3 == 0;
	case 0xf6: case 0xf7: /* group 3: test $imm, not, neg */
		f->byte = op == 0xf6;
		if (reg3 <= 1) {
			f->dst = D_FLAGS;
			f->imm = op == 0xf6 ? I_8 : I_Z;
			return true;
		}
		f->dst = D_RM;
		return reg3 == 2 || reg3 == 3;
	default:
		break;
	}
	if (op >= 0xb0 && op <= 0xbf) { /* mov $imm, %reg */
		f->dst = D_OPREG;
		f->modrm = false;
		f->byte = op < 0xb8;
		f->imm = op < 0xb8 ? I_8 : I_V;
		return true;
	}
	return false;
}

/* The form of two-byte opcode 0f OP: cmovcc, setcc, imul, movz/movs. */
static bool form2(uint8_t op, struct form *f)
{
	*f = (struct form){ .modrm = true, .dst = D_REG };
	if ((op & 0xf0) == 0x40 || op == 0xaf || op == 0xb6 || op == 0xb7 ||
	    op == 0xbe || op == 0xbf)
		return true;
	if ((op & 0xf0) == 0x90) { /* setcc r/m8 */
		f->dst = D_RM;
		f->byte = true;
		return true;
	}
	return false;
}

/* The register FORM writes, by x86 number; -1 for none, -2 for memory. */
static int dest_reg(const struct form *f, uint8_t rex, uint8_t op,
		    uint8_t modrm)
{
	int r;

	switch (f->dst) {
	case D_FLAGS: return -1;
	case D_RAX: return 0;
	case D_RDX: return 2;
	case D_REG: r = (int)(((modrm >> 3) & 7U) | (rex & 4U) << 1); break;
	case D_OPREG: r = (int)((op & 7U) | (rex & 1U) << 3); break;
	default: /* D_RM */
		if (modrm >> 6 != 3)
			return -2;
		r = (int)((modrm & 7U) | (rex & 1U) << 3);
		break;
	}
	/* Without REX, 8-bit registers 4-7 are %ah, %ch, %dh, %bh. */
	if (f->byte && !rex && r >= 4 && r < 8)
		r -= 4;
	return r;
}

/*
 * Length of an instruction that may be skipped (rule 1), 0 for any other:
 * endbr64, or one of the forms above, with an %fs/%gs prefix (loads), an
 * operand-size prefix (one-byte opcodes only) and a REX prefix accepted,
 * writing no memory and no register of KEPT (a bit per register).
 */
static size_t skippable_len(const uint8_t *c, size_t len, unsigned kept)
{
	size_t i = 0, m = 0, imm = 0;
	bool seg = false, opsize = false;
	uint8_t rex = 0, op, modrm = 0;
	struct form f;
	bool ok;
	int r;

	if (len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e &&
	    c[3] == 0xfa)
		return 4; /* endbr64 */
	for (; i < len && i < 2; i++) {
		if ((c[i] == 0x64 || c[i] == 0x65) && !seg)
			seg = true;
		else if (c[i] == 0x66 && !opsize)
			opsize = true;
		else
			break;
	}
	if (i < len && (c[i] & 0xf0) == 0x40)
		rex = c[i++];
	if (i >= len)
		return 0;
	op = c[i++];
	if (op == 0x0f) {
		if (i >= len || opsize)
			return 0;
		ok = form2(c[i++], &f);
	} else {
		ok = form1(op, i < len ? (c[i] >> 3) & 7U : 0, &f);
	}
	if (!ok)
		return 0;
	if (f.modrm) {
		m = modrm_len(c + i, len - i);
		if (!m)
			return 0;
		modrm = c[i];
		if (f.mem && modrm >> 6 == 3)
			return 0;
	}
	switch (f.imm) {
	case I_0: imm = 0; break;
	case I_8: imm = 1; break;
	case I_Z: imm = opsize ? 2 : 4; break;
	default: imm = (rex & 8U) ? 8 : opsize ? 2 : 4; break;
	}
	if (i + m + imm > len)
		return 0;
	r = dest_reg(&f, rex, op, modrm);
	if (r == -2 || (r >= 0 && (kept >> r) & 1U))
		return 0;
	return i + m + imm;
}

/* The path at CODE[AT]: a ret (or rep ret) after NOPs only. */
static bool returns_at_once(const uint8_t *code, size_t len, size_t at)
{
	for (int k = 0; k < MAX_NOPS && at < len; k++) {
		size_t n;

		if (code[at] == 0xc3)
			return true;
		if (at + 1 < len && code[at] == 0xf3 && code[at + 1] == 0xc3)
			return true;
		n = nop_len(code + at, len - at);
		if (!n)
			return false;
		at += n;
	}
	return false;
}

/*
 * True when the je/jz at CODE[AT] directly follows `test %rdi,%rdi` at
 * CODE[PREV] and jumps to a plain return (rule 2 above).
 */
static bool null_check_at(const uint8_t *code, size_t len, size_t prev,
			  size_t at)
{
	size_t n = branch_len(code + at, len - at);
	int64_t target;

	if (prev + 3 != at || code[prev] != 0x48 || code[prev + 1] != 0x85 ||
	    code[prev + 2] != 0xff)
		return false;
	if (n == 2 && code[at] == 0x74)
		target = (int64_t)(at + n) + (int8_t)code[at + 1];
	else if (n == 6 && code[at] == 0x0f && code[at + 1] == 0x84)
		target = (int64_t)(at + n) + rel32(code + at + 2);
	else
		return false;
	return target >= 0 && (uint64_t)target < len &&
	       returns_at_once(code, len, (size_t)target);
}

/*
 * Walk from CODE[0] over skippable instructions to the first emulated one;
 * with NULL_SKIP, go on past a NULL check's je (remembered as the answer
 * should nothing emulated follow it).
 */
static bool scan(const uint8_t *code, size_t len, bool null_skip,
		 unsigned kept, size_t *advance)
{
	size_t pos = 0, prev = SIZE_MAX, je_at = SIZE_MAX;

	for (int k = 0; k < MAX_INSNS && pos < len; k++) {
		size_t n = mt_prologue_emulated_len(code + pos, len - pos);

		if (n && null_skip && je_at == SIZE_MAX && prev != SIZE_MAX &&
		    null_check_at(code, len, prev, pos)) {
			je_at = pos;
		} else if (n) {
			*advance = pos;
			return true;
		} else {
			n = skippable_len(code + pos, len - pos, kept);
			if (!n)
				break;
		}
		prev = pos;
		pos += n;
	}
	*advance = je_at != SIZE_MAX ? je_at : 0;
	return je_at != SIZE_MAX;
}

static bool free_like(int kind)
{
	return kind == MT_CALL_FREE || kind == MT_CALL_DELETE;
}

bool mt_prologue_scan(const uint8_t *code, size_t len, int kind, int nargs,
		      size_t *advance)
{
	return scan(code, len, free_like(kind), kept_regs(nargs), advance);
}

/* pread until N bytes or end of file: bytes read, or -errno. */
static ssize_t read_at(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static bool read_exact(int fd, void *buf, size_t n, uint64_t off)
{
	return read_at(fd, buf, n, off) == (ssize_t)n;
}

/* An x86-64 ELF file's header and program headers (*PH to free). */
static bool load_elf(int fd, Elf64_Ehdr *eh, Elf64_Phdr **ph)
{
	size_t sz;

	*ph = NULL;
	if (!read_exact(fd, eh, sizeof(*eh), 0) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    eh->e_phnum >= PN_XNUM)
		return false;
	sz = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	*ph = malloc(sz);
	if (*ph && read_exact(fd, *ph, sz, eh->e_phoff))
		return true;
	free(*ph);
	*ph = NULL;
	return false;
}

/*
 * Rule 3 is checked for all the functions of a file in one pass over it.
 * Each candidate place is a range (LO, HI] of virtual addresses, LO the
 * function's entry, HI the probe: HIT once a branch or symbol lands in it.
 */
struct range {
	uint64_t lo, hi;
	bool hit;
};

struct ranges {
	struct range *r;
	size_t n;
	uint64_t min, max; /* bounds of all the ranges, for a quick "no" */
};

/*
 * A branch (or symbol: FROM 0) at FROM to T.  A branch whose first byte
 * lies in a range's own skipped bytes [LO, HI) does not count for that
 * range: those bytes are instructions decoded from LO on, none a branch,
 * so such a "branch" is a misaligned reading of them, which runs only if
 * something jumps into (LO, HI], which is looked for anyway.
 */
static void mark(struct ranges *rs, uint64_t from, uint64_t t)
{
	if (t <= rs->min || t > rs->max)
		return;
	for (size_t k = 0; k < rs->n; k++)
		if (t > rs->r[k].lo && t <= rs->r[k].hi &&
		    (from < rs->r[k].lo || from >= rs->r[k].hi))
			rs->r[k].hit = true;
}

/* Mark the target of any direct branch B[I] (address VA) could start. */
static void mark_branch_at(struct ranges *rs, const uint8_t *b, size_t n,
			   size_t i, uint64_t va)
{
	uint8_t op = b[i];

	if ((op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
	     (op >= 0xe0 && op <= 0xe3)) && i + 2 <= n)
		mark(rs, va, va + 2 + (uint64_t)(int64_t)(int8_t)b[i + 1]);
	if ((op == 0xe8 || op == 0xe9) && i + 5 <= n)
		mark(rs, va, va + 5 + (uint64_t)(int64_t)rel32(b + i + 1));
	if (op == 0x0f && i + 6 <= n && (b[i + 1] & 0xf0) == 0x80)
		mark(rs, va, va + 6 + (uint64_t)(int64_t)rel32(b + i + 2));
}

/* Every byte offset of segment PH, read in chunks; false on read errors. */
static bool mark_segment(int fd, const Elf64_Phdr *ph, struct ranges *rs,
			 uint8_t *buf)
{
	for (uint64_t s = 0; s < ph->p_filesz; s += SCAN_CHUNK) {
		uint64_t left = ph->p_filesz - s;
		size_t want = left < SCAN_CHUNK + MAX_BRANCH - 1 ?
				      (size_t)left : SCAN_CHUNK + MAX_BRANCH - 1;
		size_t end = want < SCAN_CHUNK ? want : SCAN_CHUNK;

		if (!read_exact(fd, buf, want, ph->p_offset + s))
			return false;
		for (size_t i = 0; i < end; i++)
			mark_branch_at(rs, buf, want, i, ph->p_vaddr + s + i);
	}
	return true;
}

static bool mark_branches(int fd, const Elf64_Ehdr *eh, const Elf64_Phdr *ph,
			  struct ranges *rs)
{
	uint8_t *buf = malloc(SCAN_CHUNK + MAX_BRANCH);
	bool ok = buf != NULL;

	for (size_t k = 0; ok && k < eh->e_phnum; k++)
		if (ph[k].p_type == PT_LOAD && (ph[k].p_flags & PF_X))
			ok = mark_segment(fd, &ph[k], rs, buf);
	free(buf);
	return ok;
}

/* Mark the address of every definition in symbol table SH. */
static bool mark_table(int fd, const Elf64_Shdr *sh, struct ranges *rs,
		       Elf64_Sym *syms)
{
	uint64_t n = sh->sh_size / sizeof(Elf64_Sym);

	if (sh->sh_entsize != sizeof(Elf64_Sym))
		return false;
	for (uint64_t first = 0; first < n; first += SYM_BATCH) {
		size_t cnt = n - first < SYM_BATCH ? (size_t)(n - first) : SYM_BATCH;

		if (!read_exact(fd, syms, cnt * sizeof(Elf64_Sym),
				sh->sh_offset + first * sizeof(Elf64_Sym)))
			return false;
		for (size_t i = 0; i < cnt; i++) {
			int type = ELF64_ST_TYPE(syms[i].st_info);

			if (syms[i].st_shndx != SHN_UNDEF && type != STT_SECTION &&
			    type != STT_FILE && type != STT_TLS)
				mark(rs, 0, syms[i].st_value);
		}
	}
	return true;
}

/* .symtab and .dynsym; false when the section headers cannot be read. */
static bool mark_symbols(int fd, const Elf64_Ehdr *eh, struct ranges *rs)
{
	Elf64_Sym *syms = malloc(SYM_BATCH * sizeof(Elf64_Sym));
	bool ok = syms != NULL && eh->e_shentsize == sizeof(Elf64_Shdr) &&
		  eh->e_shnum > 0;

	for (size_t k = 0; ok && k < eh->e_shnum; k++) {
		Elf64_Shdr sh;

		ok = read_exact(fd, &sh, sizeof(sh),
				eh->e_shoff + k * sizeof(Elf64_Shdr));
		if (ok && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			ok = mark_table(fd, &sh, rs, syms);
	}
	free(syms);
	return ok;
}

/*
 * The range for moving the probe from file offset FUNC_OFF by ADV, in the
 * addresses of the executable segment holding both ends; false if none.
 */
static bool place_range(const Elf64_Ehdr *eh, const Elf64_Phdr *ph,
			uint64_t func_off, size_t adv, struct range *r)
{
	for (size_t k = 0; k < eh->e_phnum; k++) {
		const Elf64_Phdr *p = &ph[k];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) ||
		    func_off < p->p_offset ||
		    func_off + adv >= p->p_offset + p->p_filesz)
			continue;
		r->lo = func_off - p->p_offset + p->p_vaddr;
		r->hi = r->lo + adv;
		r->hit = false;
		return true;
	}
	return false;
}

/* Where one function's probe could go, best first: advances, 0 to 2. */
struct choice {
	size_t adv[2];
	size_t range[2]; /* their index in struct ranges */
	int n;
};

/* Rules 1 and 2, on the bytes at the function's entry. */
static void candidates(const uint8_t *code, size_t len, int kind, int nargs,
		       struct choice *c)
{
	unsigned kept = kept_regs(nargs);
	size_t a;

	c->n = 0;
	if (scan(code, len, free_like(kind), kept, &a) && a > 0)
		c->adv[c->n++] = a;
	/* Without the NULL check skipped: its je, if the push fails rule 3. */
	if (c->n && free_like(kind) && scan(code, len, false, kept, &a) &&
	    a > 0 && a != c->adv[0])
		c->adv[c->n++] = a;
}

/* Rule 3 for every candidate of CH[0..N): sets each range's HIT. */
static void check_ranges(int fd, struct choice *ch, size_t n,
			 const uint64_t *func_offs, struct ranges *rs)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t total = 0;
	bool ok;

	rs->n = 0;
	rs->min = UINT64_MAX;
	rs->max = 0;
	for (size_t i = 0; i < n; i++)
		total += (size_t)ch[i].n;
	if (total == 0 || !load_elf(fd, &eh, &ph))
		return;
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < ch[i].n; k++) {
			struct range *r = &rs->r[rs->n];

			if (!place_range(&eh, ph, func_offs[i], ch[i].adv[k], r))
				continue;
			ch[i].range[k] = rs->n++;
			rs->min = r->lo < rs->min ? r->lo : rs->min;
			rs->max = r->hi > rs->max ? r->hi : rs->max;
		}
	}
	ok = rs->n == 0 ||
	     (mark_branches(fd, &eh, ph, rs) && mark_symbols(fd, &eh, rs));
	for (size_t k = 0; !ok && k < rs->n; k++)
		rs->r[k].hit = true; /* cannot tell: assume the worst */
	free(ph);
}

/* The first candidate of C whose range is clear, as an advance; else 0. */
static size_t pick(const struct choice *c, const struct ranges *rs)
{
	for (int k = 0; k < c->n; k++)
		if (c->range[k] < rs->n && !rs->r[c->range[k]].hit)
			return c->adv[k];
	return 0;
}

/* Rules 1 and 2 for the N functions: -errno if the file cannot be read. */
static int scan_all(int fd, size_t n, const uint64_t *func_offs,
		    const int *kinds, const int *nargs, struct choice *ch)
{
	uint8_t code[CODE_WINDOW];

	for (size_t i = 0; i < n; i++) {
		ssize_t got = read_at(fd, code, sizeof(code), func_offs[i]);

		if (got < 0)
			return (int)got;
		candidates(code, (size_t)got, kinds[i], nargs ? nargs[i] : -1,
			   &ch[i]);
		/* Not placed (yet): pick() passes over it. */
		ch[i].range[0] = ch[i].range[1] = SIZE_MAX;
	}
	return 0;
}

int mt_prologue_entry_offsets(const char *path, size_t n,
			      const uint64_t *func_offs, const int *kinds,
			      const int *nargs, uint64_t *probe_offs)
{
	struct ranges rs = { .r = NULL };
	struct choice *ch;
	int fd, ret;

	for (size_t i = 0; i < n; i++)
		probe_offs[i] = func_offs[i];
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ch = calloc(n ? n : 1, sizeof(*ch));
	rs.r = calloc(2 * (n ? n : 1), sizeof(*rs.r));
	ret = ch && rs.r ? scan_all(fd, n, func_offs, kinds, nargs, ch)
			 : -ENOMEM;
	if (ret == 0) {
		check_ranges(fd, ch, n, func_offs, &rs);
		for (size_t i = 0; i < n; i++)
			probe_offs[i] = func_offs[i] + pick(&ch[i], &rs);
	}
	free(rs.r);
	free(ch);
	close(fd);
	return ret;
}

int mt_prologue_entry_offset(const char *path, uint64_t func_off, int kind,
			     int nargs, uint64_t *probe_off)
{
	return mt_prologue_entry_offsets(path, 1, &func_off, &kind, &nargs,
					 probe_off);
}

bool mt_prologue_emulated(const char *path, uint64_t off)
{
	uint8_t code[16];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	got = read_at(fd, code, sizeof(code), off);
	close(fd);
	return got > 0 && mt_prologue_emulated_len(code, (size_t)got) > 0;
}

/* The C functions memtrace probes, by how many integer arguments they take. */
static const struct {
	const char *name;
	int nargs;
} c_nargs[] = {
	{ "malloc", 1 }, { "free", 1 }, { "calloc", 2 }, { "realloc", 2 },
	{ "reallocarray", 3 }, { "posix_memalign", 3 },
	{ "aligned_alloc", 2 }, { "memalign", 2 }, { "valloc", 1 },
	{ "pvalloc", 1 },
	/* jemalloc */
	{ "mallocx", 2 }, { "rallocx", 3 }, { "xallocx", 4 },
	{ "dallocx", 2 }, { "sdallocx", 3 },
	/* tcmalloc */
	{ "tc_malloc", 1 }, { "tc_malloc_skip_new_handler", 1 },
	{ "tc_free", 1 }, { "tc_free_sized", 2 }, { "tc_cfree", 1 },
	{ "tc_calloc", 2 }, { "tc_realloc", 2 }, { "tc_memalign", 2 },
	{ "tc_posix_memalign", 3 }, { "tc_valloc", 1 }, { "tc_pvalloc", 1 },
	/* libc's mappings (mremap is variadic: all six) */
	{ "mmap", 6 }, { "mmap64", 6 }, { "munmap", 2 }, { "mremap", 6 },
	{ "_dl_debug_state", 0 },
};

/*
 * The parameters of a C++ operator new or delete from its mangled name:
 * _Z, the operator (nw, na, dl, da), then its parameter types, each one
 * integer register: m (size_t), Pv (void *), St11align_val_t,
 * RKSt9nothrow_t.  -1 for anything else.
 */
static int cxx_nargs(const char *name)
{
	static const char *const types[] = { "m", "Pv", "St11align_val_t",
					     "RKSt9nothrow_t" };
	const char *p = name + 4;
	int n = 0;

	if (strncmp(name, "_Zn", 3) != 0 && strncmp(name, "_Zd", 3) != 0)
		return -1;
	if (strncmp(name + 2, "nw", 2) != 0 && strncmp(name + 2, "na", 2) != 0 &&
	    strncmp(name + 2, "dl", 2) != 0 && strncmp(name + 2, "da", 2) != 0)
		return -1;
	while (*p) {
		size_t k = 0, tl = 0;

		for (; k < sizeof(types) / sizeof(types[0]); k++) {
			tl = strlen(types[k]);
			if (strncmp(p, types[k], tl) == 0)
				break;
		}
		if (k == sizeof(types) / sizeof(types[0]) || n == 6)
			return -1;
		p += tl;
		n++;
	}
	return n ? n : -1;
}

int mt_prologue_nargs(const char *name)
{
	for (size_t i = 0; i < sizeof(c_nargs) / sizeof(c_nargs[0]); i++)
		if (strcmp(name, c_nargs[i].name) == 0)
			return c_nargs[i].nargs;
	return cxx_nargs(name);
}
