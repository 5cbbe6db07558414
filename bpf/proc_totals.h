/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * proc_totals.h: per-process totals for the timeline (--timeline-interval),
 * a unit of the BPF program of its own, included by memleak.bpf.c.
 *
 * Each traced process gets a slot in "proc_totals" (struct mt_proc_totals,
 * memleak.h), an array the loader mmap()s: it reads the totals with plain
 * loads and takes the peak with an atomic exchange.  "proc_slots" maps a
 * pid to its slot.  Slots are handed out by an atomic counter
 * (proc_slots_next, in .bss) and come back through the queue "free_slots",
 * to which the loader pushes the slot of a process that exited, zeroed.
 * A process that finds no slot is counted (MT_CNT_TIMELINE_FULL) and left
 * out of the timeline.  A thread caches its process's slot in its state
 * (mt_inflight.tl_slot): one hash lookup per thread, not per event.
 *
 * An allocation adds to alloc_* and in-use with fetch-and-add, whose old
 * value makes the new in-use exact, then raises peak_bytes to it with a
 * bounded compare-and-swap loop; a free subtracts what the block counted
 * for.  peak_bytes is therefore the exact maximum of in-use between two
 * exchanges by the loader (up to an allocation that races the exchange).
 * Heap blocks only; all of it only when the rodata flag timeline is set:
 * with --timeline-interval 0 the maps have one entry and no hook does
 * anything.  Needs BPF atomics with fetch (-mcpu=v3).
 *
 * The includer defines count().
 */
#ifndef MEMTRACE_BPF_PROC_TOTALS_H
#define MEMTRACE_BPF_PROC_TOTALS_H

/* CAS attempts to raise a peak: each failure means another CPU changed it. */
#define MT_PEAK_TRIES 8

/* --timeline-interval > 0: keep the per-process totals. */
const volatile bool timeline = false;

/* The next slot never handed out (the loader scans the slots below it). */
__u32 proc_slots_next;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct mt_proc_totals);
} proc_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} proc_slots SEC(".maps");

/* Slots of exited processes, zeroed by the loader, to be handed out again. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, MT_MAX_PROCS);
	__type(value, __u32);
} free_slots SEC(".maps");

/* A slot for PID, which has none in proc_slots yet; false if none is left. */
static __always_inline bool tl_new_slot(__u32 pid, __u32 *slot)
{
	struct mt_proc_totals *t;
	__u32 s, *found;
	int err;

	if (bpf_map_pop_elem(&free_slots, &s)) {
		if (proc_slots_next >= MT_MAX_PROCS)
			return false;
		s = __sync_fetch_and_add(&proc_slots_next, 1);
		if (s >= MT_MAX_PROCS)
			return false;
	}
	t = bpf_map_lookup_elem(&proc_totals, &s);
	if (!t)
		return false;
	err = bpf_map_update_elem(&proc_slots, &pid, &s, BPF_NOEXIST);
	if (err) {
		/* Another thread of PID was first: give S back. */
		bpf_map_push_elem(&free_slots, &s, 0);
		found = bpf_map_lookup_elem(&proc_slots, &pid);
		if (!found)
			return false;
		*slot = *found;
		return true;
	}
	t->pid = pid;
	*slot = s;
	return true;
}

/* The totals of process PID (F: its thread's state, may be NULL), or NULL. */
static __always_inline struct mt_proc_totals *
tl_totals(struct mt_inflight *f, __u32 pid)
{
	struct mt_proc_totals *t;
	__u32 slot, *found;

	if (f && f->tl_slot) {
		slot = f->tl_slot - 1;
		t = bpf_map_lookup_elem(&proc_totals, &slot);
		if (t && t->pid == pid)
			return t;
	}
	found = bpf_map_lookup_elem(&proc_slots, &pid);
	if (found)
		slot = *found;
	else if (!tl_new_slot(pid, &slot)) {
		count(MT_CNT_TIMELINE_FULL, 1);
		return NULL;
	}
	t = bpf_map_lookup_elem(&proc_totals, &slot);
	if (t && f)
		f->tl_slot = slot + 1;
	return t;
}

/* Raise T's peak to V, unless it is already as high. */
static __always_inline void tl_raise_peak(struct mt_proc_totals *t, __u64 v)
{
	__u64 cur = *(volatile __u64 *)&t->peak_bytes, prev;

	for (int i = 0; i < MT_PEAK_TRIES && cur < v; i++) {
		prev = __sync_val_compare_and_swap(&t->peak_bytes, cur, v);
		if (prev == cur)
			break;
		cur = prev;
	}
}

/*
 * Process PID allocated a heap block counting for BYTES and OBJECTS;
 * KEPT: it is in the allocs map (else it counts as freed at once).
 */
static __always_inline void tl_alloc(struct mt_inflight *f, __u32 pid,
				     __u64 bytes, __u64 objects, bool kept)
{
	struct mt_proc_totals *t;
	__u64 old;

	if (!timeline)
		return;
	t = tl_totals(f, pid);
	if (!t)
		return;
	__sync_fetch_and_add(&t->alloc_bytes, bytes);
	__sync_fetch_and_add(&t->alloc_objects, objects);
	if (!kept) {
		__sync_fetch_and_add(&t->free_bytes, bytes);
		__sync_fetch_and_add(&t->free_objects, objects);
		return;
	}
	old = __sync_fetch_and_add(&t->inuse_bytes, bytes);
	__sync_fetch_and_add(&t->inuse_objects, objects);
	tl_raise_peak(t, old + bytes);
}

/* Process PID released heap block INFO (gone from the allocs map). */
static __always_inline void tl_free(struct mt_inflight *f, __u32 pid,
				    __u64 bytes, __u64 objects, __u64 ts)
{
	struct mt_proc_totals *t = tl_totals(f, pid);

	/* A block of an image replaced since was released at the exec. */
	if (!t || ts < t->exec_ns)
		return;
	__sync_fetch_and_add(&t->inuse_bytes, -bytes);
	__sync_fetch_and_add(&t->inuse_objects, -objects);
	__sync_fetch_and_add(&t->free_bytes, bytes);
	__sync_fetch_and_add(&t->free_objects, objects);
}

/*
 * Process PID exec'd at NS: its blocks went with its old image, as the
 * loader's report says (collect.c): all it had in use counts as freed.
 * Its one thread is in the exec, so nothing else changes its totals.
 */
static __always_inline void tl_exec(__u32 pid, __u64 ns)
{
	struct mt_proc_totals *t;
	__u32 *slot;
	__u64 b, o;

	if (!timeline)
		return;
	slot = bpf_map_lookup_elem(&proc_slots, &pid);
	t = slot ? bpf_map_lookup_elem(&proc_totals, slot) : NULL;
	if (!t)
		return;
	t->exec_ns = ns;
	b = t->inuse_bytes;
	o = t->inuse_objects;
	__sync_fetch_and_add(&t->inuse_bytes, -b);
	__sync_fetch_and_add(&t->inuse_objects, -o);
	__sync_fetch_and_add(&t->free_bytes, b);
	__sync_fetch_and_add(&t->free_objects, o);
}

#endif /* MEMTRACE_BPF_PROC_TOTALS_H */
