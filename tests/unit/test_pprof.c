/* SPDX-License-Identifier: MIT */
/*
 * test_pprof.c: cmocka tests of the pprof writer and reader
 * (src/report/writers/pprof_write.c, src/report/readers/pprof_read.c).
 *
 * A profile built in memory is written, read back and compared; the file
 * layout is checked by decoding it with protobuf-c; a Go heap profile
 * (tests/data/goheap) is read; and damaged input (empty, text, every
 * truncation, thousands of random byte changes, crafted bad indices, size
 * bombs) must give an error with a reason, never a crash (the -asan build
 * runs the same tests under AddressSanitizer and UBSan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "frame.h"
#include "pprof_cost.h"
#include "pprof_facts.h"
#include "pprof_read.h"
#include "pprof_write.h"
#include "profile.pb-c.h"

#ifndef PPROF_TEST_DATA
#define PPROF_TEST_DATA "tests/data"
#endif

#define NCORRUPT 2000

/* Fixed contents (no clock, no build ids) so that the damage tests see the
 * same bytes on every run. */
static const struct mt_pprof_write_options fixed = {
	.time_nanos = 1700000000000000000LL, .no_build_ids = true,
};
static const struct mt_pprof_write_options fixed_plain = {
	.time_nanos = 1700000000000000000LL, .no_build_ids = true,
	.uncompressed = true,
};

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[4][128];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/mt-test-pprof-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes whatever the tests left in the directory, so a new test's file
 * needs no entry in a list here. */
static int teardown_dir(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	(void)state;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return rmdir(tmpdir);
}

/* ---- a profile in memory ---- */

static void set_frame(struct mt_frame *f, const char *fn, const char *file,
		      int line, int decl_line, const char *module,
		      uint64_t addr, bool inlined)
{
	f->function = strdup(fn);
	f->file = file ? strdup(file) : NULL;
	f->line = line;
	f->decl_file = file && decl_line ? strdup(file) : NULL;
	f->decl_line = decl_line;
	f->module = module ? strdup(module) : NULL;
	f->addr = addr;
	f->inlined = inlined;
	assert_non_null(f->function);
}

static void set_sample(struct mt_sample *s, uint32_t pid, const uint32_t *fr,
		       size_t n, int64_t ao, int64_t as, int64_t io, int64_t is)
{
	s->pid = pid;
	s->nframes = n;
	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	assert_non_null(s->frames);
	memcpy(s->frames, fr, n * sizeof(*fr));
	s->v[MT_ALLOC_OBJECTS] = ao;
	s->v[MT_ALLOC_SPACE] = as;
	s->v[MT_INUSE_OBJECTS] = io;
	s->v[MT_INUSE_SPACE] = is;
}

#define PROG "/opt/app/bin/server"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static void set_map(struct mt_map *m, uint32_t pid, const char *path,
		    uint64_t start, uint64_t limit, uint64_t offset,
		    const char *build_id)
{
	m->pid = pid;
	m->path = strdup(path);
	assert_non_null(m->path);
	m->start = start;
	m->limit = limit;
	m->offset = offset;
	snprintf(m->build_id, sizeof(m->build_id), "%s", build_id);
}

/* The executable mappings of the frames' modules, per process. */
static void add_maps(struct mt_profile *p, bool two_pids)
{
	p->maps = calloc(6, sizeof(*p->maps));
	assert_non_null(p->maps);
	set_map(&p->maps[0], 100, PROG, 0x800, 0x3000, 0x800, "00112233");
	set_map(&p->maps[1], 100, LIBC, 0x7f0002000, 0x7f0004000, 0x1000,
		"aabbccdd");
	set_map(&p->maps[2], 100, "/lib/libx.so", 0x7f0001000, 0x7f0002000,
		0x1000, "");
	p->nmaps = 3;
	if (two_pids) {
		set_map(&p->maps[3], 200, PROG, 0x10800, 0x13000, 0x800,
			"00112233");
		set_map(&p->maps[4], 200, "/lib/libx.so", 0x7f0001000,
			0x7f0002000, 0x1000, "");
		p->nmaps = 5;
	}
}

/*
 * Frames: 0 inlined into 1 (same address), 2 the caller, 3 in a library,
 * 4 unresolved, 5 without a module.  Samples of pid 100 (and 200 if
 * TWO_PIDS), one of them all zero.
 */
static void build_profile(struct mt_profile *p, bool two_pids)
{
	static const uint32_t s0[] = { 0, 1, 2 }, s1[] = { 3, 2 },
			      s2[] = { 0, 1, 2 }, s3[] = { 4 },
			      s4[] = { 5, 4, 2 };

	memset(p, 0, sizeof(*p));
	p->nframes = 6;
	p->frames = calloc(p->nframes, sizeof(*p->frames));
	assert_non_null(p->frames);
	set_frame(&p->frames[0], "leaf_inl", "/src/a.c", 10, 5, PROG, 0x1000, true);
	set_frame(&p->frames[1], "mid", "/src/a.c", 20, 15, PROG, 0x1000, false);
	set_frame(&p->frames[2], "main", "/src/main.c", 30, 25, PROG, 0x2000, false);
	set_frame(&p->frames[3], "xmalloc", "/src/lib.c", 7, 3, LIBC, 0x7f0003000, false);
	set_frame(&p->frames[4], "libx.so+0x1234", NULL, 0, 0, "/lib/libx.so",
		  0x7f0001235, false);
	p->frames[4].unresolved = true;
	p->frames[3].no_inlines = true;
	set_frame(&p->frames[5], "std::vector<int>::push_back(int const&)",
		  "/usr/include/c++/12/bits/stl_vector.h", 1280, 1270, NULL,
		  0x5000, false);
	p->nsamples = 5;
	p->samples = calloc(p->nsamples, sizeof(*p->samples));
	assert_non_null(p->samples);
	set_sample(&p->samples[0], 100, s0, 3, 3, 300, 1, 100);
	set_sample(&p->samples[1], 100, s1, 2, 1, 64, 1, 64);
	set_sample(&p->samples[2], two_pids ? 200 : 100, s2, 3, 2, 20, 0, 0);
	set_sample(&p->samples[3], 100, s3, 1, 0, 0, 0, 0);
	set_sample(&p->samples[4], two_pids ? 200 : 100, s4, 3, 7, 7000, 2, 2000);
	p->nprocs = two_pids ? 2 : 1;
	p->procs = calloc(p->nprocs, sizeof(*p->procs));
	assert_non_null(p->procs);
	p->procs[0].pid = 100;
	strcpy(p->procs[0].comm, "server");
	if (two_pids) {
		p->procs[1].pid = 200;
		strcpy(p->procs[1].comm, "worker");
	}
	snprintf(p->sum.target, sizeof(p->sum.target), "pids 100 200");
	snprintf(p->sum.allocator, sizeof(p->sum.allocator), "glibc %s", LIBC);
	p->sum.duration_s = 2.5;
	/* Every counter different, none derivable from the samples. */
	for (int i = 0; i < MT_CNT__COUNT; i++)
		p->sum.counters[i] = 1000003ULL * (uint64_t)(i + 1);
	/* Size classes: the first and the last, one that wrapped below 0 (a
	 * diff), one of mappings; the others empty. */
	p->sum.sizes[MT_CAT_HEAP][0] = (struct mt_size_count){ 4, 0 };
	p->sum.sizes[MT_CAT_HEAP][7] = (struct mt_size_count){ 30, 3000 };
	p->sum.sizes[MT_CAT_HEAP][9] = (struct mt_size_count){ UINT64_MAX, -300ULL };
	p->sum.sizes[MT_CAT_HEAP][MT_SIZE_CLASSES - 1] =
		(struct mt_size_count){ 1, 3ULL << 30 };
	p->sum.sizes[MT_CAT_MMAP][13] = (struct mt_size_count){ 2, 10000 };
	add_maps(p, two_pids);
}

static uint8_t *read_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The sample of PID with these values (there is one). */
static const struct mt_sample *find_sample(const struct mt_profile *p,
					   uint32_t pid, const int64_t v[])
{
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->samples[i].pid == pid &&
		    memcmp(p->samples[i].v, v, sizeof(p->samples[i].v)) == 0)
			return &p->samples[i];
	}
	fail_msg("no sample of pid %u with values %lld,%lld,%lld,%lld", pid,
		 (long long)v[0], (long long)v[1], (long long)v[2],
		 (long long)v[3]);
	return NULL;
}

static void assert_same_frames(const struct mt_profile *a,
			       const struct mt_sample *sa,
			       const struct mt_profile *b,
			       const struct mt_sample *sb)
{
	assert_int_equal(sa->nframes, sb->nframes);
	for (size_t j = 0; j < sa->nframes; j++) {
		const struct mt_frame *fa = &a->frames[sa->frames[j]];
		const struct mt_frame *fb = &b->frames[sb->frames[j]];

		assert_true(sb->frames[j] < b->nframes);
		assert_string_equal(fa->function, fb->function);
		assert_true(mt_frame_same(fa, fb));
		assert_int_equal(fa->addr, fb->addr);
	}
}

/* Every non-zero sample of A is in B with the same frames. */
static void assert_same_samples(const struct mt_profile *a,
				const struct mt_profile *b)
{
	size_t nonzero = 0;

	for (size_t i = 0; i < a->nsamples; i++) {
		const struct mt_sample *sa = &a->samples[i];
		const int64_t *v = sa->v;

		if (!v[0] && !v[1] && !v[2] && !v[3])
			continue;
		nonzero++;
		assert_same_frames(a, sa, b, find_sample(b, sa->pid, v));
	}
	assert_int_equal(b->nsamples, nonzero);
}

static void write_default(const char *path, bool two_pids)
{
	struct mt_profile p;

	build_profile(&p, two_pids);
	assert_int_equal(mt_pprof_write_opts(path, &p, &fixed), 0);
	mt_profile_free(&p);
}

/* ---- round trip ---- */

static void test_roundtrip(void **state)
{
	const char *path = tmp_path("rt.pb.gz");
	struct mt_profile p, q;
	char err[256] = "x";
	const struct mt_summary *sum = &q.sum;

	(void)state;
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write(path, &p), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_same_samples(&p, &q);
	assert_int_equal(q.nprocs, 2);
	for (size_t i = 0; i < q.nprocs; i++)
		assert_string_equal(q.procs[i].comm,
				    q.procs[i].pid == 100 ? "server" : "worker");
	/* Every header fact as it was written. */
	assert_string_equal(sum->target, p.sum.target);
	assert_string_equal(sum->allocator, p.sum.allocator);
	assert_true(sum->duration_s > 2.4999 && sum->duration_s < 2.5001);
	assert_int_equal(sum->missing, 0);
	assert_false(sum->mmap_traced);
	for (int i = 0; i < MT_CNT__COUNT; i++)
		assert_int_equal(sum->counters[i], p.sum.counters[i]);
	assert_memory_equal(sum->sizes, p.sum.sizes, sizeof(sum->sizes));
	/* The inlined frame keeps its flag; the unresolved one its name. */
	assert_true(q.frames[find_sample(&q, 100, p.samples[0].v)->frames[0]].inlined);
	assert_string_equal(q.frames[find_sample(&q, 200, p.samples[4].v)->frames[1]]
				    .function, "libx.so+0x1234");
	assert_true(q.frames[find_sample(&q, 200, p.samples[4].v)->frames[1]]
			    .unresolved);
	/* The mappings the samples use, with their process, range, build id. */
	assert_int_equal(q.nmaps, 4);  /* not libc of pid 200 */
	for (size_t i = 0; i < q.nmaps; i++) {
		const struct mt_map *m = &q.maps[i], *o = NULL;

		for (size_t j = 0; j < p.nmaps; j++)
			if (p.maps[j].pid == m->pid && !strcmp(p.maps[j].path, m->path))
				o = &p.maps[j];
		assert_non_null(o);
		assert_int_equal(m->start, o->start);
		assert_int_equal(m->limit, o->limit);
		assert_int_equal(m->offset, o->offset);
		assert_string_equal(m->build_id, o->build_id);
	}
	mt_profile_free(&p);
	mt_profile_free(&q);
}

/* A sampled profile (-s) keeps its period and sample count. */
static void test_roundtrip_sampled(void **state)
{
	const char *path = tmp_path("sampled.pb.gz");
	struct mt_profile p, q;
	char err[256] = "x";

	(void)state;
	build_profile(&p, true);
	p.sum.sample_bytes = 524288;
	p.sum.counters[MT_CNT_SAMPLES] = 77;
	assert_int_equal(mt_pprof_write(path, &p), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.sample_bytes, 524288);
	assert_int_equal(q.sum.counters[MT_CNT_SAMPLES], 77);
	mt_profile_free(&q);
	/* Unsampled: period 0 is read back as exact. */
	p.sum.sample_bytes = 0;
	assert_int_equal(mt_pprof_write(path, &p), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.sample_bytes, 0);
	/* Every counter is kept as recorded. */
	assert_int_equal(q.sum.counters[MT_CNT_SAMPLES], 77);
	mt_profile_free(&p);
	mt_profile_free(&q);
}

static void test_gzip_magic(void **state)
{
	size_t len;
	uint8_t *d;

	(void)state;
	write_default(tmp_path("rt.pb.gz"), true);
	d = read_bytes(tmp_path("rt.pb.gz"), &len);
	assert_true(len > 20);
	assert_int_equal(d[0], 0x1f);
	assert_int_equal(d[1], 0x8b);
	free(d);
}

static void test_single_process_target(void **state)
{
	const char *path = tmp_path("one.pb.gz");
	struct mt_profile p, q;
	char err[256];

	(void)state;
	build_profile(&p, false);
	p.sum.target[0] = '\0';  /* not recorded: from the samples */
	assert_int_equal(mt_pprof_write(path, &p), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_string_equal(q.sum.target, "pid 100 (server)");
	assert_int_equal(q.nprocs, 1);
	assert_same_samples(&p, &q);
	mt_profile_free(&p);
	mt_profile_free(&q);
}

static void test_uncompressed(void **state)
{
	const struct mt_pprof_write_options o = { .uncompressed = true };
	const char *path = tmp_path("rt.pb");
	struct mt_profile p, q;
	char err[256];
	size_t len;
	uint8_t *d;

	(void)state;
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write_opts(path, &p, &o), 0);
	d = read_bytes(path, &len);
	assert_false(d[0] == 0x1f && d[1] == 0x8b);
	free(d);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_same_samples(&p, &q);
	mt_profile_free(&p);
	mt_profile_free(&q);
}

static void test_no_samples(void **state)
{
	const char *path = tmp_path("noframes.pb.gz");
	struct mt_profile p = { 0 }, q;
	char err[256];

	(void)state;
	assert_int_equal(mt_pprof_write(path, &p), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.nsamples, 0);
	assert_int_equal(q.nframes, 0);
	mt_profile_free(&q);
}

/* ---- the layout of the file, seen through protobuf-c ---- */

static Perftools__Profiles__Profile *unpack_file(const char *path)
{
	size_t len;
	uint8_t *d = read_bytes(path, &len);
	Perftools__Profiles__Profile *pb =
		perftools__profiles__profile__unpack(NULL, len, d);

	free(d);
	assert_non_null(pb);
	return pb;
}

static const char *pb_str(const Perftools__Profiles__Profile *pb, int64_t i)
{
	assert_true(i >= 0 && (uint64_t)i < pb->n_string_table);
	return pb->string_table[i];
}

static const Perftools__Profiles__Function *
pb_function(const Perftools__Profiles__Profile *pb, uint64_t id)
{
	for (size_t i = 0; i < pb->n_function; i++) {
		if (pb->function[i]->id == id)
			return pb->function[i];
	}
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

static void check_header(const Perftools__Profiles__Profile *pb)
{
	static const char *const types[][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};

	assert_string_equal(pb->string_table[0], "");
	assert_int_equal(pb->n_sample_type, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(pb_str(pb, pb->sample_type[i]->type), types[i][0]);
		assert_string_equal(pb_str(pb, pb->sample_type[i]->unit), types[i][1]);
	}
	assert_string_equal(pb_str(pb, pb->default_sample_type), "inuse_space");
	assert_non_null(pb->period_type);
	assert_string_equal(pb_str(pb, pb->period_type->type), "space");
	assert_string_equal(pb_str(pb, pb->period_type->unit), "bytes");
	assert_int_equal(pb->period, 4096);
	assert_int_equal(pb->time_nanos, 1234567890123456789LL);
	assert_int_equal(pb->duration_nanos, 2500000000LL);
}

/* The location of pid 100's first sample: leaf_inl inlined into mid. */
static void check_inline_location(const Perftools__Profiles__Profile *pb)
{
	const Perftools__Profiles__Sample *s = pb->sample[0];
	const Perftools__Profiles__Location *l = NULL;

	assert_int_equal(s->n_location_id, 2);
	for (size_t i = 0; i < pb->n_location; i++) {
		if (pb->location[i]->id == s->location_id[0])
			l = pb->location[i];
	}
	if (!l) {
		fail_msg("the first sample's location is missing");
		return;
	}
	/* On the call: the return address less 1. */
	assert_int_equal(l->address, 0x1000 - 1);
	assert_int_equal(l->n_line, 2);
	assert_string_equal(pb_str(pb, pb_function(pb, l->line[0]->function_id)->name),
			    "leaf_inl");
	assert_int_equal(l->line[0]->line, 10);
	assert_string_equal(pb_str(pb, pb_function(pb, l->line[1]->function_id)->name),
			    "mid");
	assert_int_equal(pb_function(pb, l->line[1]->function_id)->start_line, 15);
	assert_int_equal(l->line[1]->line, 20);
	assert_true(l->mapping_id != 0);
}

static void check_labels(const Perftools__Profiles__Profile *pb)
{
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		assert_int_equal(s->n_value, 4);
		assert_int_equal(s->n_label, 2);
		assert_string_equal(pb_str(pb, s->label[0]->key), "pid");
		assert_true(s->label[0]->num == 100 || s->label[0]->num == 200);
		assert_string_equal(pb_str(pb, s->label[1]->key), "comm");
		assert_string_equal(pb_str(pb, s->label[1]->str),
				    s->label[0]->num == 100 ? "server" : "worker");
	}
}

/* The mappings of build_profile(two pids), without build ids. */
static void check_mappings(const Perftools__Profiles__Profile *pb)
{
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pb->mapping[i];
		const char *file = pb_str(pb, m->filename);
		bool libx = strcmp(file, "/lib/libx.so") == 0;
		bool libc = strcmp(file, LIBC) == 0;

		assert_int_equal(m->build_id, 0);
		/* Only libx has an unresolved location; libc's frame came
		 * from a symbol table (inlining unknown). */
		assert_true(m->has_functions == !libx);
		assert_true(m->has_filenames == !libx);
		assert_true(m->has_line_numbers == !libx);
		assert_true(m->has_inline_frames == (!libx && !libc));
		if (libx) {
			assert_int_equal(m->memory_start, 0x7f0001000);
			assert_int_equal(m->memory_limit, 0x7f0002000);
			assert_int_equal(m->file_offset, 0x1000);
		} else if (libc) {
			assert_int_equal(m->memory_start, 0x7f0002000);
			assert_int_equal(m->file_offset, 0x1000);
		} else {
			assert_true(m->memory_start == 0x800 ||
				    m->memory_start == 0x10800);
			assert_int_equal(m->memory_limit, m->memory_start + 0x2800);
			assert_int_equal(m->file_offset, 0x800);
		}
	}
}

static void test_layout(void **state)
{
	const struct mt_pprof_write_options o = {
		.uncompressed = true, .period = 4096,
		.time_nanos = 1234567890123456789LL, .no_build_ids = true,
	};
	const char *path = tmp_path("opts.pb");
	Perftools__Profiles__Profile *pb;
	struct mt_profile p;

	(void)state;
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write_opts(path, &p, &o), 0);
	mt_profile_free(&p);
	pb = unpack_file(path);
	check_header(pb);
	/* The all-zero sample is left out. */
	assert_int_equal(pb->n_sample, 4);
	check_inline_location(pb);
	check_labels(pb);
	/* (pid, module): (100,PROG) (100,LIBC) (200,PROG) (200,libx). */
	assert_int_equal(pb->n_mapping, 4);
	check_mappings(pb);
	/* pid 100: {0,1} {2} {3}; pid 200: {0,1} {2} {5} {4}. */
	assert_int_equal(pb->n_location, 7);
	/* One per (name, file, start line): 5 resolved frames, 5 functions;
	 * the unresolved frame is an address only. */
	assert_int_equal(pb->n_function, 5);
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];

		if (l->address != 0x7f0001234)
			continue;
		assert_int_equal(l->n_line, 0);
		assert_true(l->mapping_id != 0);
	}
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

/* Build ids come from the profile's maps (the loader's descriptors). */
static void test_build_ids(void **state)
{
	const struct mt_pprof_write_options o = { .uncompressed = true };
	const char *path = tmp_path("bid.pb");
	Perftools__Profiles__Profile *pb;
	struct mt_profile p, q;
	char err[256];
	size_t n = 0;

	(void)state;
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write_opts(path, &p, &o), 0);
	pb = unpack_file(path);
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const char *file = pb_str(pb, pb->mapping[i]->filename);
		const char *bid = pb_str(pb, pb->mapping[i]->build_id);

		if (!strcmp(file, PROG))
			assert_string_equal(bid, "00112233");
		else if (!strcmp(file, LIBC))
			assert_string_equal(bid, "aabbccdd");
		else
			assert_string_equal(bid, "");
		n += bid[0] != '\0';
	}
	assert_int_equal(n, 3);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	/* A profile whose maps are unknown writes no range and no id. */
	for (size_t i = 0; i < p.nmaps; i++)
		free(p.maps[i].path);
	free(p.maps);
	p.maps = NULL;
	p.nmaps = 0;
	assert_int_equal(mt_pprof_write_opts(path, &p, &o), 0);
	pb = unpack_file(path);
	for (size_t i = 0; i < pb->n_mapping; i++) {
		assert_int_equal(pb->mapping[i]->build_id, 0);
		assert_int_equal(pb->mapping[i]->memory_start, 0);
		assert_int_equal(pb->mapping[i]->memory_limit, 0);
	}
	perftools__profiles__profile__free_unpacked(pb, NULL);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	/* Without a range the address is the name's offset. */
	assert_string_equal(q.frames[find_sample(&q, 200, p.samples[4].v)->frames[1]]
				    .function, "libx.so+0x7f0001234");
	mt_profile_free(&q);
	mt_profile_free(&p);
}

/* A profile without memtrace's facts says so (MT_FACT_*), and a profile
 * that lacks them is written without them again. */
static void test_facts_not_recorded(void **state)
{
	const char *path = tmp_path("facts.pb.gz");
	struct mt_profile p, q;
	char err[256];

	(void)state;
	build_profile(&p, false);
	p.sum.missing = MT_FACT_COUNTERS;
	p.sum.allocator[0] = '\0';
	p.sum.duration_s = 0;
	assert_int_equal(mt_pprof_write_opts(path, &p, &fixed), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.missing,
			 MT_FACT_COUNTERS | MT_FACT_ALLOCATOR | MT_FACT_DURATION);
	assert_int_equal(q.sum.counters[MT_CNT_EVENTS], 0);
	/* The totals were written: they are what the trace recorded. */
	assert_int_equal(q.sum.counters[MT_CNT_ALLOC_BYTES],
			 p.sum.counters[MT_CNT_ALLOC_BYTES]);
	mt_profile_free(&q);
	/* --mmap is a fact too. */
	p.sum.missing = 0;
	p.sum.mmap_traced = true;
	assert_int_equal(mt_pprof_write_opts(path, &p, &fixed), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_true(q.sum.mmap_traced);
	assert_int_equal(q.sum.missing, MT_FACT_ALLOCATOR | MT_FACT_DURATION);
	assert_int_equal(q.sum.counters[MT_CNT_MUNMAP_BYTES],
			 p.sum.counters[MT_CNT_MUNMAP_BYTES]);
	mt_profile_free(&q);
	mt_profile_free(&p);
}

/* FACTS (N of them, after the version's) read into a summary. */
static struct mt_summary read_facts(const char *const *facts, size_t n)
{
	const char *strs[16] = { "", "memtrace.version: 0.1.0" };
	struct mt_summary sum;
	bool counters;

	assert_true(n + 2 <= sizeof(strs) / sizeof(strs[0]));
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < n; i++)
		strs[i + 2] = facts[i];
	mt_facts_read(strs, n + 2, &sum, &counters);
	return sum;
}

#define FACTS(...) (const char *const[]){ __VA_ARGS__ }, \
	sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)

/* The size histogram as facts: written and read back (test_roundtrip),
 * kept out when not recorded, and any fact but this version's makes it
 * not recorded rather than partly read. */
static void test_size_facts(void **state)
{
	const char *path = tmp_path("sizes.pb.gz");
	struct mt_summary sum;
	struct mt_profile p, q;
	char err[256];

	(void)state;
	sum = read_facts(FACTS("memtrace.size classes: powers of two",
			       "memtrace.size class heap 0: 2 objects, 0 bytes",
			       "memtrace.size class heap 1024: 3 objects, 3200 bytes",
			       "memtrace.size class heap 1073741824: 1 objects, 5368709120 bytes",
			       "memtrace.size class mmap 4096: 1 objects, 4096 bytes"));
	assert_false(sum.missing & MT_FACT_SIZES);
	assert_int_equal(sum.sizes[MT_CAT_HEAP][0].objects, 2);
	assert_int_equal(sum.sizes[MT_CAT_HEAP][11].objects, 3);
	assert_int_equal(sum.sizes[MT_CAT_HEAP][11].bytes, 3200);
	assert_int_equal(sum.sizes[MT_CAT_HEAP][MT_SIZE_CLASSES - 1].bytes,
			 5ULL << 30);
	assert_int_equal(sum.sizes[MT_CAT_MMAP][13].bytes, 4096);
	assert_int_equal(sum.sizes[MT_CAT_HEAP][12].objects, 0);
	/* The mark alone: recorded, every class empty. */
	sum = read_facts(FACTS("memtrace.size classes: powers of two"));
	assert_false(sum.missing & MT_FACT_SIZES);
	/* No mark, another mark, a class not this version's, a class twice,
	 * a number that overflows, anything after the bytes. */
	static const char *const bad[] = {
		"memtrace.size class heap 1024: 3 objects, 3200 bytes",
		"memtrace.size class heap 1000: 3 objects, 3200 bytes",
		"memtrace.size class heap 2147483648: 1 objects, 2147483648 bytes",
		"memtrace.size class heap 3: 1 objects, 3 bytes",
		"memtrace.size class disk 1024: 3 objects, 3200 bytes",
		"memtrace.size class heap 1024: 3 objects, 3200 bytes ",
		"memtrace.size class heap 1024: -3 objects, 3200 bytes",
		"memtrace.size class heap 1024: 3 objects, 18446744073709551616 bytes",
		"memtrace.size class heap 1024: 3 objects",
	};
	sum = read_facts(FACTS(bad[0]));
	assert_true(sum.missing & MT_FACT_SIZES);
	sum = read_facts(FACTS("memtrace.size classes: decimal", bad[0]));
	assert_true(sum.missing & MT_FACT_SIZES);
	sum = read_facts(FACTS("memtrace.size classes: powers of two", bad[0],
			       bad[0]));
	assert_true(sum.missing & MT_FACT_SIZES);
	for (size_t i = 1; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sum = read_facts(FACTS("memtrace.size classes: powers of two",
				       bad[0], bad[i]));
		if (!(sum.missing & MT_FACT_SIZES))
			fail_msg("\"%s\" read as a size class", bad[i]);
		assert_int_equal(sum.sizes[MT_CAT_HEAP][11].objects, 0);
	}
	/* Not recorded: written without them, read back not recorded. */
	build_profile(&p, false);
	p.sum.missing = MT_FACT_SIZES;
	assert_int_equal(mt_pprof_write_opts(path, &p, &fixed), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.missing, MT_FACT_SIZES);
	assert_int_equal(q.sum.sizes[MT_CAT_HEAP][7].objects, 0);
	mt_profile_free(&q);
	mt_profile_free(&p);
}

/* The timeline's summary (peaks, sparkline cells, names with spaces)
 * comes back as written; a profile without one says not recorded. */
static void test_timeline_facts(void **state)
{
	const char *path = tmp_path("timeline.pb.gz");
	struct mt_tl_summary *tl;
	struct mt_profile p, q;
	char err[256];

	(void)state;
	build_profile(&p, false);
	tl = &p.sum.timeline;
	tl->nprocs = 12;
	tl->nkept = MT_TL_SUM_PROCS;
	tl->ncells = 7;
	tl->cell_s = 0.1 * 7 / 3;
	for (size_t k = 0; k < tl->nkept; k++) {
		struct mt_tl_peak *pk = &tl->procs[k];

		pk->pid = 1000 + (uint32_t)k;
		snprintf(pk->comm, sizeof(pk->comm), "w %u: x,y", (unsigned)k % 10);
		pk->bytes = (UINT64_C(1) << 40) + k;
		pk->t = 1.0 / 3 + (double)k;
		for (size_t c = 0; c < tl->ncells; c++)
			pk->cells[c] = c == k % 7 ? MT_TL_CELL_NONE : c * k;
	}
	assert_int_equal(mt_pprof_write_opts(path, &p, &fixed), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.missing & MT_FACT_TIMELINE, 0);
	assert_int_equal(q.sum.timeline.nprocs, 12);
	assert_int_equal(q.sum.timeline.nkept, MT_TL_SUM_PROCS);
	assert_int_equal(q.sum.timeline.ncells, 7);
	assert_true(q.sum.timeline.cell_s == tl->cell_s);
	for (size_t k = 0; k < tl->nkept; k++) {
		const struct mt_tl_peak *a = &tl->procs[k];
		const struct mt_tl_peak *b = &q.sum.timeline.procs[k];

		assert_int_equal(b->pid, a->pid);
		assert_string_equal(b->comm, a->comm);
		assert_int_equal(b->bytes, a->bytes);
		assert_true(b->t == a->t);
		assert_memory_equal(b->cells, a->cells, 7 * sizeof(a->cells[0]));
	}
	mt_profile_free(&q);
	p.sum.missing = MT_FACT_TIMELINE;
	assert_int_equal(mt_pprof_write_opts(path, &p, &fixed), 0);
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sum.missing, MT_FACT_TIMELINE);
	assert_int_equal(q.sum.timeline.nkept, 0);
	mt_profile_free(&q);
	mt_profile_free(&p);
}

/* ---- a real Go heap profile ---- */

static const struct mt_sample *sample_with_leaf(const struct mt_profile *p,
						const char *fn)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[i];

		if (s->nframes && strcmp(p->frames[s->frames[0]].function, fn) == 0)
			return s;
	}
	fail_msg("no sample with leaf %s", fn);
	return NULL;
}

static void assert_values(const struct mt_sample *s, int64_t ao, int64_t as,
			  int64_t io, int64_t is)
{
	assert_int_equal(s->v[MT_ALLOC_OBJECTS], ao);
	assert_int_equal(s->v[MT_ALLOC_SPACE], as);
	assert_int_equal(s->v[MT_INUSE_OBJECTS], io);
	assert_int_equal(s->v[MT_INUSE_SPACE], is);
}

static void test_go_heap_profile(void **state)
{
	const char *path = PPROF_TEST_DATA "/goheap/heap.pb.gz";
	const struct mt_sample *s;
	struct mt_profile q;
	char err[256];

	(void)state;
	if (access(path, R_OK) != 0)
		skip();
	assert_int_equal(mt_pprof_read(path, &q, err, sizeof(err)), 0);
	/* allocSmall's make() is in newBlock, inlined into it. */
	s = sample_with_leaf(&q, "main.newBlock");
	assert_values(s, 100, 6400, 100, 6400);
	assert_true(s->nframes >= 2);
	assert_true(q.frames[s->frames[0]].inlined);
	assert_string_equal(q.frames[s->frames[1]].function, "main.allocSmall");
	assert_false(q.frames[s->frames[1]].inlined);
	assert_string_equal(q.frames[s->frames[0]].file, "./main.go");
	assert_values(sample_with_leaf(&q, "main.allocLarge"), 1, 1 << 20, 1,
		      1 << 20);
	assert_values(sample_with_leaf(&q, "main.allocTemp"), 50, 6400, 0, 0);
	assert_true(q.sum.counters[MT_CNT_ALLOC_BYTES] >= (1 << 20) + 12800);
	assert_true(q.sum.counters[MT_CNT_FREE_BYTES] >= 6400);
	/* Go records no allocator, events or drops: not recorded, not 0. */
	assert_true(q.sum.missing & MT_FACT_COUNTERS);
	assert_true(q.sum.missing & MT_FACT_ALLOCATOR);
	assert_true(q.sum.missing & MT_FACT_SIZES);
	mt_profile_free(&q);
}

/* ---- damaged input ---- */

/* An error: negative, with a reason, and the profile left empty. */
static void assert_read_fails(const char *path)
{
	struct mt_profile q;
	char err[256] = "";

	assert_true(mt_pprof_read(path, &q, err, sizeof(err)) < 0);
	assert_true(err[0] != '\0');
	assert_null(strchr(err, '\n'));
	assert_null(q.samples);
	assert_null(q.frames);
	assert_int_equal(q.nsamples, 0);
}

static void test_bad_files(void **state)
{
	static const char text[] =
		"This is a text file, not a profile.\n"
		"heap profile: 1: 2 [3: 4] @ heap/1048576\n";

	(void)state;
	write_bytes(tmp_path("empty"), "", 0);
	assert_read_fails(tmp_path("empty"));
	write_bytes(tmp_path("text"), text, sizeof(text) - 1);
	assert_read_fails(tmp_path("text"));
	assert_read_fails(tmp_path("does-not-exist"));
	assert_read_fails(tmpdir);
	/* Only gzip's magic. */
	write_bytes(tmp_path("cut"), "\x1f\x8b", 2);
	assert_read_fails(tmp_path("cut"));
}

/* Parse LEN bytes: an error must come with a reason; a success is freed. */
static int parse_any(const uint8_t *d, size_t len)
{
	struct mt_profile q;
	char err[256] = "";
	int rc = mt_pprof_parse(d, len, "mem", NULL, &q, err, sizeof(err));

	if (rc < 0) {
		assert_true(err[0] != '\0');
		assert_null(q.samples);
	} else {
		assert_int_equal(rc, 0);
		for (size_t i = 0; i < q.nsamples; i++) {
			for (size_t j = 0; j < q.samples[i].nframes; j++)
				assert_true(q.samples[i].frames[j] < q.nframes);
		}
		mt_profile_free(&q);
	}
	return rc;
}

static void test_truncated(void **state)
{
	size_t glen, plen;
	uint8_t *gz, *plain;
	struct mt_profile p;

	(void)state;
	write_default(tmp_path("rt.pb.gz"), true);
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write_opts(tmp_path("rt.pb"), &p, &fixed_plain), 0);
	mt_profile_free(&p);
	gz = read_bytes(tmp_path("rt.pb.gz"), &glen);
	plain = read_bytes(tmp_path("rt.pb"), &plen);
	/* A cut gzip stream always fails (its trailer is missing). */
	for (size_t n = 0; n < glen; n++)
		assert_true(parse_any(gz, n) < 0);
	/* A cut protobuf may still be well-formed: it must just not crash. */
	for (size_t n = 0; n < plen; n++)
		parse_any(plain, n);
	/* A few through files, as the command line reads them. */
	for (size_t n = 0; n < glen; n += glen / 7 + 1) {
		write_bytes(tmp_path("cut"), gz, n);
		assert_read_fails(tmp_path("cut"));
	}
	free(gz);
	free(plain);
}

/* xorshift64*: deterministic "random" numbers. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* NCORRUPT copies of D each with one byte changed; returns the failures. */
static size_t corrupt_each(const uint8_t *d, size_t len, uint64_t seed)
{
	uint8_t *c = malloc(len);
	size_t failures = 0;

	assert_non_null(c);
	for (int i = 0; i < NCORRUPT; i++) {
		uint64_t r = rng_next(&seed);
		size_t at = (size_t)(r % len);

		memcpy(c, d, len);
		c[at] ^= (uint8_t)(1 + (r >> 32) % 255);
		if (parse_any(c, len) < 0)
			failures++;
	}
	free(c);
	return failures;
}

static void test_corrupted(void **state)
{
	size_t glen, plen, gfail, pfail;
	uint8_t *gz, *plain;
	struct mt_profile p;

	(void)state;
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write_opts(tmp_path("rt.pb.gz"), &p, &fixed), 0);
	assert_int_equal(mt_pprof_write_opts(tmp_path("rt.pb"), &p, &fixed_plain), 0);
	mt_profile_free(&p);
	gz = read_bytes(tmp_path("rt.pb.gz"), &glen);
	plain = read_bytes(tmp_path("rt.pb"), &plen);
	gfail = corrupt_each(gz, glen, UINT64_C(0x9e3779b97f4a7c15));
	pfail = corrupt_each(plain, plen, UINT64_C(0xd1b54a32d192ed03));
	print_message("# corrupted gzip: %zu/%d rejected; plain: %zu/%d rejected\n",
		      gfail, NCORRUPT, pfail, NCORRUPT);
	/* Only the gzip header's free fields (mtime, flags, OS) go unnoticed. */
	assert_true(gfail > NCORRUPT * 9 / 10);
	assert_true(pfail > 0);
	/* One damaged file through the file interface. */
	gz[glen / 2] ^= 0x55;
	write_bytes(tmp_path("bad.pb.gz"), gz, glen);
	assert_read_fails(tmp_path("bad.pb.gz"));
	free(gz);
	free(plain);
}

/* ---- crafted profiles: well-formed protobuf, bad contents ---- */

struct craft {
	char *strings[12];
	Perftools__Profiles__ValueType vt[4], *vtp[4];
	Perftools__Profiles__Function fn, *fnp[1];
	Perftools__Profiles__Line ln, *lnp[1];
	Perftools__Profiles__Location loc[2], *locp[2];
	Perftools__Profiles__Mapping map, *mapp[1];
	uint64_t locids[1];
	int64_t values[4];
	Perftools__Profiles__Sample smp, *smpp[1];
	Perftools__Profiles__Profile prof;
};

/* A valid heap profile: one sample of f (f.c:3) in /bin/x. */
static void craft_init(struct craft *c)
{
	static const char *const s[] = {
		"", "alloc_objects", "count", "alloc_space", "bytes",
		"inuse_objects", "inuse_space", "f", "f.c", "/bin/x",
	};
	Perftools__Profiles__Profile *p = &c->prof;

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		c->strings[i] = (char *)s[i];
	*p = (Perftools__Profiles__Profile)PERFTOOLS__PROFILES__PROFILE__INIT;
	p->string_table = c->strings;
	p->n_string_table = sizeof(s) / sizeof(s[0]);
	for (int i = 0; i < 4; i++) {
		c->vt[i] = (Perftools__Profiles__ValueType)
			PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		c->vt[i].type = i == 3 ? 6 : 1 + 2 * i;
		c->vt[i].unit = i % 2 ? 4 : 2;
		c->vtp[i] = &c->vt[i];
		c->values[i] = 10 * (int64_t)(i + 1);
	}
	p->sample_type = c->vtp;
	p->n_sample_type = 4;
	c->map = (Perftools__Profiles__Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	c->map.id = 5;
	c->map.filename = 9;
	c->mapp[0] = &c->map;
	p->mapping = c->mapp;
	p->n_mapping = 1;
	c->fn = (Perftools__Profiles__Function)PERFTOOLS__PROFILES__FUNCTION__INIT;
	c->fn.id = 1;
	c->fn.name = 7;
	c->fn.filename = 8;
	c->fnp[0] = &c->fn;
	p->function = c->fnp;
	p->n_function = 1;
	c->ln = (Perftools__Profiles__Line)PERFTOOLS__PROFILES__LINE__INIT;
	c->ln.function_id = 1;
	c->ln.line = 3;
	c->lnp[0] = &c->ln;
	for (int i = 0; i < 2; i++) {
		c->loc[i] = (Perftools__Profiles__Location)
			PERFTOOLS__PROFILES__LOCATION__INIT;
		c->loc[i].id = 7 + (uint64_t)i;
		c->loc[i].mapping_id = 5;
		c->loc[i].address = 0x1234;
		c->locp[i] = &c->loc[i];
	}
	c->loc[0].line = c->lnp;
	c->loc[0].n_line = 1;
	p->location = c->locp;
	p->n_location = 1;
	c->smp = (Perftools__Profiles__Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
	c->locids[0] = 7;
	c->smp.location_id = c->locids;
	c->smp.n_location_id = 1;
	c->smp.value = c->values;
	c->smp.n_value = 4;
	c->smpp[0] = &c->smp;
	p->sample = c->smpp;
	p->n_sample = 1;
}

/* Pack C and parse it; returns the result, the reason in ERR. */
static int craft_parse(const struct craft *c, struct mt_profile *q,
		       char *err, size_t errlen)
{
	size_t len = perftools__profiles__profile__get_packed_size(&c->prof);
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	assert_non_null(buf);
	perftools__profiles__profile__pack(&c->prof, buf);
	err[0] = '\0';
	rc = mt_pprof_parse(buf, len, "crafted", NULL, q, err, errlen);
	free(buf);
	if (rc < 0)
		assert_true(err[0] != '\0');
	return rc;
}

/* C must be rejected with a reason containing WHAT. */
static void assert_crafted_fails(const struct craft *c, const char *what)
{
	struct mt_profile q;
	char err[256];

	assert_true(craft_parse(c, &q, err, sizeof(err)) < 0);
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
	assert_null(q.samples);
}

static void test_crafted_valid(void **state)
{
	struct craft c;
	struct mt_profile q;
	char err[256];

	(void)state;
	craft_init(&c);
	assert_int_equal(craft_parse(&c, &q, err, sizeof(err)), 0);
	assert_int_equal(q.nsamples, 1);
	assert_values(&q.samples[0], 10, 20, 30, 40);
	assert_int_equal(q.samples[0].nframes, 1);
	assert_string_equal(q.frames[q.samples[0].frames[0]].function, "f");
	assert_string_equal(q.frames[q.samples[0].frames[0]].file, "f.c");
	assert_string_equal(q.frames[q.samples[0].frames[0]].module, "/bin/x");
	assert_int_equal(q.frames[q.samples[0].frames[0]].line, 3);
	assert_string_equal(q.sum.target, "profile crafted");
	mt_profile_free(&q);

	/* A location without lines gets a name from its mapping. */
	c.loc[1].id = 8;
	c.prof.n_location = 2;
	c.locids[0] = 8;
	assert_int_equal(craft_parse(&c, &q, err, sizeof(err)), 0);
	assert_string_equal(q.frames[q.samples[0].frames[0]].function, "x+0x1234");
	mt_profile_free(&q);
	c.loc[1].mapping_id = 0;
	assert_int_equal(craft_parse(&c, &q, err, sizeof(err)), 0);
	assert_string_equal(q.frames[q.samples[0].frames[0]].function,
			    "[unknown]+0x1234");
	assert_null(q.frames[q.samples[0].frames[0]].module);
	mt_profile_free(&q);
}

static void test_crafted_partial_types(void **state)
{
	struct craft c;
	struct mt_profile q;
	char err[256];

	(void)state;
	craft_init(&c);
	/* Only inuse_space, plus a type memtrace does not know. */
	c.vt[0].type = 6;
	c.vt[1].type = 7;  /* "f" */
	c.prof.n_sample_type = 2;
	c.smp.n_value = 2;
	assert_int_equal(craft_parse(&c, &q, err, sizeof(err)), 0);
	assert_values(&q.samples[0], 0, 0, 0, 10);
	mt_profile_free(&q);
}

static void test_crafted_errors(void **state)
{
	struct craft c;

	(void)state;
	craft_init(&c);
	c.vt[0].type = c.vt[1].type = c.vt[2].type = c.vt[3].type = 7;
	assert_crafted_fails(&c, "not a heap profile");

	craft_init(&c);
	c.ln.function_id = 12;
	assert_crafted_fails(&c, "location 7 refers to missing function 12");

	craft_init(&c);
	c.loc[0].mapping_id = 6;
	assert_crafted_fails(&c, "missing mapping 6");

	craft_init(&c);
	c.locids[0] = 99;
	assert_crafted_fails(&c, "missing location 99");

	craft_init(&c);
	c.fn.name = 12;
	assert_crafted_fails(&c, "invalid string index");

	craft_init(&c);
	c.fn.filename = -1;
	assert_crafted_fails(&c, "invalid string index");

	craft_init(&c);
	c.smp.n_value = 3;
	assert_crafted_fails(&c, "3 values for 4 sample types");

	craft_init(&c);
	c.loc[1].id = 7;
	c.prof.n_location = 2;
	assert_crafted_fails(&c, "duplicate location id 7");

	craft_init(&c);
	c.fn.id = 0;
	assert_crafted_fails(&c, "id 0");

	craft_init(&c);
	c.strings[0] = (char *)"x";
	assert_crafted_fails(&c, "string_table[0]");

	craft_init(&c);
	c.prof.n_string_table = 0;
	assert_crafted_fails(&c, "string table");

	craft_init(&c);
	c.vt[2].type = 1;
	assert_crafted_fails(&c, "appears twice");

	craft_init(&c);
	c.ln.line = -5;
	assert_crafted_fails(&c, "invalid line");
}

/* ---- limits ---- */

static void test_limits(void **state)
{
	struct mt_pprof_limits lim = { MT_PPROF_MAX_FILE, 64 << 10,
				       MT_PPROF_MAX_MEMORY, 0 };
	size_t zlen = 1 << 20, glen;
	uint8_t *zeros = calloc(zlen, 1), *gz;
	struct mt_profile q;
	char err[256];
	gzFile f;

	(void)state;
	assert_non_null(zeros);
	/* A gzip bomb: 1 MiB of zeros from a few KiB. */
	f = gzopen(tmp_path("bomb.gz"), "wb9");
	assert_non_null(f);
	assert_int_equal(gzwrite(f, zeros, (unsigned)zlen), (int)zlen);
	assert_int_equal(gzclose(f), Z_OK);
	free(zeros);
	assert_int_equal(mt_pprof_read_limits(tmp_path("bomb.gz"), &lim, &q, err,
					      sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "larger than"));

	write_default(tmp_path("rt.pb.gz"), true);
	gz = read_bytes(tmp_path("rt.pb.gz"), &glen);
	lim = (struct mt_pprof_limits){ glen - 1, MT_PPROF_MAX_PROTO,
					MT_PPROF_MAX_MEMORY, 0 };
	assert_int_equal(mt_pprof_parse(gz, glen, "m", &lim, &q, err, sizeof(err)),
			 -EFBIG);
	assert_int_equal(mt_pprof_read_limits(tmp_path("rt.pb.gz"), &lim, &q, err,
					      sizeof(err)), -EFBIG);
	lim = (struct mt_pprof_limits){ MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO, 512, 0 };
	assert_int_equal(mt_pprof_parse(gz, glen, "m", &lim, &q, err, sizeof(err)),
			 -EFBIG);
	assert_non_null(strstr(err, "needs more than"));
	/* No room for the reason is fine too. */
	assert_int_equal(mt_pprof_parse(gz, glen, "m", &lim, &q, NULL, 0), -EFBIG);
	free(gz);
}

/* ---- writer errors ---- */

/* A profile.proto of N samples of no content (2 bytes each), gzipped. */
static void write_tiny_samples(const char *path, size_t n)
{
	static const uint8_t head[] = {
		0x32, 0x00,                                  /* "" */
		0x32, 0x0b, 'i', 'n', 'u', 's', 'e', '_', 's', 'p', 'a', 'c', 'e',
		0x32, 0x05, 'b', 'y', 't', 'e', 's',
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,          /* sample_type */
	};
	static const uint8_t sample[] = { 0x12, 0x00 };
	gzFile f = gzopen(path, "wb9");

	assert_non_null(f);
	assert_int_equal(gzwrite(f, head, sizeof(head)), (int)sizeof(head));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(gzwrite(f, sample, sizeof(sample)), 2);
	assert_int_equal(gzclose(f), Z_OK);
}

/*
 * Bombs, made here: the budget (pprof_read.h) follows the input's
 * content, rejects them early, and --max-memory (limits.budget) moves it.
 */
static void test_bombs(void **state)
{
	struct mt_pprof_limits lim = { MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO,
				       MT_PPROF_MAX_MEMORY, 0 };
	size_t chunk = 1 << 20;
	uint8_t *zeros = calloc(chunk, 1);
	struct mt_profile q;
	char err[512];
	struct stat sb;
	gzFile f;

	(void)state;
	assert_non_null(zeros);
	/* 256 MiB of zeros in about 250 KiB: over 16 MiB + 32 x that. */
	f = gzopen(tmp_path("zeros.gz"), "wb9");
	assert_non_null(f);
	for (int i = 0; i < 256; i++)
		assert_int_equal(gzwrite(f, zeros, (unsigned)chunk), (int)chunk);
	assert_int_equal(gzclose(f), Z_OK);
	free(zeros);
	assert_int_equal(stat(tmp_path("zeros.gz"), &sb), 0);
	assert_true((size_t)sb.st_size * 32 + (16 << 20) < (256u << 20));
	assert_int_equal(mt_pprof_read(tmp_path("zeros.gz"), &q, err, sizeof(err)),
			 -EFBIG);
	assert_non_null(strstr(err, "gzip bomb"));
	assert_non_null(strstr(err, "--max-memory"));
	assert_null(q.samples);

	/* 1M samples of nothing: 2 MB of protobuf, 150 MB once decoded;
	 * rejected before decoding. */
	write_tiny_samples(tmp_path("tiny.gz"), 1000000);
	assert_int_equal(mt_pprof_read(tmp_path("tiny.gz"), &q, err, sizeof(err)),
			 -EFBIG);
	assert_non_null(strstr(err, "needs more than"));
	assert_non_null(strstr(err, "--max-memory"));

	/* The budget is the user's to set: 100k such samples decode in
	 * 32 MiB (and are then found to lack values), not in 1 MiB. */
	write_tiny_samples(tmp_path("tiny.gz"), 100000);
	lim.budget = 32 << 20;
	assert_int_equal(mt_pprof_read_limits(tmp_path("tiny.gz"), &lim, &q, err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0 values"));
	lim.budget = 1 << 20;
	assert_int_equal(mt_pprof_read_limits(tmp_path("tiny.gz"), &lim, &q, err,
					      sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "(--max-memory)"));
}

/*
 * The wire-format estimate is an upper bound of what protobuf-c allocates:
 * a budget of exactly the estimate decodes (protobuf-c's allocations are
 * counted by the reader's allocator, the hard limit), half of it does not.
 */
static void check_cost_bound(const char *path)
{
	struct mt_pprof_limits lim = { MT_PPROF_MAX_FILE, MT_PPROF_MAX_PROTO,
				       MT_PPROF_MAX_MEMORY, 0 };
	size_t zlen, plen = 1 << 20;
	uint8_t *z = read_bytes(path, &zlen), *proto = malloc(plen);
	z_stream zs = { 0 };
	struct mt_profile q;
	uint64_t cost;
	char err[512];

	assert_non_null(proto);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = z;
	zs.avail_in = (unsigned)zlen;
	zs.next_out = proto;
	zs.avail_out = (unsigned)plen;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	plen = zs.total_out;
	inflateEnd(&zs);
	/* The reader's allocator puts a header of max_align_t before each
	 * block (pprof_read.c, union hdr). */
	assert_int_equal(mt_pprof_cost(proto, plen, sizeof(max_align_t),
				       sizeof(struct mt_sample), UINT64_MAX,
				       &cost), 0);
	assert_true(cost > plen);
	lim.budget = cost;
	if (mt_pprof_parse(z, zlen, "c", &lim, &q, err, sizeof(err)) != 0)
		fail_msg("estimate %llu of %zu bytes of protobuf: %s",
			 (unsigned long long)cost, plen, err);
	mt_profile_free(&q);
	lim.budget = cost / 2;
	assert_int_equal(mt_pprof_parse(z, zlen, "c", &lim, &q, err, sizeof(err)),
			 -EFBIG);
	free(z);
	free(proto);
}

static void test_cost_bound(void **state)
{
	(void)state;
	write_default(tmp_path("cost.pb.gz"), true);
	check_cost_bound(tmp_path("cost.pb.gz"));
	/* A profile written by Go's runtime. */
	check_cost_bound(PPROF_TEST_DATA "/goheap/heap.pb.gz");
}

static void test_write_errors(void **state)
{
	struct mt_profile p;

	(void)state;
	build_profile(&p, true);
	assert_int_equal(mt_pprof_write(tmp_path("no/such/dir.pb.gz"), &p),
			 -ENOENT);
	/* A sample pointing past the frames is refused, no file is left. */
	p.samples[1].frames[0] = 42;
	assert_int_equal(mt_pprof_write(tmp_path("never.pb.gz"), &p), -EINVAL);
	assert_int_equal(access(tmp_path("never.pb.gz"), F_OK), -1);
	mt_profile_free(&p);
	assert_int_equal(mt_pprof_write(NULL, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_roundtrip_sampled),
		cmocka_unit_test(test_gzip_magic),
		cmocka_unit_test(test_single_process_target),
		cmocka_unit_test(test_uncompressed),
		cmocka_unit_test(test_no_samples),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_build_ids),
		cmocka_unit_test(test_facts_not_recorded),
		cmocka_unit_test(test_size_facts),
		cmocka_unit_test(test_timeline_facts),
		cmocka_unit_test(test_go_heap_profile),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupted),
		cmocka_unit_test(test_crafted_valid),
		cmocka_unit_test(test_crafted_partial_types),
		cmocka_unit_test(test_crafted_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_bombs),
		cmocka_unit_test(test_cost_bound),
		cmocka_unit_test(test_write_errors),
	};

	return cmocka_run_group_tests_name("pprof", tests, setup_dir,
					   teardown_dir);
}
