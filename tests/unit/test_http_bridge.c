/* SPDX-License-Identifier: MIT */
/*
 * test_http_bridge.c: the reference counts of the HTTP bridge
 * (src/loader/serve/http_bridge.c, included here so that its static functions
 * can be driven one step at a time, with the loop, the tracer and the BPF
 * reads stubbed).  A process unchanged between two reads keeps its copy
 * (its symbols are found again); a changed one gets a new copy and the old
 * one goes with the last read that holds it; the requests waiting at one
 * time share one read; everything is freed once (the ASan build checks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/loader/serve/http_bridge.c"

/* ---- stubs: a tracer whose processes the test sets ---- */

static struct mt_module world_mods[2];
static struct mt_process world[2];
static int collects;
static bool client_gone;

int mt_tracer_collect(struct mt_tracer *tr, struct mt_raw_profile *raw)
{
	(void)tr;
	collects++;
	raw->procs = world; /* the tracer's: borrowed */
	raw->nprocs = 2;
	return 0;
}

double mt_loop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct timespec mt_loop_timespec(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (double)(time_t)t) * 1e9) };

	return ts;
}

int mt_loop_add_fd(struct mt_loop *l, int fd, mt_loop_fd_fn fn, void *ctx)
{
	(void)l, (void)fd, (void)fn, (void)ctx;
	return 0;
}

int mt_loop_add_timer(struct mt_loop *l, double period, double after,
		      mt_loop_timer_fn fn, void *ctx)
{
	(void)l, (void)period, (void)after, (void)fn, (void)ctx;
	return 0;
}

bool mt_http_client_gone(void)
{
	return client_gone;
}

int mt_collect_counters(struct memleak_bpf *skel, uint64_t *out)
{
	(void)skel;
	memset(out, 0, sizeof(((struct mt_http_metrics *)0)->counters));
	return 0;
}

void mt_deferred_unwind_counters(uint64_t *counters)
{
	(void)counters;
}

int mt_http_write_metrics(FILE *out, const struct mt_http_metrics *m)
{
	(void)m;
	fputs("metrics\n", out);
	return 0;
}

int mt_tl_write_svg(FILE *out, const struct mt_tl_data *d)
{
	(void)out, (void)d;
	return -ENODATA;
}

/* ---- the test's world ---- */

static struct mt_tracer tracer;
static struct mt_http_bridge bridge;

static void set_world(const char *lib1)
{
	for (int i = 0; i < 2; i++) {
		world_mods[i] = (struct mt_module){ .fd = -1, .start = 0x1000,
						    .end = 0x2000 };
		world[i] = (struct mt_process){ .pid = 100 + (uint32_t)i,
						.mods = &world_mods[i],
						.nmods = 1 };
		snprintf(world[i].comm, sizeof(world[i].comm), "proc%d", i);
	}
	world_mods[0].path = (char *)"/lib/a.so";
	world_mods[1].path = (char *)lib1;
}

static int setup(void **state)
{
	(void)state;
	collects = 0;
	client_gone = false;
	set_world("/lib/b.so");
	return mt_http_bridge_init(&bridge, &tracer);
}

static int teardown(void **state)
{
	(void)state;
	mt_http_bridge_close(&bridge);
	mt_http_bridge_free(&bridge);
	return 0;
}

static void put(struct mt_http_raw *r)
{
	pthread_mutex_lock(&bridge.lock);
	raw_put_locked(r);
	pthread_mutex_unlock(&bridge.lock);
}

/* Two reads of the same processes share their copies; a process that
 * changed gets a new copy, the old one kept by the reads that have it. */
static void test_copies_shared(void **state)
{
	struct mt_http_raw *r1, *r2, *r3;
	struct mt_http_proc *a, *b_old;

	(void)state;
	assert_int_equal(read_profile(&bridge, &r1), 0);
	assert_int_equal(read_profile(&bridge, &r2), 0);
	assert_int_equal(collects, 2);
	assert_ptr_not_equal(r1->procs, r2->procs);
	assert_ptr_equal(bridge.procs, r2->procs);
	assert_int_equal(r1->procs->refs, 1); /* the bridge let it go */
	assert_int_equal(r2->procs->refs, 2); /* the bridge's and r2's */
	a = r1->procs->copies[0];
	b_old = r1->procs->copies[1];
	assert_ptr_equal(r2->procs->copies[0], a);
	assert_ptr_equal(r2->procs->copies[1], b_old);
	assert_int_equal(a->refs, 2);
	/* The profile's processes are the copies', not the tracer's. */
	assert_ptr_equal(r1->raw.procs, r1->procs->procs);
	assert_ptr_not_equal(r1->raw.procs[1].mods, world[1].mods);
	assert_string_equal(r1->raw.procs[1].mods[0].path, "/lib/b.so");

	/* Process 1 maps another file now. */
	set_world("/lib/c.so");
	assert_int_equal(read_profile(&bridge, &r3), 0);
	assert_ptr_equal(r3->procs->copies[0], a);
	assert_ptr_not_equal(r3->procs->copies[1], b_old);
	assert_string_equal(r3->raw.procs[1].mods[0].path, "/lib/c.so");
	assert_int_equal(a->refs, 3);
	assert_int_equal(b_old->refs, 2); /* r1's and r2's sets */
	assert_int_equal(r3->procs->copies[1]->refs, 1);

	/* Each read held once: r1 and r2 release their sets, and with them
	 * the old copy (ASan: freed once, never read after). */
	r1->refs = r2->refs = r3->refs = 1;
	put(r1);
	assert_int_equal(b_old->refs, 1);
	assert_int_equal(a->refs, 2);
	put(r2);
	assert_int_equal(a->refs, 1);
	assert_int_equal(r3->procs->refs, 2);
	put(r3);
	assert_int_equal(bridge.procs->refs, 1); /* the bridge's alone */
	assert_int_equal(a->refs, 1);
}

struct caller {
	enum mt_http_job_kind kind;
	double timeout;
	int ret;
	struct mt_http_result res;
};

static void *call(void *arg)
{
	struct caller *c = arg;

	c->ret = mt_http_bridge_call(&bridge, c->kind, c->timeout, &c->res);
	return NULL;
}

static void wait_queued(size_t n)
{
	for (int i = 0; i < 10000; i++) {
		size_t q;

		pthread_mutex_lock(&bridge.lock);
		q = bridge.queued;
		pthread_mutex_unlock(&bridge.lock);
		if (q == n)
			return;
		usleep(1000);
	}
	fail_msg("%zu jobs never queued", n);
}

/* The requests waiting at one time share one read, a reference each. */
static void test_one_read_for_waiting_requests(void **state)
{
	struct caller c[3] = {
		{ MT_HTTP_JOB_PROFILE, 30, 0, { 0 } },
		{ MT_HTTP_JOB_PROFILE, 30, 0, { 0 } },
		{ MT_HTTP_JOB_METRICS, 30, 0, { 0 } },
	};
	pthread_t t[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_create(&t[i], NULL, call, &c[i]), 0);
		wait_queued((size_t)i + 1);
	}
	serve(&bridge);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(collects, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(c[i].ret, 0);
	assert_non_null(c[0].res.raw);
	assert_ptr_equal(c[0].res.raw, c[1].res.raw);
	assert_int_equal(c[0].res.raw->refs, 2);
	assert_null(c[2].res.raw);
	assert_string_equal(c[2].res.text, "metrics\n");
	mt_http_result_free(&bridge, &c[0].res);
	assert_null(c[0].res.raw);
	assert_int_equal(c[1].res.raw->refs, 1);
	mt_http_result_free(&bridge, &c[1].res);
	mt_http_result_free(&bridge, &c[2].res);
}

/* A request that gives up before the loop took its job leaves nothing
 * queued; one whose client went away is cancelled; after close, every
 * request fails at once. */
static void test_given_up_and_closed(void **state)
{
	struct caller c = { MT_HTTP_JOB_PROFILE, 0.05, 0, { 0 } };

	(void)state;
	call(&c);
	assert_int_equal(c.ret, -ETIMEDOUT);
	assert_int_equal(bridge.queued, 0);
	assert_null(bridge.queue);
	client_gone = true;
	c.timeout = 30;
	call(&c);
	assert_int_equal(c.ret, -ECANCELED);
	assert_int_equal(bridge.queued, 0);
	client_gone = false;
	mt_http_bridge_close(&bridge);
	call(&c);
	assert_int_equal(c.ret, -ESHUTDOWN);
	assert_int_equal(collects, 0);
}

/* A job the loop has taken when its request gives up: the loop frees it
 * and its reference when it is done. */
static void test_abandoned_job_freed_by_loop(void **state)
{
	struct caller c = { MT_HTTP_JOB_PROFILE, 30, 0, { 0 } };
	struct mt_http_job *jobs;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, call, &c), 0);
	wait_queued(1);
	/* The loop takes the job (as serve does), then the client leaves. */
	pthread_mutex_lock(&bridge.lock);
	jobs = bridge.queue;
	bridge.queue = NULL;
	bridge.queued = 0;
	client_gone = true;
	pthread_cond_broadcast(&bridge.cond);
	pthread_mutex_unlock(&bridge.lock);
	pthread_join(t, NULL);
	assert_int_equal(c.ret, -ECANCELED);
	assert_true(jobs->abandoned);
	run_jobs(&bridge, jobs);
	assert_int_equal(jobs->res.raw->refs, 1);
	finish_jobs(&bridge, jobs); /* frees the job and the read (ASan) */
	assert_int_equal(collects, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_copies_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_read_for_waiting_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given_up_and_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandoned_job_freed_by_loop, setup, teardown),
	};

	return cmocka_run_group_tests_name("http_bridge", tests, NULL, NULL);
}
