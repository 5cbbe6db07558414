/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * thread_slots.h: where a thread keeps its state (struct mt_inflight)
 * between an allocator call's entry and its return, included by
 * memleak.bpf.c.
 *
 * Task storage (bpf_task_storage_get) was some 40 ns a lookup on a VM,
 * three lookups per malloc and free.  "threads" is an array with a slot
 * per thread id modulo its size, found by an inlined array lookup: a
 * thread owns the slot of its id when it finds it free, for the rest of
 * its life, and releases it when it exits (thread_exit, memleak.bpf.c).
 * A slot's owner is told by its thread id and its task's start_time, so
 * that a thread id reused after its owner died never inherits its state.
 * A thread that finds its slot owned by another keeps its state in task
 * storage, as before, and so does a thread that had task storage before
 * its slot came free: each thread keeps its state in one place for life
 * (a nested call must see the outer one's depth).
 */
#ifndef MEMTRACE_BPF_THREAD_SLOTS_H
#define MEMTRACE_BPF_THREAD_SLOTS_H

#define MT_THREAD_SLOT_BITS 13

/* Slots less 1 (a power of two): set by the loader with the map's size
 * (MEMTRACE_THREAD_SLOTS, for tests: 1 makes most threads use task
 * storage). */
const volatile __u32 thread_slot_mask = (1U << MT_THREAD_SLOT_BITS) - 1;

struct mt_thread_slot {
	__u32 tid;    /* the owner's thread id; 0: free */
	__u32 pad;
	__u64 start;  /* the owner's task start_time */
	struct mt_inflight f;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1U << MT_THREAD_SLOT_BITS);
	__type(key, __u32);
	__type(value, struct mt_thread_slot);
} threads SEC(".maps");

/* Per-thread state in task storage, freed by the kernel with the thread:
 * for the threads whose slot is owned by another. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mt_inflight);
} inflight SEC(".maps");

/* This thread's slot of "threads", owned or not; NULL never in practice. */
static __always_inline struct mt_thread_slot *thread_slot_of(__u32 tid)
{
	__u32 idx = tid & thread_slot_mask;

	return bpf_map_lookup_elem(&threads, &idx);
}

/*
 * The current thread's state; CREATE: made on first use (a slot taken or
 * task storage made).  NULL when there is none (or none could be made).
 */
static __always_inline struct mt_inflight *thread_find(bool create)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mt_thread_slot *s = thread_slot_of(tid);
	__u64 start = task->start_time;
	struct mt_inflight *f;

	if (s && s->tid == tid && s->start == start)
		return &s->f;
	f = bpf_task_storage_get(&inflight, task, 0, 0);
	if (f || !create)
		return f;
	if (s && tid && s->tid == 0 &&
	    __sync_val_compare_and_swap(&s->tid, 0, tid) == 0) {
		s->start = start;
		__builtin_memset(&s->f, 0, sizeof(s->f));
		return &s->f;
	}
	return bpf_task_storage_get(&inflight, task, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The current thread exits: its slot, if it owns one, is free again. */
static __always_inline void thread_release(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mt_thread_slot *s = thread_slot_of(tid);

	if (s && s->tid == tid && s->start == task->start_time) {
		s->start = 0;
		__sync_val_compare_and_swap(&s->tid, tid, 0);
	}
}

#endif /* MEMTRACE_BPF_THREAD_SLOTS_H */
