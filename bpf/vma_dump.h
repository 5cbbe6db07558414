/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vma_dump.h: a process's executable file mappings, told to the loader
 * by the kernel (struct mt_vma_record in memleak.h) on the unwind_copies
 * ring buffer, ahead of the copies that need them.  A process that lives
 * a few milliseconds is gone, /proc/PID with it, before the loader reads
 * its copies; from these records the loader knows where each file was
 * and opens it by its path, checked against the kernel's dev and inode
 * (src/loader/registry/kernel_vmas.c).
 *
 * Sent at a process's first stack or copy (per address space: again
 * after an exec), and at ld.so's debugger hook, which a dlopen calls
 * once before and once after it maps objects: a stack through a library
 * the process just loaded needs its mapping told, whether it is copied
 * or walked here, and the process may exit at once.  Not at every change
 * of mm->map_count: anonymous mappings (malloc's arenas) change it all
 * the time, and a dump per copy flooded the ring.
 * The includer includes unwind_defer.h first (the ring buffer).
 */
#ifndef MEMTRACE_BPF_VMA_DUMP_H
#define MEMTRACE_BPF_VMA_DUMP_H

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it,
				 struct task_struct *task, __u64 addr) __ksym __weak;
extern struct vm_area_struct *
bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

/* Per process: the address space last told of, its map count then, and
 * the stacks it had copied (unwind_defer.h: who gives way in a full ring). */
struct vma_mark {
	__u64 mm;
	__u64 map_count;
	__u64 copies;
};

/* Made on demand (an idle trace holds no kernel memory for it), and an
 * entry deleted when its process exits (thread_exit). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct vma_mark);
} vma_marks SEC(".maps");

/* A record being made, with room for a name read past the path's end. */
struct vma_scratch {
	struct mt_vma_record r;
	char slack[MT_VMA_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_scratch);
} vma_scratch SEC(".maps");

/* The path of file FILE (struct file *) from its process's root (its
 * mount's, through the mounts above it), into S's record: names leaf
 * first, each ended by a NUL.  A global function: verified once, not
 * once for each mapping of the loop that calls it. */
__noinline int vma_path(struct vma_scratch *s, __u64 file)
{
	struct file *f = (struct file *)file;
	struct mt_vma_record *r;
	struct dentry *d;
	struct vfsmount *vm;
	struct mount *m;
	__u32 off = 0;

	if (!s)
		return 0;
	r = &s->r;
	d = BPF_CORE_READ(f, f_path.dentry);
	vm = BPF_CORE_READ(f, f_path.mnt);
	m = container_of(vm, struct mount, mnt);

	r->flags |= MT_VMA_PATH_CUT;
	for (int i = 0; i < 32; i++) {
		struct dentry *parent = BPF_CORE_READ(d, d_parent);
		struct dentry *root = BPF_CORE_READ(m, mnt.mnt_root);
		const unsigned char *name;
		struct mount *up;
		long len;

		if (d == root) {
			up = BPF_CORE_READ(m, mnt_parent);
			if (up == m) {
				r->flags &= ~MT_VMA_PATH_CUT;
				break; /* the root */
			}
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = up;
			continue;
		}
		if (d == parent || off >= MT_VMA_PATH_MAX)
			break;
		name = BPF_CORE_READ(d, d_name.name);
		off &= MT_VMA_PATH_MAX - 1;
		len = bpf_probe_read_kernel_str(&r->path[off], MT_VMA_PATH_MAX,
						name);
		if (len <= 0)
			break;
		off += (__u32)len;
		d = parent;
	}
	r->path_len = off < MT_VMA_PATH_MAX ? off : MT_VMA_PATH_MAX;
	return 0;
}

/*
 * Tell the loader of the current process's (PID's) executable file
 * mappings, unless it was told of this address space already (and of
 * its mappings since its last dlopen).
 */
__noinline int vma_dump(__u32 pid)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = t->mm;
	struct vma_mark mk, *old;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct vma_scratch *s;
	__u32 zero = 0, first = MT_VMA_FIRST;
	int ok = 1;

	if (!defer_mode || !mm || !bpf_iter_task_vma_new)
		return 0;
	mk.mm = (__u64)mm;
	mk.map_count = (__u64)mm->map_count;
	old = bpf_map_lookup_elem(&vma_marks, &pid);
	if (old && old->mm == mk.mm && old->map_count != ~0ULL)
		return 0;
	mk.copies = old && old->mm == mk.mm ? old->copies : 0;
	if (old && old->mm != mk.mm)
		first |= MT_VMA_NEW_MM; /* an exec: the old image's stay told */
	s = bpf_map_lookup_elem(&vma_scratch, &zero);
	if (!s)
		return 0;
	bpf_map_update_elem(&vma_marks, &pid, &mk, BPF_ANY);
	if (bpf_iter_task_vma_new(&it, t, 0))
		ok = 0; /* the mmap lock was taken: at the next stack */
	while (ok && (vma = bpf_iter_task_vma_next(&it))) {
		struct file *f = vma->vm_file;
		__u64 size;

		if (!f || !(vma->vm_flags & MT_VM_EXEC))
			continue;
		s->r.kind = 0;
		s->r.pid = pid;
		s->r.flags = first;
		s->r.start = vma->vm_start;
		s->r.end = vma->vm_end;
		s->r.offset = vma->vm_pgoff << MT_UW_PAGE_SHIFT;
		s->r.file.ino = f->f_inode->i_ino;
		s->r.file.dev = f->f_inode->i_sb->s_dev;
		s->r.pad = 0;
		vma_path(s, (__u64)BPF_CORE_READ(vma, vm_file));
		size = offsetof(struct mt_vma_record, path) + s->r.path_len;
		asm volatile("" : "+r"(size));
		if (size > sizeof(s->r) ||
		    bpf_ringbuf_output(&unwind_copies, &s->r, size, 0))
			ok = 0;
		first = 0;
	}
	bpf_iter_task_vma_destroy(&it);
	if (!ok)
		bpf_map_delete_elem(&vma_marks, &pid); /* again, later */
	return 0;
}

/* System-wide (set by the loader): every process calls ld.so's hook as
 * it starts, before its first stack; only one told of already has news
 * at the hook (vma_told). */
const volatile bool vma_system = false;

/* Was the current address space of PID told of (a stack since its exec)? */
static __always_inline bool vma_told(__u32 pid)
{
	struct vma_mark *m = bpf_map_lookup_elem(&vma_marks, &pid);

	return m && m->mm == (__u64)bpf_get_current_task_btf()->mm;
}

/* PID is mapping or has mapped objects (a dlopen, at ld.so's hook): tell
 * of its mappings again now, its count of copies kept. */
static __always_inline void vma_mapped(__u32 pid)
{
	struct vma_mark *m = bpf_map_lookup_elem(&vma_marks, &pid);

	if (!m)
		return;
	m->map_count = ~0ULL;
	vma_dump(pid);
}

#endif /* MEMTRACE_BPF_VMA_DUMP_H */
