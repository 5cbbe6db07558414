// SPDX-License-Identifier: MIT
/* probes.c: which functions are probed, and attaching to them. */
#include "probes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "elf_syms.h"
#include "forwarders.h"
#include "memleak.h"
#include "memleak.skel.h"
#include "plan_cache.h"
#include "prologue.h"

struct probe_def {
	const char *func;
	enum mt_call_kind kind;
};

/* The malloc family, probed in the chosen allocator (names get --symbol-prefix). */
static const struct probe_def alloc_defs[] = {
	{ "malloc", MT_CALL_MALLOC },
	{ "free", MT_CALL_FREE },
	{ "calloc", MT_CALL_CALLOC },
	{ "realloc", MT_CALL_REALLOC },
	{ "reallocarray", MT_CALL_REALLOCARRAY },
	{ "posix_memalign", MT_CALL_POSIX_MEMALIGN },
	{ "aligned_alloc", MT_CALL_ALIGNED_ALLOC },
	{ "memalign", MT_CALL_ALIGNED_ALLOC },
	{ "valloc", MT_CALL_VALLOC },
	{ "pvalloc", MT_CALL_PVALLOC },
	/* jemalloc's own API */
	{ "mallocx", MT_CALL_MALLOC },
	{ "rallocx", MT_CALL_REALLOC },
	{ "xallocx", MT_CALL_XALLOCX },
	{ "dallocx", MT_CALL_FREE },
	{ "sdallocx", MT_CALL_FREE },
	/* tcmalloc's entry points (most are aliases of the above) */
	{ "tc_malloc", MT_CALL_MALLOC },
	{ "tc_malloc_skip_new_handler", MT_CALL_MALLOC },
	{ "tc_free", MT_CALL_FREE },
	{ "tc_free_sized", MT_CALL_FREE },
	{ "tc_cfree", MT_CALL_FREE },
	{ "tc_calloc", MT_CALL_CALLOC },
	{ "tc_realloc", MT_CALL_REALLOC },
	{ "tc_memalign", MT_CALL_ALIGNED_ALLOC },
	{ "tc_posix_memalign", MT_CALL_POSIX_MEMALIGN },
	{ "tc_valloc", MT_CALL_VALLOC },
	{ "tc_pvalloc", MT_CALL_PVALLOC },
};

/* C++ operator new and delete, probed in every object defining them. */
static const struct probe_def cxx_defs[] = {
	{ "_Znwm", MT_CALL_MALLOC },
	{ "_Znam", MT_CALL_MALLOC },
	{ "_ZnwmRKSt9nothrow_t", MT_CALL_MALLOC },
	{ "_ZnamRKSt9nothrow_t", MT_CALL_MALLOC },
	{ "_ZnwmSt11align_val_t", MT_CALL_MALLOC },
	{ "_ZnamSt11align_val_t", MT_CALL_MALLOC },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", MT_CALL_MALLOC },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", MT_CALL_MALLOC },
	{ "_ZdlPv", MT_CALL_DELETE },
	{ "_ZdaPv", MT_CALL_DELETE },
	{ "_ZdlPvm", MT_CALL_DELETE },
	{ "_ZdaPvm", MT_CALL_DELETE },
	{ "_ZdlPvRKSt9nothrow_t", MT_CALL_DELETE },
	{ "_ZdaPvRKSt9nothrow_t", MT_CALL_DELETE },
	{ "_ZdlPvSt11align_val_t", MT_CALL_DELETE },
	{ "_ZdaPvSt11align_val_t", MT_CALL_DELETE },
	{ "_ZdlPvmSt11align_val_t", MT_CALL_DELETE },
	{ "_ZdaPvmSt11align_val_t", MT_CALL_DELETE },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", MT_CALL_DELETE },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", MT_CALL_DELETE },
};

/* --mmap: the program's own anonymous mappings, probed in libc. */
static const struct probe_def mmap_defs[] = {
	{ "mmap", MT_CALL_MMAP },
	{ "mmap64", MT_CALL_MMAP },
	{ "munmap", MT_CALL_MUNMAP },
	{ "mremap", MT_CALL_MREMAP },
};

/*
 * The dynamic loader's hook for debuggers, called around the mapping of a
 * dlopen's objects: the unwinder asks for their tables then, not when a
 * stack first meets them (then that stack would stop there).
 */
static const struct probe_def dl_defs[] = {
	{ "_dl_debug_state", MT_CALL_DL_STATE },
};

#define NALLOC (sizeof(alloc_defs) / sizeof(alloc_defs[0]))
#define NMMAP (sizeof(mmap_defs) / sizeof(mmap_defs[0]))
#define NCXX (sizeof(cxx_defs) / sizeof(cxx_defs[0]))
#define NDL (sizeof(dl_defs) / sizeof(dl_defs[0]))
#define MAXP (NALLOC + NCXX + NMMAP + NDL)

_Static_assert(MAXP == MT_PLAN_MAX, "plan.h's MT_PLAN_MAX is the functions probed");

static enum mt_call_kind kind_of(uint64_t cookie)
{
	return (enum mt_call_kind)(cookie & MT_COOKIE_KIND_MASK);
}

static bool has_return(uint64_t cookie)
{
	enum mt_call_kind kind = kind_of(cookie);

	return kind != MT_CALL_FREE && kind != MT_CALL_MUNMAP &&
	       kind != MT_CALL_DL_STATE;
}

/* The functions of PL that allocate or free (not ld.so's hook). */
static size_t alloc_funcs(const struct mt_plan *pl)
{
	size_t n = 0;

	for (size_t i = 0; i < pl->n; i++)
		n += kind_of(pl->cookies[i]) != MT_CALL_DL_STATE;
	return n;
}

/*
 * LEAF: the malloc family of an allocator known to call none of its own
 * probed functions from malloc or calloc (glibc, jemalloc, tcmalloc; not
 * with --mmap, whose mmap glibc's malloc calls): those two get
 * MT_COOKIE_LEAF, so that sampling may skip their return probes.  (glibc's
 * realloc calls malloc and free, its memalign family malloc.)
 */
static void plan_add(struct mt_plan *pl, uint64_t off, enum mt_call_kind kind,
		     bool leaf, const char *name)
{
	int nargs = mt_prologue_nargs(name);

	if (nargs < 0)
		nargs = 6; /* not known: every argument register */
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->offs[i] != off)
			continue;
		/* An alias of a function already planned: what it is
		 * called with as this name counts too. */
		if (nargs > pl->nargs[i])
			pl->nargs[i] = nargs;
		return;
	}
	pl->entry_offs[pl->n] = off;
	pl->names[pl->n] = name;
	pl->nargs[pl->n] = nargs;
	pl->stepped[pl->n] = false;
	pl->offs[pl->n] = off;
	pl->cookies[pl->n++] = kind | (leaf && (kind == MT_CALL_MALLOC ||
						kind == MT_CALL_CALLOC)
				       ? MT_COOKIE_LEAF : 0);
	if (has_return(kind))
		pl->ret_offs[pl->nret++] = off;
}

static int plan_defs(struct mt_plan *pl, const struct probe_def *defs, size_t n,
		     const char *prefix, bool leaf)
{
	char names[MAXP][64];
	const char *ptrs[MAXP];
	uint64_t offs[MAXP];
	bool found[MAXP];
	int ret;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s%s", prefix, defs[i].func);
		ptrs[i] = names[i];
	}
	ret = mt_elf_func_offsets(pl->path, ptrs, n, offs, found);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		if (found[i])
			plan_add(pl, offs[i], defs[i].kind, leaf, defs[i].func);
	return 0;
}

static int keep(struct mt_probes *p, struct bpf_link *link, int fd)
{
	if (p->nlinks == p->cap) {
		size_t ncap = p->cap ? 2 * p->cap : 64;
		struct mt_probe_link *nv = realloc(p->links, ncap * sizeof(*nv));

		if (!nv) {
			if (link)
				bpf_link__destroy(link);
			if (fd >= 0)
				close(fd);
			return -ENOMEM;
		}
		p->links = nv;
		p->cap = ncap;
	}
	p->links[p->nlinks++] = (struct mt_probe_link){ link, fd, 0, 0 };
	return 0;
}

/* bpf(BPF_LINK_CREATE) for uprobe_multi: libbpf 1.1 has no API for it. */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

#define UPROBE_MULTI_RETURN 1U

/* One link for N offsets of PATH: uprobe_multi, or with SESSION a session. */
static int link_multi(struct mt_probes *p, struct bpf_program *prog,
		      pid_t pid, const char *path, const uint64_t *offs,
		      const uint64_t *cookies, size_t n, bool retprobe,
		      bool session)
{
	struct link_create_uprobe_multi attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)bpf_program__fd(prog);
	attr.attach_type = session ? MT_BPF_TRACE_UPROBE_SESSION
				   : MT_BPF_TRACE_UPROBE_MULTI;
	attr.path = (__u64)(uintptr_t)path;
	attr.offsets = (__u64)(uintptr_t)offs;
	attr.cookies = (__u64)(uintptr_t)cookies;
	attr.cnt = (__u32)n;
	attr.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	attr.pid = pid > 0 ? (__u32)pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return errno == EINVAL || errno == EOPNOTSUPP || errno == E2BIG ||
		       errno == ENOSYS ? -EOPNOTSUPP : -errno;
	return keep(p, NULL, (int)fd);
}

static int attach_multi(struct mt_probes *p, struct bpf_program *prog,
			pid_t pid, const char *path, const uint64_t *offs,
			const uint64_t *cookies, size_t n, bool retprobe)
{
	return link_multi(p, prog, pid, path, offs, cookies, n, retprobe, false);
}

static int attach_perf(struct mt_probes *p, struct bpf_program *prog,
		       pid_t pid, const char *path, const uint64_t *offs,
		       const uint64_t *cookies, size_t n, bool retprobe)
{
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe,
			    .bpf_cookie = cookies ? cookies[i] : 0);
		struct bpf_link *link = bpf_program__attach_uprobe_opts(
			prog, pid > 0 ? pid : -1, path, (size_t)offs[i], &opts);
		int ret;

		if (!link)
			return -errno;
		ret = keep(p, link, -1);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Move each probe of PL from the function's first instruction to the first
 * one the kernel emulates instead of single-stepping, where that is proven
 * safe (prologue.c): the arguments, the stack pointer and the return
 * address are unchanged there, and every path that allocates or frees
 * passes it.  A function's entry and return probes move together (one
 * breakpoint; the return address is still at the top of the stack).
 */
static void plan_place(struct mt_plan *pl)
{
	uint64_t at[MAXP];
	int kinds[MAXP];

	for (size_t i = 0; i < pl->n; i++)
		kinds[i] = (int)kind_of(pl->cookies[i]);
	if (pl->n && !mt_prologue_entry_offsets(pl->path, pl->n, pl->offs, kinds,
						 pl->nargs, at)) {
		pl->nret = 0;
		for (size_t i = 0; i < pl->n; i++) {
			pl->offs[i] = at[i];
			if (has_return(pl->cookies[i]))
				pl->ret_offs[pl->nret++] = at[i];
		}
	} /* else unreadable: probes stay at the entries */
	for (size_t i = 0; i < pl->n; i++)
		pl->stepped[i] = !mt_prologue_emulated(pl->path, pl->offs[i]);
}

/*
 * Entry probes alone, on N functions at OFFS (with COOKIES) of PATH: the
 * allocator's to the entry program, ld.so's hook (MT_CALL_DL_STATE) to
 * dl_mapped.
 */
static int attach_entries(struct mt_probes *p, struct memleak_bpf *skel,
			  pid_t pid, const char *path, const uint64_t *offs,
			  const uint64_t *cookies, size_t n)
{
	int (*attach)(struct mt_probes *, struct bpf_program *, pid_t,
		      const char *, const uint64_t *, const uint64_t *, size_t,
		      bool) = p->mode == MT_LINK_PERF ? attach_perf : attach_multi;
	uint64_t aoffs[MAXP], acookies[MAXP], doffs[MAXP], dcookies[MAXP];
	size_t na = 0, nd = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		if (kind_of(cookies[i]) == MT_CALL_DL_STATE) {
			doffs[nd] = offs[i];
			dcookies[nd++] = cookies[i];
		} else {
			aoffs[na] = offs[i];
			acookies[na++] = cookies[i];
		}
	}
	if (na)
		ret = attach(p, skel->progs.uprobe_entry, pid, path, aoffs,
			     acookies, na, false);
	if (ret == 0 && nd)
		ret = attach(p, skel->progs.dl_mapped, pid, path, doffs,
			     dcookies, nd, false);
	return ret;
}

/*
 * Sessions: the functions with a return go to the session program, which
 * serves both halves (one link); free and munmap to the entry program.
 */
static int attach_session(struct mt_probes *p, struct memleak_bpf *skel,
			  pid_t pid, const struct mt_plan *pl)
{
	uint64_t offs[MAXP], cookies[MAXP], eoffs[MAXP], ecookies[MAXP];
	size_t n = 0, ne = 0;
	int ret = 0;

	for (size_t i = 0; i < pl->n; i++) {
		if (has_return(pl->cookies[i])) {
			offs[n] = pl->offs[i];
			cookies[n++] = pl->cookies[i];
		} else {
			eoffs[ne] = pl->offs[i];
			ecookies[ne++] = pl->cookies[i];
		}
	}
	if (n)
		ret = link_multi(p, skel->progs.uprobe_session, pid, pl->path,
				 offs, cookies, n, false, true);
	if (ret == 0 && ne)
		ret = attach_entries(p, skel, pid, pl->path, eoffs, ecookies, ne);
	return ret;
}

/* Keep a copy of PL (attached), to attach it again for a fork. */
static int remember(struct mt_probes *p, const struct mt_plan *pl)
{
	struct mt_plan *nv = realloc(p->plans, (p->nplans + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	p->plans = nv;
	nv[p->nplans] = *pl;
	nv[p->nplans].path = strdup(pl->path);
	if (!nv[p->nplans].path)
		return -ENOMEM;
	p->nplans++;
	return 0;
}

/* The links made since the FROMth are in PL's file. */
static void tag_links(struct mt_probes *p, size_t from, const struct mt_plan *pl)
{
	for (size_t i = from; i < p->nlinks; i++) {
		p->links[i].dev = pl->dev;
		p->links[i].ino = pl->ino;
	}
}

/* Attach PLANS, placed already, and remember them. */
static int attach_placed(struct mt_probes *p, struct memleak_bpf *skel,
			 pid_t pid, const struct mt_plan *plans, size_t n)
{
	int (*attach)(struct mt_probes *, struct bpf_program *, pid_t,
		      const char *, const uint64_t *, const uint64_t *, size_t,
		      bool) = p->mode == MT_LINK_PERF ? attach_perf : attach_multi;
	size_t from;
	int ret = 0;

	for (size_t i = 0; i < n && ret == 0; i++)
		if (plans[i].n)
			ret = remember(p, &plans[i]);
	if (p->mode == MT_LINK_SESSION) {
		for (size_t i = 0; i < n && ret == 0; i++) {
			from = p->nlinks;
			ret = attach_session(p, skel, pid, &plans[i]);
			tag_links(p, from, &plans[i]);
			p->nfuncs += alloc_funcs(&plans[i]);
		}
		return ret;
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		if (!plans[i].nret)
			continue;
		from = p->nlinks;
		ret = attach(p, skel->progs.uprobe_return, pid, plans[i].path,
			     plans[i].ret_offs, NULL, plans[i].nret, true);
		tag_links(p, from, &plans[i]);
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		if (!plans[i].n)
			continue;
		from = p->nlinks;
		ret = attach_entries(p, skel, pid, plans[i].path, plans[i].offs,
				     plans[i].cookies, plans[i].n);
		tag_links(p, from, &plans[i]);
		p->nfuncs += alloc_funcs(&plans[i]);
	}
	return ret;
}

/* What a forwarding operator may pass the call on to: the object whose
 * operators they are, and whether it is the allocator probed. */
struct fwd_ctx {
	const char *prefix;
	bool own_probed;
};

/* Is NAME, called from an operator, a probed allocator function?  Through
 * the PLT, a name binds to the allocator that defines it (interposition);
 * a call within the object only when the object is the allocator. */
static bool probed_here(const char *name, bool via_plt, void *arg)
{
	const struct fwd_ctx *c = arg;
	size_t plen = strlen(c->prefix);

	if ((!via_plt && !c->own_probed) || strncmp(name, c->prefix, plen) != 0)
		return false;
	for (size_t i = 0; i < NALLOC; i++)
		if (strcmp(name + plen, alloc_defs[i].func) == 0)
			return true;
	return false;
}

/*
 * Plan the probes of PL's object's operator new and delete, but for those
 * that only forward to a probed function (libstdc++'s over glibc): one
 * trap per allocation instead of two.  Only when the BPF program's
 * unwinder leaves their frames out (not --unwind fp), so that a stack
 * still starts at new's caller.  *DEFINES: the object has any of them.
 */
static int plan_cxx(struct mt_plan *pl, const struct memleak_bpf *skel,
		    const char *prefix, bool own_probed, bool *defines)
{
	struct probe_def defs[NCXX];
	struct mt_cxx_funcs funcs = { 0 };
	struct fwd_ctx c = { prefix, own_probed };
	size_t n = 0, before = pl->n;
	int fd, ret;

	if (skel->rodata->unwind_mode != MT_UNWIND_FP &&
	    (fd = open(pl->path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (mt_cxx_funcs_read(fd, probed_here, &c, &funcs))
			funcs.n = 0;
		close(fd);
	}
	for (size_t i = 0; i < NCXX; i++) {
		const struct mt_cxx_func *f = mt_cxx_funcs_find(&funcs,
								cxx_defs[i].func);

		if (!f || !f->forwards)
			defs[n++] = cxx_defs[i];
	}
	ret = plan_defs(pl, defs, n, "", false);
	*defines = pl->n > before || funcs.n > 0;
	mt_cxx_funcs_free(&funcs);
	return ret;
}

static void note_cxx(struct mt_probes *p, const struct mt_object *o)
{
	size_t len = strlen(p->cxx);

	snprintf(p->cxx + len, sizeof(p->cxx) - len, "%s%s", len ? ", " : "",
		 o->shown);
}

static bool is_libc(const struct mt_object *o)
{
	const char *fam = mt_allocator_family(mt_object_name(o));

	return fam && strcmp(fam, "glibc") == 0;
}

bool mt_probes_dynamic_loader(const struct mt_object *obj)
{
	const char *name = mt_object_name(obj);

	return strncmp(name, "ld-", 3) == 0 || strncmp(name, "ld.so", 5) == 0;
}

/* Whether OBJ's malloc and calloc may be marked MT_COOKIE_LEAF. */
static bool leaf_allocator(const struct mt_probes *p,
			   const struct mt_object *obj, const char *prefix)
{
	return !p->want_mmap && !prefix[0] &&
	       mt_allocator_family(mt_object_name(obj)) != NULL;
}

void mt_probes_init(struct mt_probes *p, pid_t pid, enum mt_link_mode mode,
		    bool mmap)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->mode = mode;
	p->want_mmap = mmap;
}

/*
 * OBJ's plan into E, in a role: with ALLOC_FAMILY its malloc family (and
 * then calls from its operators to it count as probed), its operator
 * new/delete, with --mmap a libc's mmap; placed.  From P->cache when it
 * has it, else read and kept there.  Returns 0 or the malloc family's
 * -errno; *CXX_ERR: new/delete's (then E->defines_cxx is false).
 */
static int plan_object(const struct mt_probes *p,
		       const struct memleak_bpf *skel,
		       const struct mt_object *obj, bool alloc_family,
		       const char *prefix, struct mt_plan_entry *e,
		       int *cxx_err)
{
	bool leaf = alloc_family && leaf_allocator(p, obj, prefix);
	bool mmap = p->want_mmap && is_libc(obj);
	const struct mt_plan_entry *hit = NULL;
	struct mt_plan_key key;
	bool cacheable = p->cache &&
			 mt_plan_key_of(&key, obj->path, obj->dev, obj->ino,
					alloc_family, leaf, mmap) == 0;
	int ret = 0;

	*cxx_err = 0;
	if (cacheable)
		hit = mt_plan_cache_find(p->cache, &key);
	if (hit) {
		*e = *hit;
	} else {
		memset(e, 0, sizeof(*e));
		e->plan.path = obj->path;
		if (alloc_family)
			ret = plan_defs(&e->plan, alloc_defs, NALLOC, prefix, leaf);
		if (ret == 0)
			*cxx_err = plan_cxx(&e->plan, skel, prefix, alloc_family,
					    &e->defines_cxx);
		if (*cxx_err)
			e->defines_cxx = false;
		if (ret == 0 && mmap &&
		    plan_defs(&e->plan, mmap_defs, NMMAP, "", false) == 0)
			e->has_mmap = true;
		/* Unreadable or without the hook: stacks still ask for the
		 * tables of the files they meet. */
		if (ret == 0 && mt_probes_dynamic_loader(obj))
			plan_defs(&e->plan, dl_defs, NDL, "", false);
		if (ret == 0)
			plan_place(&e->plan);
		if (ret == 0 && *cxx_err == 0 && cacheable) {
			e->key = key;
			mt_plan_cache_add(p->cache, e); /* else: read again */
		}
	}
	e->plan.path = obj->path;
	e->plan.dev = obj->dev;
	e->plan.ino = obj->ino;
	return ret;
}

/* What an image's probes are to be. */
struct image_plan {
	struct mt_plan *plans;  /* the allocator's first, then those with any */
	size_t n;
	char cxx[sizeof(((struct mt_probes *)0)->cxx)];
	bool mmap;
};

/*
 * The plans of the image of OBJS, whose allocator is ALLOC (it must have
 * malloc: else -ENOENT), as P's process is to have them (its mode, --mmap,
 * cache).  A library that cannot be read has no new/delete for us.
 * Returns 0 or -errno; IP->plans is to be freed either way.
 */
static int plan_image(const struct mt_probes *p,
		      const struct memleak_bpf *skel,
		      const struct mt_allocator *alloc, const char *prefix,
		      const struct mt_objects *objs, struct image_plan *ip)
{
	struct mt_plan_entry e;
	int ret = 0, cxx_err;
	size_t len;

	memset(ip, 0, sizeof(*ip));
	ip->plans = calloc(objs->n + 1, sizeof(*ip->plans));
	if (!ip->plans)
		return -ENOMEM;
	ip->n = 1;
	for (size_t i = 0; i < objs->n && ret == 0; i++) {
		const struct mt_object *o = &objs->v[i];
		bool is_alloc = i == alloc->index;

		ret = plan_object(p, skel, o, is_alloc, prefix, &e, &cxx_err);
		if (ret == 0 && is_alloc &&
		    (!e.plan.n || kind_of(e.plan.cookies[0]) != MT_CALL_MALLOC))
			ret = -ENOENT; /* no malloc: not an allocator */
		if (ret)
			break;
		if (e.defines_cxx) {
			len = strlen(ip->cxx);
			snprintf(ip->cxx + len, sizeof(ip->cxx) - len, "%s%s",
				 len ? ", " : "", o->shown);
		}
		ip->mmap |= e.has_mmap;
		if (is_alloc)
			ip->plans[0] = e.plan;
		else if (e.plan.n)
			ip->plans[ip->n++] = e.plan;
	}
	return ret;
}

int mt_probes_attach(struct mt_probes *p, struct memleak_bpf *skel, pid_t pid,
		     const struct mt_allocator *alloc, const char *prefix,
		     const struct mt_objects *objs, enum mt_link_mode mode,
		     bool mmap)
{
	struct image_plan ip;
	int ret;

	mt_probes_init(p, pid, mode, mmap);
	ret = plan_image(p, skel, alloc, prefix, objs, &ip);
	if (ret == 0) {
		memcpy(p->cxx, ip.cxx, sizeof(p->cxx));
		p->mmap = ip.mmap;
		ret = attach_placed(p, skel, pid, ip.plans, ip.n);
	}
	free(ip.plans);
	return ret;
}

/* The index of the plan in PLANS (N) of OLD's file, if it is the same as
 * OLD; else N. */
static size_t same_plan(const struct mt_plan *plans, size_t n,
			const struct mt_plan *old)
{
	for (size_t i = 0; i < n; i++) {
		const struct mt_plan *pl = &plans[i];

		if (pl->dev != old->dev || pl->ino != old->ino)
			continue;
		if (pl->n == old->n && pl->nret == old->nret &&
		    !memcmp(pl->offs, old->offs, pl->n * sizeof(pl->offs[0])) &&
		    !memcmp(pl->cookies, old->cookies, pl->n * sizeof(pl->cookies[0])) &&
		    !memcmp(pl->ret_offs, old->ret_offs, pl->nret * sizeof(pl->ret_offs[0])))
			return i;
		return n;
	}
	return n;
}

/* How many of P's plans are in the file DEV, INO. */
static size_t plans_in(const struct mt_probes *p, dev_t dev, ino_t ino)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nplans; i++)
		k += p->plans[i].dev == dev && p->plans[i].ino == ino;
	return k;
}

/* Keep L (its file's identity too) in P. */
static int keep_link(struct mt_probes *p, const struct mt_probe_link *l)
{
	int ret = keep(p, l->link, l->fd);

	if (ret == 0) {
		p->links[p->nlinks - 1].dev = l->dev;
		p->links[p->nlinks - 1].ino = l->ino;
	}
	return ret;
}

/* Is L in the file of a plan in PLANS (N) marked in KEPT? */
static bool stays(const struct mt_probe_link *l, const struct mt_plan *plans,
		  const bool *kept, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kept[i] && plans[i].dev == l->dev && plans[i].ino == l->ino)
			return true;
	return false;
}

/*
 * Sort P's links into NOW (those of the plans marked in KEPT), GONE (those
 * of files OBJS does not hold) and detached now (the others: they would
 * probe the new image twice).  P is left without links; a link that
 * cannot be moved for want of memory is detached.  Returns 0 or -ENOMEM.
 */
static int sort_links(struct mt_probes *p, struct mt_probes *now,
		      struct mt_probes *gone, const struct image_plan *ip,
		      const bool *kept, const struct mt_objects *objs)
{
	struct mt_object o = { 0 };
	int ret = 0, err;

	for (size_t l = 0; l < p->nlinks; l++) {
		const struct mt_probe_link *lk = &p->links[l];

		o.dev = lk->dev;
		o.ino = lk->ino;
		if (stays(lk, ip->plans, kept, ip->n)) {
			/* keep() closes what it cannot keep */
			err = keep_link(now, lk);
			ret = ret ? ret : err;
		} else if (mt_objects_has(objs, &o) || keep_link(gone, lk)) {
			if (lk->link)
				bpf_link__destroy(lk->link);
			if (lk->fd >= 0)
				close(lk->fd);
		}
	}
	p->nlinks = 0;
	return ret;
}

int mt_probes_exec(struct mt_probes *p, struct memleak_bpf *skel,
		   const struct mt_allocator *alloc, const char *prefix,
		   const struct mt_objects *objs, bool keep,
		   struct mt_probes *gone)
{
	struct image_plan ip;
	struct mt_probes now;
	struct mt_plan *fresh = NULL;
	bool *kept = NULL;
	size_t nfresh = 0;
	int ret;

	mt_probes_init(gone, p->pid, p->mode, p->want_mmap);
	mt_probes_init(&now, p->pid, p->mode, p->want_mmap);
	now.cache = p->cache;
	ret = plan_image(p, skel, alloc, prefix, objs, &ip);
	if (ret)
		goto cleanup;
	kept = calloc(ip.n, sizeof(*kept));
	fresh = calloc(ip.n, sizeof(*fresh));
	if (!kept || !fresh) {
		ret = -ENOMEM;
		goto cleanup;
	}
	/* The plans that stay, with their links: those of a file planned
	 * once, the same in the new image. */
	for (size_t j = 0; keep && j < p->nplans && ret == 0; j++) {
		const struct mt_plan *old = &p->plans[j];
		size_t i = same_plan(ip.plans, ip.n, old);

		if (i == ip.n || kept[i] || plans_in(p, old->dev, old->ino) != 1)
			continue;
		kept[i] = true;
		ret = remember(&now, old);
		now.nfuncs += alloc_funcs(old);
	}
	if (ret == 0)
		ret = sort_links(p, &now, gone, &ip, kept, objs);
	if (ret)
		goto cleanup;
	for (size_t i = 0; i < ip.n; i++)
		if (!kept[i] && ip.plans[i].n)
			fresh[nfresh++] = ip.plans[i];
	memcpy(now.cxx, ip.cxx, sizeof(now.cxx));
	now.mmap = ip.mmap;
	ret = attach_placed(&now, skel, now.pid, fresh, nfresh);
cleanup:
	/* P's links not sorted yet (a failure before) are detached with it. */
	mt_probes_detach(p);
	*p = now;
	free(kept);
	free(fresh);
	free(ip.plans);
	return ret;
}

/* mt_probes_attach_object, *DEFINES_CXX saying whether OBJ defines
 * new/delete (then noted on P's line when NOTE). */
static int attach_object(struct mt_probes *p, struct memleak_bpf *skel,
			 const struct mt_object *obj, bool alloc_family,
			 const char *prefix, bool note, bool *defines_cxx)
{
	struct mt_plan_entry e;
	int cxx_err, ret = plan_object(p, skel, obj, alloc_family, prefix, &e,
				       &cxx_err);

	if (ret == 0)
		ret = cxx_err;
	*defines_cxx = ret == 0 && e.defines_cxx;
	if (*defines_cxx && note)
		note_cxx(p, obj);
	if (ret == 0 && e.has_mmap)
		p->mmap = true;
	if (ret == 0 && e.plan.n)
		ret = attach_placed(p, skel, p->pid, &e.plan, 1);
	return ret;
}

int mt_probes_attach_object(struct mt_probes *p, struct memleak_bpf *skel,
			    const struct mt_object *obj, bool alloc_family,
			    const char *prefix)
{
	bool cxx;

	return attach_object(p, skel, obj, alloc_family, prefix, true, &cxx);
}

int mt_probes_attach_standby(struct mt_probes *p, struct memleak_bpf *skel,
			     const struct mt_object *obj, bool alloc_family,
			     const char *prefix, bool *defines_cxx)
{
	return attach_object(p, skel, obj, alloc_family, prefix, false,
			     defines_cxx);
}

void mt_probes_note_cxx(struct mt_probes *p, const struct mt_object *obj)
{
	note_cxx(p, obj);
}

int mt_probes_attach_dl_hook(struct mt_probes *p, struct memleak_bpf *skel,
			     const struct mt_object *obj)
{
	struct mt_plan pl;
	int ret;

	if (!mt_probes_dynamic_loader(obj))
		return -EINVAL;
	memset(&pl, 0, sizeof(pl));
	pl.path = obj->path;
	ret = plan_defs(&pl, dl_defs, NDL, "", false);
	if (ret == 0 && !pl.n)
		ret = -ENOENT;
	if (ret)
		return ret;
	plan_place(&pl);
	pl.dev = obj->dev;
	pl.ino = obj->ino;
	return attach_placed(p, skel, p->pid, &pl, 1);
}

/* A path by which process PID reaches its mapping of the file with
 * dev/ino DEV and INO (proc_files.h), malloc()ed, or NULL. */
static char *mapped_path(pid_t pid, dev_t dev, ino_t ino)
{
	struct mt_objects objs;
	char *out = NULL;

	if (mt_objects_of_pid(pid, &objs))
		return NULL;
	for (size_t i = 0; i < objs.n && !out; i++)
		if (objs.v[i].dev == dev && objs.v[i].ino == ino)
			out = strdup(objs.v[i].path);
	mt_objects_free(&objs);
	return out;
}

/*
 * PATH (a plan's, naming the file with dev/ino DEV and INO) as process PID
 * reaches it.  A path through another process's /proc entry (its
 * map_files, its root: proc_files.c's) lasts only while that process keeps
 * the mapping: gone at its exec or exit.  A child just forked maps the
 * same files at the same addresses, so its own entry names the same
 * file.  Returns a malloc()ed path (PATH's copy when it is not such a
 * path, or the child's does not name that file), or NULL.
 */
static char *path_for(const char *path, pid_t pid, dev_t dev, ino_t ino)
{
	const char *rest = path + 6;
	struct stat st;
	char *out;

	if (pid <= 0 || strncmp(path, "/proc/", 6) != 0 || *rest < '0' || *rest > '9')
		return strdup(path);
	rest += strspn(rest, "0123456789");
	if (*rest != '/' || asprintf(&out, "/proc/%d%s", (int)pid, rest) < 0)
		return strdup(path);
	if (stat(out, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		return out;
	free(out);
	/* The path was of an image the process has left since (an exec,
	 * whose links stayed on files it maps again): the file among PID's
	 * mappings. */
	out = mapped_path(pid, dev, ino);
	return out ? out : strdup(path);
}

int mt_probes_attach_like(struct mt_probes *p, struct memleak_bpf *skel,
			  pid_t pid, const struct mt_probes *like)
{
	struct mt_plan *plans = calloc(like->nplans ? like->nplans : 1, sizeof(*plans));
	int ret = plans ? 0 : -ENOMEM;

	mt_probes_init(p, pid, like->mode, like->want_mmap);
	p->cache = like->cache;
	p->mmap = like->mmap;
	memcpy(p->cxx, like->cxx, sizeof(p->cxx));
	for (size_t i = 0; i < like->nplans && ret == 0; i++) {
		plans[i] = like->plans[i];
		plans[i].path = path_for(like->plans[i].path, pid,
					 like->plans[i].dev, like->plans[i].ino);
		if (!plans[i].path)
			ret = -ENOMEM;
	}
	if (ret == 0)
		ret = attach_placed(p, skel, pid, plans, like->nplans);
	for (size_t i = 0; plans && i < like->nplans; i++)
		free(plans[i].path);
	free(plans);
	if (ret)
		mt_probes_detach(p);
	return ret;
}

void mt_probes_move(struct mt_probes *to, struct mt_probes *from)
{
	*to = *from;
	from->links = NULL;
	from->nlinks = from->cap = 0;
	from->plans = NULL;
	from->nplans = 0;
}

void mt_probes_detach(struct mt_probes *p)
{
	for (size_t i = p->nlinks; i-- > 0;) {
		if (p->links[i].link)
			bpf_link__destroy(p->links[i].link);
		if (p->links[i].fd >= 0)
			close(p->links[i].fd);
	}
	for (size_t i = 0; i < p->nplans; i++)
		free(p->plans[i].path);
	free(p->plans);
	free(p->links);
	memset(p, 0, sizeof(*p));
}

/* Whether PL's Ith function is an allocator's (not ld.so's hook). */
static bool is_alloc_func(const struct mt_plan *pl, size_t i)
{
	return kind_of(pl->cookies[i]) != MT_CALL_DL_STATE;
}

size_t mt_probes_stepped(const struct mt_probes *p, size_t *total)
{
	size_t n = 0, all = 0;

	for (size_t k = 0; k < p->nplans; k++) {
		const struct mt_plan *pl = &p->plans[k];

		for (size_t i = 0; i < pl->n; i++) {
			if (!is_alloc_func(pl, i))
				continue;
			all++;
			n += pl->stepped[i];
		}
	}
	if (total)
		*total = all;
	return n;
}

void mt_probes_describe(const struct mt_probes *p, FILE *out)
{
	for (size_t k = 0; k < p->nplans; k++) {
		const struct mt_plan *pl = &p->plans[k];

		for (size_t i = 0; i < pl->n; i++)
			fprintf(out, "memtrace: probe %s in %s: +%" PRIu64 " (file offset 0x%" PRIx64 "), %s\n",
				pl->names[i] ? pl->names[i] : "?", pl->path,
				pl->offs[i] - pl->entry_offs[i], pl->offs[i],
				pl->stepped[i] ? "single-stepped (two traps a call)"
					       : "emulated by the kernel");
	}
}
