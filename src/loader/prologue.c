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
 *     memory and no register but the flags and the scratch registers rax,
 *     r10 and r11 (never an argument register, rsp or rbp): so at P the
 *     arguments, the stack pointer, the return address at [rsp] and the
 *     frame pointer chain the stack walk follows are what they were at E.
 *     The probe fires before the instruction at P executes, so P itself
 *     may be a push.
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
 *     only cost the optimisation).  Indirect jumps are not followed: a jump
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
#define MAX_INSNS 8
/* Bytes read at the entry: the prologue and a NULL check's target. */
#define CODE_WINDOW 4096
/* Executable segments are searched for branches this many bytes at a time. */
#define SCAN_CHUNK (1U << 20)
/* Longest direct branch (0f 8x rel32): chunks overlap by one less. */
#define MAX_BRANCH 6
#define SYM_BATCH 1024

/* Registers by x86 number: rax 0, ..., r10 10, r11 11. */
static bool is_scratch(unsigned reg)
{
	return reg == 0 || reg == 10 || reg == 11;
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
 * What a ModRM instruction form may write besides the flags, by opcode and
 * ModRM.reg: nothing (compares and tests), ModRM.reg, or ModRM.rm (accepted
 * in register form only).  *IMM gets the immediate's size.
 */
enum form { F_NO, F_FLAGS, F_REG, F_RM };

static enum form form_of(uint8_t op, unsigned reg3, size_t *imm)
{
	*imm = 0;
	switch (op) {
	case 0x38: case 0x39: case 0x3a: case 0x3b: /* cmp */
	case 0x84: case 0x85:                       /* test */
		return F_FLAGS;
	case 0x03: case 0x0b: case 0x23: case 0x2b: case 0x33: /* alu r, r/m */
	case 0x8b: case 0x8d:                       /* mov r, r/m; lea */
		return F_REG;
	case 0x01: case 0x09: case 0x21: case 0x29: case 0x31: /* alu r/m, r */
	case 0x89:                                  /* mov r/m, r */
		return F_RM;
	case 0x80: /* group 1, imm8, 8-bit: only cmp */
		*imm = 1;
		return reg3 == 7 ? F_FLAGS : F_NO;
	case 0x83: /* group 1, imm8: cmp, or an operation on r/m */
	case 0x81: /* group 1, imm32 */
		*imm = op == 0x83 ? 1 : 4;
		return reg3 == 7 ? F_FLAGS : F_RM;
	case 0xf6: /* test r/m8, imm8 */
	case 0xf7: /* test r/m, imm32 */
		*imm = op == 0xf6 ? 1 : 4;
		return reg3 == 0 ? F_FLAGS : F_NO;
	default:
		return F_NO;
	}
}

/* mov $imm, %reg (b8+r): a skippable length when the register is scratch. */
static size_t mov_imm_len(uint8_t rex, uint8_t op, size_t at, size_t len)
{
	unsigned reg = (op & 7U) | (rex & 1U) << 3;
	size_t n = at + ((rex & 8U) ? 8 : 4);

	return is_scratch(reg) && n <= len ? n : 0;
}

/*
 * Length of an instruction that may be skipped (rule 1 above): endbr64, a
 * compare or test, or a mov/lea/ALU operation whose only register result is
 * rax, r10 or r11; an fs/gs segment prefix and a REX prefix are accepted.
 * 0 for anything else, including anything with an operand-size prefix.
 */
static size_t skippable_len(const uint8_t *c, size_t len)
{
	size_t i = 0, m, imm;
	uint8_t rex = 0, op;
	unsigned reg, rm;
	enum form f;

	if (len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e &&
	    c[3] == 0xfa)
		return 4; /* endbr64 */
	if (i < len && (c[i] == 0x64 || c[i] == 0x65))
		i++;
	if (i < len && (c[i] & 0xf0) == 0x40)
		rex = c[i++];
	if (i >= len)
		return 0;
	op = c[i++];
	if (op >= 0xb8 && op <= 0xbf)
		return mov_imm_len(rex, op, i, len);
	m = modrm_len(c + i, len - i);
	if (!m)
		return 0;
	reg = ((c[i] >> 3) & 7U) | (rex & 4U) << 1;
	rm = (c[i] & 7U) | (rex & 1U) << 3;
	f = form_of(op, (c[i] >> 3) & 7U, &imm);
	if (f == F_NO || i + m + imm > len)
		return 0;
	if (f == F_REG && (!is_scratch(reg) || (op == 0x8d && c[i] >> 6 == 3)))
		return 0;
	if (f == F_RM && (c[i] >> 6 != 3 || !is_scratch(rm)))
		return 0; /* a memory destination, or not a scratch register */
	return i + m + imm;
}

/* The path at CODE[AT]: a ret (or rep ret) after NOPs only. */
static bool returns_at_once(const uint8_t *code, size_t len, size_t at)
{
	for (int k = 0; k < MAX_INSNS && at < len; k++) {
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
		 size_t *advance)
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
			n = skippable_len(code + pos, len - pos);
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

bool mt_prologue_scan(const uint8_t *code, size_t len, int kind,
		      size_t *advance)
{
	return scan(code, len, free_like(kind), advance);
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

static void mark(struct ranges *rs, uint64_t t)
{
	if (t <= rs->min || t > rs->max)
		return;
	for (size_t k = 0; k < rs->n; k++)
		if (t > rs->r[k].lo && t <= rs->r[k].hi)
			rs->r[k].hit = true;
}

/* Mark the target of any direct branch B[I] (address VA) could start. */
static void mark_branch_at(struct ranges *rs, const uint8_t *b, size_t n,
			   size_t i, uint64_t va)
{
	uint8_t op = b[i];

	if ((op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
	     (op >= 0xe0 && op <= 0xe3)) && i + 2 <= n)
		mark(rs, va + 2 + (uint64_t)(int64_t)(int8_t)b[i + 1]);
	if ((op == 0xe8 || op == 0xe9) && i + 5 <= n)
		mark(rs, va + 5 + (uint64_t)(int64_t)rel32(b + i + 1));
	if (op == 0x0f && i + 6 <= n && (b[i + 1] & 0xf0) == 0x80)
		mark(rs, va + 6 + (uint64_t)(int64_t)rel32(b + i + 2));
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
				mark(rs, syms[i].st_value);
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
static void candidates(const uint8_t *code, size_t len, int kind,
		       struct choice *c)
{
	size_t a;

	c->n = 0;
	if (scan(code, len, free_like(kind), &a) && a > 0)
		c->adv[c->n++] = a;
	/* Without the NULL check skipped: its je, if the push fails rule 3. */
	if (c->n && free_like(kind) && scan(code, len, false, &a) && a > 0 &&
	    a != c->adv[0])
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
		    const int *kinds, struct choice *ch)
{
	uint8_t code[CODE_WINDOW];

	for (size_t i = 0; i < n; i++) {
		ssize_t got = read_at(fd, code, sizeof(code), func_offs[i]);

		if (got < 0)
			return (int)got;
		candidates(code, (size_t)got, kinds[i], &ch[i]);
		/* Not placed (yet): pick() passes over it. */
		ch[i].range[0] = ch[i].range[1] = SIZE_MAX;
	}
	return 0;
}

int mt_prologue_entry_offsets(const char *path, size_t n,
			      const uint64_t *func_offs, const int *kinds,
			      uint64_t *probe_offs)
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
	ret = ch && rs.r ? scan_all(fd, n, func_offs, kinds, ch) : -ENOMEM;
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
			     uint64_t *probe_off)
{
	return mt_prologue_entry_offsets(path, 1, &func_off, &kind, probe_off);
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
