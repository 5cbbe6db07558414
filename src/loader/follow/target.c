// SPDX-License-Identifier: MIT
/* target.c: finding the process to trace, or starting the command. */
#include "target.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "go_exe.h"
#include "proc_state.h"
#include "startup_clock.h"
#include "loop.h"

/* The thread-group id of PID (memtrace -p accepts a thread id too). */
static pid_t tgid_of(pid_t pid)
{
	char name[64], line[256];
	pid_t tgid = pid;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

bool mt_target_follows(const struct mt_options *o)
{
	return o->cmd && o->follow;
}

const char *mt_target_alloc_name(const struct mt_target *t)
{
	const struct mt_object *o = mt_allocator_object(&t->alloc, &t->objs);

	return o ? o->shown : "the allocator";
}

int mt_target_exited_while_attaching(const struct mt_target *t)
{
	return mt_fail("pid %d (%s) exited while memtrace was attaching: nothing traced",
		       (int)t->pid, t->comm);
}

/*
 * Choose the allocator among the target's objects; a message if none.
 * EXE is the target's executable: a Go program gets a note (its heap is
 * not malloc's), or the failure says why there is nothing to probe.
 */
static int choose_allocator(const struct mt_options *o, struct mt_target *t,
			    const char *exe)
{
	bool go = mt_go_exe(exe);

	if (mt_allocator_choose(&t->objs, o->allocator, o->symbol_prefix,
				&t->alloc) == 0) {
		if (go)
			fprintf(stderr, "memtrace: note: " MT_GO_NOTE "\n", t->comm);
		return 0;
	}
	if (t->pid > 0 && mt_proc_exiting(t->pid))
		return mt_target_exited_while_attaching(t);
	if (o->allocator)
		return mt_fail("no allocator '%s' with %smalloc in %s",
			       o->allocator, o->symbol_prefix, t->comm);
	if (go)
		return mt_fail("nothing to probe: no %smalloc: " MT_GO_NOTE,
			       o->symbol_prefix, t->comm);
	return mt_fail("%s: nothing to probe: no %smalloc in its executable, libc, jemalloc or tcmalloc",
		       t->comm, o->symbol_prefix);
}

#define LOADING_TRIES 100
#define LOADING_WAIT_US 5000

int mt_target_find(const struct mt_options *o, struct mt_target *t)
{
	enum mt_proc_state state;
	char exe[64];
	int ret;

	t->pid = tgid_of(o->pid);
	if (t->pid <= 0 || (kill(t->pid, 0) && errno == ESRCH))
		return mt_fail("no such process: %d", (int)o->pid);
	if (t->pid == getpid())
		return mt_fail("memtrace cannot trace itself");
	mt_proc_comm(t->pid, t->comm, sizeof(t->comm));
	state = mt_proc_state(t->pid);
	if (state == MT_PROC_KTHREAD)
		return mt_fail("pid %d (%s) is a kernel thread: it has no user-space allocator to trace",
			       (int)t->pid, t->comm);
	if (state == MT_PROC_ZOMBIE)
		return mt_fail("pid %d (%s) has exited (a zombie its parent has not reaped): nothing to trace",
			       (int)t->pid, t->comm);
	/* A process just exec'd (./server & memtrace -p $!) may not have
	 * its libraries yet: wait for them, up to 0.5 s. */
	for (int tries = 0;; tries++) {
		struct mt_allocator a;

		ret = mt_objects_of_pid(t->pid, &t->objs);
		if (ret || tries == LOADING_TRIES ||
		    !mt_objects_loading(t->pid, &t->objs) ||
		    mt_allocator_choose(&t->objs, o->allocator,
					o->symbol_prefix, &a) == 0)
			break;
		mt_objects_free(&t->objs);
		usleep(LOADING_WAIT_US);
	}
	if (ret == -ESRCH && state == MT_PROC_RUNNING)
		return mt_target_exited_while_attaching(t);
	if (ret == -ESRCH)
		return mt_fail("no such process: %d", (int)o->pid);
	if (ret)
		return mt_fail("cannot read the mappings of process %d: %s",
			       (int)t->pid, strerror(-ret));
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->pid);
	return choose_allocator(o, t, exe);
}

int mt_target_spawn(const struct mt_options *o, struct mt_target *t)
{
	uint64_t t0 = mt_loop_now_ns();
	char exe[PATH_MAX];
	const char *base;
	int ret = mt_child_resolve(o->cmd[0], exe, sizeof(exe));

	if (ret == -EACCES || ret == -EISDIR)
		return mt_fail("cannot run '%s': %s", o->cmd[0],
			       ret == -EISDIR ? "it is a directory" : "it is not an executable file");
	if (ret)
		return mt_fail("cannot run '%s': %s", o->cmd[0], strerror(-ret));
	/* The name the kernel will give it: the basename, cut to 15 bytes. */
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	memcpy(t->comm, base, strnlen(base, 15));
	t->comm[strnlen(base, 15)] = '\0';
	ret = mt_objects_of_exe(exe, &t->objs);
	if (ret)
		return mt_fail("cannot read '%s': %s", exe, strerror(-ret));
	if (choose_allocator(o, t, exe))
		return 1;
	t->child.follow = mt_target_follows(o);
	ret = mt_child_spawn(exe, o->cmd, &t->child);
	if (ret)
		return mt_fail("cannot start '%s': %s", exe, strerror(-ret));
	t->is_child = true;
	t->pid = t->child.pid;
	mt_startup_add(MT_STARTUP_SPAWN, t0);
	return 0;
}
