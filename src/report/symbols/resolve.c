/* SPDX-License-Identifier: MIT */
/*
 * resolve.c: one return address -> source-level frames (see resolve.h).
 *
 * The inline expansion follows elfutils' addr2line -i: the scopes of the
 * innermost DIE at the address are walked outwards; each
 * DW_TAG_inlined_subroutine is a frame whose DW_AT_call_file/call_line give
 * the location in the next outer frame, up to the DW_TAG_subprogram.
 */
#include "resolve.h"

#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "file_dwfl.h"

/* From libstdc++ (linked into memtrace): the Itanium C++ ABI demangler. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
		     int *status);

/* A malloc'd copy of NAME, demangled when it is a C++ symbol. */
static char *demangle(const char *name)
{
	if (strncmp(name, "_Z", 2) == 0) {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);

		if (d && status == 0)
			return d;
		free(d);
	}
	return strdup(name);
}

/* True when copying the non-NULL string SRC failed (COPY is NULL). */
static bool missing(const char *src, const char *copy)
{
	return src && !copy;
}

/* The compilation directory of CUDIE, or NULL. */
static const char *comp_dir(Dwarf_Die *cudie)
{
	Dwarf_Attribute attr;

	if (!cudie)
		return NULL;
	return dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
}

/* A malloc'd absolute path for a file name of CUDIE's line table. */
static char *source_path(Dwarf_Die *cudie, const char *name)
{
	if (!name)
		return NULL;
	const char *dir = name[0] == '/' ? NULL : comp_dir(cudie);
	char *path;

	if (!dir)
		return strdup(name);
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	return path;
}

/*
 * The file a DW_AT_decl_file or DW_AT_call_file attribute names, as a
 * malloc'd path in *FILE (NULL if ATTR is NULL or names none).  Done here
 * rather than with dwarf_decl_file because libdw 0.188 rejects index 0,
 * which in DWARF 5 (clang's default) is the primary source file.
 */
static int attr_file(Dwarf_Attribute *attr, char **file)
{
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Half version;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	if (!attr || dwarf_formudata(attr, &idx) != 0 ||
	    !dwarf_cu_die(attr->cu, &cu, &version, NULL, NULL, NULL, NULL,
			  NULL))
		return 0;
	/* Before DWARF 5, index 0 means "no file". */
	if ((idx == 0 && version < 5) ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || idx >= nfiles)
		return 0;
	const char *src = dwarf_filesrc(files, idx, NULL, NULL);

	*file = source_path(&cu, src);
	return missing(src, *file) ? -ENOMEM : 0;
}

/* Linkage name (demangled) if any, else DW_AT_name; malloc'd or NULL. */
static char *die_function_name(Dwarf_Die *die)
{
	static const int linkage_attrs[] = { DW_AT_linkage_name,
					     DW_AT_MIPS_linkage_name };
	Dwarf_Attribute attr;

	for (size_t i = 0; i < 2; i++) {
		const char *s = dwarf_formstring(
			dwarf_attr_integrate(die, linkage_attrs[i], &attr));

		if (s)
			return demangle(s);
	}
	const char *name =
		dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));

	return name ? strdup(name) : NULL;
}

/*
 * "MODULE+0xOFFSET" or "[unknown]+0xPC" for return address IP; PC = IP - 1
 * is on the call instruction (what addr2line wants, and pprof's Location
 * address).  malloc'd or NULL.
 */
static char *fallback_name(const struct mt_module *mm, uint64_t ip)
{
	uint64_t pc = ip ? ip - 1 : 0;
	char *s;
	int n;

	if (mm && mm->path)
		n = asprintf(&s, "%s+0x%" PRIx64, mt_path_basename(mm->path),
			     pc - mm->bias);
	else
		n = asprintf(&s, "[unknown]+0x%" PRIx64, pc);
	return n < 0 ? NULL : s;
}

/* What a lookup needs besides the DIEs. */
struct lookup {
	uint64_t ip;
	const struct mt_module *mm;
	struct mt_frame_vec *out;
	Dwfl_Module *mod;   /* libdwfl's module of IP, or NULL */
	Dwarf_Addr bias;    /* its DWARF's load bias */
};

/*
 * The public name (see sym_index.h) of the function starting at START (a
 * run-time address), demangled, in *NAME (malloc'd), or NULL when no
 * function symbol starts there or (ALIAS not NULL) none of them is named
 * ALIAS.  Returns 0 or -ENOMEM.
 */
static int public_name(const struct lookup *lk, Dwarf_Addr start,
		       const char *alias, char **name)
{
	const struct mt_sym_index *syms;
	const char *pub;
	size_t len;
	int err;

	*name = NULL;
	if (!lk->mod)
		return 0;
	err = mt_file_dwfl_symbols(lk->mod, &syms);
	if (err || !syms || (alias && !mt_sym_index_has(syms, start, alias)))
		return err;
	pub = mt_sym_index_public(syms, start, &len);
	if (!pub)
		return 0;
	char *copy = strndup(pub, len);

	if (!copy)
		return -ENOMEM;
	*name = demangle(copy);
	free(copy);
	return *name ? 0 : -ENOMEM;
}

/* The name of function DIE's symbol (linkage name, else DW_AT_name). */
static const char *die_symbol_name(Dwarf_Die *die)
{
	static const int attrs[] = { DW_AT_linkage_name,
				     DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute attr;

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		const char *s =
			dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &attr));

		if (s)
			return s;
	}
	return NULL;
}

/*
 * Where function DIE starts, as a run-time address in *ENTRY: its entry
 * pc, or its low pc, or else (a function split into hot and cold parts has
 * only DW_AT_ranges) the start of the first of its ranges at which a
 * symbol named SYM starts.  Returns 0, or -1 when there is none, -ENOMEM.
 */
static int die_entry(const struct lookup *lk, Dwarf_Die *die, const char *sym,
		     Dwarf_Addr *entry)
{
	const struct mt_sym_index *syms;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int err;

	if (dwarf_entrypc(die, entry) == 0 || dwarf_lowpc(die, entry) == 0) {
		*entry += lk->bias;
		return 0;
	}
	err = mt_file_dwfl_symbols(lk->mod, &syms);
	if (err || !syms)
		return err ? err : -1;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (mt_sym_index_has(syms, start + lk->bias, sym)) {
			*entry = start + lk->bias;
			return 0;
		}
	}
	return -1;
}

/*
 * The name of the frame of function DIE, malloc'd in *NAME: for a
 * function (not inlined) that is one of several names of the symbols at
 * its entry, their public name (__strdup -> strdup); else the DIE's name.
 */
static int frame_name(const struct lookup *lk, Dwarf_Die *die, char **name)
{
	Dwarf_Addr entry;
	const char *sym = die_symbol_name(die);
	int err = 0;

	*name = NULL;
	if (sym && lk->mod && dwarf_tag(die) != DW_TAG_inlined_subroutine) {
		err = die_entry(lk, die, sym, &entry);
		if (err == 0)
			err = public_name(lk, entry, sym, name);
		else if (err == -1)
			err = 0;
	}
	if (!err && !*name) {
		*name = die_function_name(die);
		if (!*name)
			*name = fallback_name(lk->mm, lk->ip);
	}
	return err;
}

/*
 * Source file and line of ADDR (no load bias) from CUDIE's line table
 * (CUDIE may be NULL); *FILE is malloc'd, or NULL without line information.
 */
static int line_at(Dwarf_Die *cudie, Dwarf_Addr addr, char **file, int *line)
{
	Dwarf_Line *l = cudie ? dwarf_getsrc_die(cudie, addr) : NULL;
	const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;

	*file = source_path(cudie, src);
	if (!*file || dwarf_lineno(l, line) != 0)
		*line = 0;
	return missing(src, *file) ? -ENOMEM : 0;
}

/* Append the frame of function DIE located at FILE:LINE (FILE is taken). */
static int push_function(const struct lookup *lk, Dwarf_Die *die, char *file,
			 int line)
{
	struct mt_frame f = {
		.file = file,
		.line = line,
		.addr = lk->ip,
		.inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine,
	};
	Dwarf_Attribute attr;
	const char *module = lk->mm ? lk->mm->path : NULL;
	int err = attr_file(dwarf_attr_integrate(die, DW_AT_decl_file, &attr),
			    &f.decl_file);

	if (!err)
		err = frame_name(lk, die, &f.function);
	if (dwarf_decl_line(die, &f.decl_line) != 0)
		f.decl_line = 0;
	f.module = module ? strdup(module) : NULL;
	if (err || !f.function || missing(module, f.module)) {
		mt_frame_clear(&f);
		return -ENOMEM;
	}
	return mt_frame_vec_push(lk->out, &f);
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* The call site of inlined instance DIE: *FILE (malloc'd or NULL), *LINE. */
static int call_site(Dwarf_Die *die, char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word val;

	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &val) == 0)
		*line = (int)val;
	return attr_file(dwarf_attr(die, DW_AT_call_file, &attr), file);
}

/*
 * Append one frame per function scope of SCOPES (innermost first), the
 * innermost located at FILE:LINE (FILE is taken over).  Each inlined
 * instance's call site locates the next frame out; stops after the first
 * non-inlined function.
 */
static int push_scopes(const struct lookup *lk, Dwarf_Die *scopes,
		       int nscopes, char *file, int line)
{
	int err = 0;

	for (int i = 0; i < nscopes && !err; i++) {
		Dwarf_Die *die = &scopes[i];

		if (!is_function(die))
			continue;
		bool inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine;
		char *call_file = NULL;
		int call_line = 0;

		if (inlined)
			err = call_site(die, &call_file, &call_line);
		if (!err)
			err = push_function(lk, die, file, line);
		else
			free(file);
		file = call_file;
		line = call_line;
		if (!inlined)
			break;
	}
	free(file);
	return err;
}

/*
 * The scopes physically containing PC, innermost first.  dwarf_getscopes
 * continues from the innermost inlined instance into its abstract origin's
 * scopes; re-deriving them from the innermost DIE with dwarf_getscopes_die
 * gives the containing (caller) scopes instead, as addr2line -i does.
 */
static int scopes_at(Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	Dwarf_Die *lexical = NULL;
	int n = dwarf_getscopes(cudie, pc, &lexical);

	if (n <= 0) {
		free(lexical);
		*scopes = NULL;
		return n;
	}
	Dwarf_Die innermost = lexical[0];
	int m = dwarf_getscopes_die(&innermost, scopes);

	if (m <= 0) {
		free(*scopes);
		*scopes = lexical;
		return n;
	}
	free(lexical);
	return m;
}

/* Frames from DWARF; appends nothing when PC has no function DIE. */
static int resolve_dwarf(const struct lookup *lk, Dwarf_Die *cudie,
			 Dwarf_Addr addr)
{
	Dwarf_Die *scopes;
	int nscopes = scopes_at(cudie, addr, &scopes);

	if (nscopes <= 0) {
		free(scopes);
		return 0;
	}
	char *file;
	int line;
	int err = line_at(cudie, addr, &file, &line);

	if (!err)
		err = push_scopes(lk, scopes, nscopes, file, line);
	free(scopes);
	return err;
}

/*
 * One frame from the ELF symbol table (with the line table's location, if
 * any); appends nothing without a symbol.
 */
static int resolve_symbol(const struct lookup *lk, Dwarf_Addr pc,
			  Dwarf_Die *cudie, Dwarf_Addr addr)
{
	const struct mt_sym_index *syms;
	const struct mt_sym *sym;
	int err = mt_file_dwfl_symbols(lk->mod, &syms);

	if (err)
		return err;
	sym = NULL;
	if (syms)
		err = mt_sym_index_containing(syms, pc, &sym);
	if (err || !sym)
		return err;
	struct mt_frame f = { .addr = lk->ip, .no_inlines = true };
	const char *module = lk->mm ? lk->mm->path : NULL;

	err = line_at(cudie, addr, &f.file, &f.line);
	if (!err)
		err = public_name(lk, sym->addr, NULL, &f.function);
	if (!err && !f.function)
		f.function = demangle(sym->name);
	f.module = module ? strdup(module) : NULL;
	if (err || !f.function || missing(module, f.module)) {
		mt_frame_clear(&f);
		return -ENOMEM;
	}
	return mt_frame_vec_push(lk->out, &f);
}

/* Frames of PC in MOD: from DWARF if possible, else the ELF symbol. */
static int resolve_in_module(struct lookup *lk, Dwfl_Module *mod,
			     Dwarf_Addr pc)
{
	Dwarf_Die *cudie;
	Dwarf_Addr bias = 0;
	size_t before = lk->out->n;
	int err = mt_file_dwfl_addrdie(mod, pc, &cudie, &bias);

	lk->mod = mod;
	lk->bias = bias;
	if (!err && cudie)
		err = resolve_dwarf(lk, cudie, pc - bias);
	if (!err && lk->out->n == before)
		err = resolve_symbol(lk, pc, cudie, pc - bias);
	return err;
}

/* The "MODULE+0xOFFSET" / "[unknown]+0xIP" frame. */
static int push_unresolved(const struct lookup *lk)
{
	struct mt_frame f = { .addr = lk->ip, .unresolved = true };
	const char *module = lk->mm ? lk->mm->path : NULL;

	f.function = fallback_name(lk->mm, lk->ip);
	f.module = module ? strdup(module) : NULL;
	if (!f.function || missing(module, f.module)) {
		mt_frame_clear(&f);
		return -ENOMEM;
	}
	return mt_frame_vec_push(lk->out, &f);
}

int mt_resolve_ip(Dwfl *dwfl, const struct mt_module *mm, uint64_t ip,
		  struct mt_frame_vec *out)
{
	/* The call instruction ends at IP; IP itself may be past the caller. */
	Dwarf_Addr pc = ip ? ip - 1 : 0;
	Dwfl_Module *mod = NULL;
	struct lookup lk = { .ip = ip, .mm = mm, .out = out };
	size_t before = out->n;
	int err = 0;

	/* The session has the file at its ELF addresses. */
	if (dwfl && mm && ip)
		mod = dwfl_addrmodule(dwfl, pc - mm->bias);
	if (mod)
		err = resolve_in_module(&lk, mod, pc - mm->bias);
	if (!err && out->n == before)
		err = push_unresolved(&lk);
	return err;
}
