// SPDX-License-Identifier: MIT
/* timeline.c: sampling the per-process totals every interval (timeline.h). */
#include "timeline.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "follow.h"
#include "memleak.skel.h"
#include "proc_state.h"
#include "timeline_svg.h"
#include "loop.h"

int mt_timeline_check(const struct mt_options *o)
{
	const char *paths[] = { o->timeline_csv, o->timeline_svg };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int err = paths[i] ? mt_outfile_check(paths[i]) : 0;

		if (err) {
			fprintf(stderr, "memtrace: cannot write '%s': %s\n",
				paths[i], mt_outfile_strerror(err));
			return 1;
		}
	}
	return 0;
}

void mt_timeline_size(struct memleak_bpf *skel, bool on)
{
	skel->rodata->timeline = on;
	/* Off, the maps are not used: keep them tiny. */
	bpf_map__set_max_entries(skel->maps.proc_totals, on ? MT_MAX_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.proc_slots, on ? MT_MAX_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.free_slots, on ? MT_MAX_PROCS : 1);
}

int mt_timeline_init(struct mt_timeline *tl, struct memleak_bpf *skel,
		     const struct mt_options *o, double start)
{
	const struct bpf_map *map = skel->maps.proc_totals;
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)bpf_map__max_entries(map) * sizeof(*tl->totals);
	int ret;

	memset(tl, 0, sizeof(*tl));
	if (o->timeline_interval <= 0)
		return 0;
	tl->skel = skel;
	tl->interval = tl->data.interval = o->timeline_interval;
	tl->csv_path = o->timeline_csv;
	tl->svg_path = o->timeline_svg;
	tl->totals_len = (n + (size_t)page - 1) / (size_t)page * (size_t)page;
	tl->totals = mmap(NULL, tl->totals_len, PROT_READ | PROT_WRITE,
			  MAP_SHARED, bpf_map__fd(map), 0);
	if (tl->totals == MAP_FAILED) {
		tl->totals = NULL;
		ret = -errno;
		fprintf(stderr, "memtrace: cannot map the timeline's totals: %s\n",
			strerror(-ret));
		goto cleanup;
	}
	tl->slots = calloc(MT_MAX_PROCS, sizeof(*tl->slots));
	if (!tl->slots) {
		ret = -ENOMEM;
		fprintf(stderr, "memtrace: out of memory for the timeline\n");
		goto cleanup;
	}
	if (tl->csv_path) {
		ret = mt_tl_csv_open(&tl->csv, tl->csv_path, o->timeline_max_size);
		if (ret) {
			fprintf(stderr, "memtrace: cannot write '%s': %s\n",
				tl->csv_path, mt_outfile_strerror(ret));
			goto cleanup;
		}
		tl->csv_open = true;
	}
	tl->on = true;
	tl->t0 = start;
	tl->next = mt_loop_now() + tl->interval;
	return 0;
cleanup:
	/* Off, and failed: finish says so (the run's exit status is 1). */
	mt_timeline_free(tl);
	tl->error = ret;
	return ret;
}

/* The name of process PID: the BPF program's, else /proc's, else "?". */
static void comm_of(struct mt_timeline *tl, uint32_t pid, char *buf,
		    size_t len)
{
	if (!mt_follow_comm(tl->skel, pid, buf, len) &&
	    !mt_proc_comm((pid_t)pid, buf, len))
		snprintf(buf, len, "?");
}

static bool gone(uint32_t pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* Slot I's process exited: the BPF program may hand the slot out again. */
static void recycle(struct mt_timeline *tl, uint32_t i)
{
	uint32_t pid = tl->slots[i].pid;

	bpf_map_delete_elem(bpf_map__fd(tl->skel->maps.proc_slots), &pid);
	memset(&tl->totals[i], 0, sizeof(tl->totals[i]));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	bpf_map_update_elem(bpf_map__fd(tl->skel->maps.free_slots), NULL, &i,
			    BPF_ANY);
	tl->slots[i].used = false;
}

/* A CSV write failed: say so once, and write no more. */
static void csv_failed(struct mt_timeline *tl, int err)
{
	if (!tl->error)
		fprintf(stderr, "memtrace: cannot write '%s': %s: the timeline file stops here\n",
			tl->csv_path, mt_outfile_strerror(err));
	tl->error = err;
	mt_tl_csv_close(&tl->csv);
	tl->csv_open = false;
}

/*
 * Slot I's point at T, its in use added to *INUSE; RECYCLE: forget it if
 * its process exited.
 */
static int sample_slot(struct mt_timeline *tl, uint32_t i, double t,
		       bool recycle_gone, uint64_t *inuse)
{
	struct mt_proc_totals *p = &tl->totals[i];
	struct mt_tl_slot *s = &tl->slots[i];
	uint32_t pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
	uint64_t exec_ns = __atomic_load_n(&p->exec_ns, __ATOMIC_RELAXED);
	struct mt_tl_values v;
	bool exited;
	char comm[16];
	int ret;

	if (!pid)
		return 0;
	if (!s->used || s->pid != pid) {
		comm_of(tl, pid, comm, sizeof(comm));
		ret = mt_tl_series_new(&tl->data, pid, comm, &s->series);
		if (ret)
			return ret;
		*s = (struct mt_tl_slot){ true, pid, s->series, 0, exec_ns };
	} else if (exec_ns != s->exec_ns) {
		/* It exec'd: the series takes its new name. */
		comm_of(tl, pid, comm, sizeof(comm));
		memcpy(tl->data.series[s->series].comm, comm, sizeof(comm));
		s->exec_ns = exec_ns;
	}
	/* Exited first: then what is read below is all it did. */
	exited = recycle_gone && gone(pid);
	v.max_inuse_bytes = __atomic_exchange_n(&p->peak_bytes, 0,
						__ATOMIC_SEQ_CST);
	v.inuse_bytes = __atomic_load_n(&p->inuse_bytes, __ATOMIC_RELAXED);
	v.inuse_objects = __atomic_load_n(&p->inuse_objects, __ATOMIC_RELAXED);
	v.alloc_bytes = __atomic_load_n(&p->alloc_bytes, __ATOMIC_RELAXED);
	v.alloc_objects = __atomic_load_n(&p->alloc_objects, __ATOMIC_RELAXED);
	v.free_bytes = __atomic_load_n(&p->free_bytes, __ATOMIC_RELAXED);
	v.free_objects = __atomic_load_n(&p->free_objects, __ATOMIC_RELAXED);
	/* The interval's largest: its peak, or where it started or ended. */
	if (s->inuse > v.max_inuse_bytes)
		v.max_inuse_bytes = s->inuse;
	if (v.inuse_bytes > v.max_inuse_bytes)
		v.max_inuse_bytes = v.inuse_bytes;
	s->inuse = v.inuse_bytes;
	*inuse += v.inuse_bytes;
	ret = mt_tl_point_add(&tl->data, s->series, t, &v);
	if (!ret && tl->csv_open) {
		ret = mt_tl_csv_add(&tl->csv, t, pid,
				    tl->data.series[s->series].comm, &v);
		if (ret)
			csv_failed(tl, ret);
		ret = 0;
	}
	if (!ret && exited) {
		tl->data.series[s->series].gone = true;
		/* What it left counts from now on in gone_inuse. */
		tl->gone_inuse += v.inuse_bytes;
		*inuse -= v.inuse_bytes;
		recycle(tl, i);
	}
	return ret;
}

static int sample(struct mt_timeline *tl, double t, bool recycle_gone)
{
	uint32_t n = __atomic_load_n(&tl->skel->bss->proc_slots_next,
				     __ATOMIC_ACQUIRE);
	uint64_t inuse = 0;
	int ret = 0;

	if (n > MT_MAX_PROCS)
		n = MT_MAX_PROCS;
	for (uint32_t i = 0; i < n && !ret; i++)
		ret = sample_slot(tl, i, t, recycle_gone, &inuse);
	if (!ret && tl->csv_open) {
		int err = mt_tl_csv_flush(&tl->csv);

		if (err)
			csv_failed(tl, err);
	}
	/* While recording (not the last sample): the keeper's moment. */
	if (!ret && recycle_gone && tl->on_sample) {
		tl->on_sample(tl->on_sample_ctx, t, inuse + tl->gone_inuse);
	}
	return ret;
}

int mt_timeline_sample(struct mt_timeline *tl, double t)
{
	return tl->on ? sample(tl, t, true) : 0;
}

void mt_timeline_timer(void *arg, double now)
{
	struct mt_timeline *tl = arg;

	/* Due (a timer of the loop), or nearly: never skip one. */
	if (!tl->on || now < tl->next - tl->interval / 2)
		return;
	if (mt_timeline_sample(tl, now - tl->t0) && !tl->error) {
		fprintf(stderr, "memtrace: out of memory for the timeline: it stops here\n");
		tl->error = -ENOMEM;
		tl->on = false;
	}
	tl->next += tl->interval;
	if (tl->next <= now)
		tl->next = now + tl->interval;
}

int mt_timeline_finish(struct mt_timeline *tl, double stop)
{
	int ret = 0;

	if (!tl->totals)
		return tl->error ? -1 : 0;
	/* Recording has stopped: these are the totals the report has. */
	if (tl->on && sample(tl, stop - tl->t0, false)) {
		fprintf(stderr, "memtrace: out of memory for the timeline\n");
		tl->error = -ENOMEM;
	}
	if (tl->csv_open) {
		ret = mt_tl_csv_close(&tl->csv);
		tl->csv_open = false;
		if (ret) {
			fprintf(stderr, "memtrace: cannot write '%s': %s\n",
				tl->csv_path, mt_outfile_strerror(ret));
			tl->error = ret;
		}
	}
	if (tl->svg_path) {
		ret = mt_tl_svg_write(tl->svg_path, &tl->data);
		if (ret) {
			fprintf(stderr, "memtrace: cannot write '%s': %s\n",
				tl->svg_path, mt_outfile_strerror(ret));
			tl->error = ret;
		}
	}
	return tl->error ? -1 : 0;
}

void mt_timeline_names(struct mt_timeline *tl, const struct mt_process *procs,
		       size_t n)
{
	for (size_t i = 0; i < tl->data.n; i++) {
		struct mt_tl_series *s = &tl->data.series[i];
		const char *comm;

		if (strcmp(s->comm, "?") != 0)
			continue;
		comm = mt_procs_comm(procs, n, s->pid);
		if (comm[0])
			snprintf(s->comm, sizeof(s->comm), "%s", comm);
	}
}

void mt_timeline_summary(const struct mt_timeline *tl, struct mt_summary *sum)
{
	if (!tl->totals) {
		sum->missing |= MT_FACT_TIMELINE;
		return;
	}
	mt_tl_summarize(&tl->data, tl->data.end_t, &sum->timeline);
}

void mt_timeline_free(struct mt_timeline *tl)
{
	if (tl->csv_open)
		mt_tl_csv_close(&tl->csv);
	if (tl->totals)
		munmap(tl->totals, tl->totals_len);
	free(tl->slots);
	mt_tl_data_free(&tl->data);
	memset(tl, 0, sizeof(*tl));
}
