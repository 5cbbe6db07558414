// SPDX-License-Identifier: MIT
/*
 * copy_reader.c: the ring buffer of stack copies, read by a thread of its
 * own (copy_reader.h).
 *
 * The loader's thread walks copies, reads /proc, scans processes and
 * makes reports; while it does, a program's first run fills the ring
 * (python3 made 5,000-6,000 copies in the 40-90 ms its table took) and
 * the copies that do not fit are lost.  This thread only moves each
 * record out of the ring into a queue, in order, and wakes the loader;
 * the loader takes the queue when it gets to it.
 */
#include "copy_reader.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include <bpf/libbpf.h>

/* How long the thread waits in the ring for records, at most: what
 * stopping it may take. */
#define POLL_MS 50
/* Bytes of copies the queue holds at most: past it the thread leaves
 * them in the ring (and a full ring counts them lost, per process).  Cold
 * first runs of six programs system-wide peaked at 20 MiB; a flood of
 * copies (every stack of a busy program) is not worth more of memtrace's
 * memory than this. */
#define QUEUE_MAX (64UL << 20)
/* The thread's nice value: a weight some ten times a default thread's. */
#define READER_NICE (-10)

struct record {
	struct record *next;
	size_t size;
	unsigned char data[];
};

struct mt_copy_reader {
	struct ring_buffer *rb;
	int efd;                    /* readable while the queue has records */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	bool stop;                  /* under lock */
	struct record *head, **tail; /* the queue, under lock */
	size_t bytes;               /* its records' sizes, under lock */
	size_t max;                 /* QUEUE_MAX, or MEMTRACE_DEFER_QUEUE */
	uint64_t most;              /* the largest bytes seen (-v) */
};

static int enqueue(void *ctx, void *data, size_t size)
{
	struct mt_copy_reader *r = ctx;
	struct record *rec = malloc(sizeof(*rec) + size);
	bool was_empty, full;

	if (!rec)
		return 0; /* this one lost, as a full ring would */
	rec->next = NULL;
	rec->size = size;
	memcpy(rec->data, data, size);
	pthread_mutex_lock(&r->lock);
	was_empty = !r->head;
	*r->tail = rec;
	r->tail = &rec->next;
	r->bytes += size;
	if (r->bytes > r->most)
		r->most = r->bytes;
	full = r->bytes > r->max;
	pthread_mutex_unlock(&r->lock);
	if (was_empty) {
		uint64_t one = 1;

		if (write(r->efd, &one, sizeof(one)) < 0) {
			/* The counter cannot overflow at one a drain. */
		}
	}
	/* Full: this poll ends here (the record is taken), the ring is left
	 * until the loader takes the queue; a flood of records would run
	 * past the bound within one poll otherwise (176 MiB). */
	return full ? -ENOSPC : 0;
}

static void *run(void *arg)
{
	struct mt_copy_reader *r = arg;

	/* Its work is short and must not wait: on a busy machine (two
	 * cores, a program's first run, its tables being made, the loader)
	 * a thread of equal weight waited long enough for an 8 MiB ring
	 * to fill (566 copies of python3's lost).  Not permitted: as is. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), READER_NICE) < 0) {
		/* Unprivileged: the default weight. */
	}
	for (;;) {
		bool stop, full;
		int got;

		pthread_mutex_lock(&r->lock);
		stop = r->stop;
		full = r->bytes > r->max;
		pthread_mutex_unlock(&r->lock);
		if (stop)
			break;
		if (full) {
			usleep(POLL_MS * 1000);
			continue;
		}
		got = ring_buffer__poll(r->rb, POLL_MS);
		if (got < 0 && got != -EINTR && got != -ENOSPC)
			usleep(POLL_MS * 1000);
	}
	return NULL;
}

struct mt_copy_reader *mt_copy_reader_start(int map_fd, int wake_epoll_fd)
{
	struct mt_copy_reader *r = calloc(1, sizeof(*r));
	struct epoll_event ev = { .events = EPOLLIN };
	const char *queue;
	int err;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->tail = &r->head;
	/* Test hook: a queue bound of so many bytes. */
	queue = getenv("MEMTRACE_DEFER_QUEUE");
	r->max = queue && *queue ? strtoul(queue, NULL, 0) : QUEUE_MAX;
	r->efd = -1;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0)
		goto fail;
	/* Data no ring of the loader's has: ring_buffer__consume(), all the
	 * loader calls on that epoll set, never looks at its events. */
	ev.data.u32 = UINT32_MAX;
	if (wake_epoll_fd >= 0 &&
	    epoll_ctl(wake_epoll_fd, EPOLL_CTL_ADD, r->efd, &ev) < 0)
		goto fail;
	r->rb = ring_buffer__new(map_fd, enqueue, r, NULL);
	if (!r->rb)
		goto fail;
	err = pthread_create(&r->thread, NULL, run, r);
	if (err) {
		errno = err;
		goto fail;
	}
	r->running = true;
	return r;
fail:
	err = errno;
	mt_copy_reader_free(r);
	errno = err;
	return NULL;
}

void mt_copy_reader_stop(struct mt_copy_reader *r)
{
	if (!r || !r->running)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	r->running = false;
	/* What the ring still holds is read by mt_copy_reader_drain(), on the
	 * caller's thread now. */
}

size_t mt_copy_reader_drain(struct mt_copy_reader *r,
			    int (*fn)(void *ctx, void *data, size_t size),
			    void *ctx)
{
	struct record *rec, *next;
	uint64_t count;
	size_t n = 0;
	bool more;

	if (!r)
		return 0;
	do {
		/* Stopped: the ring is read here, a queue's worth at a
		 * time. */
		more = !r->running && ring_buffer__consume(r->rb) == -ENOSPC;
		pthread_mutex_lock(&r->lock);
		if (read(r->efd, &count, sizeof(count)) < 0) {
			/* Not readable: nothing queued since the last. */
		}
		rec = r->head;
		r->head = NULL;
		r->tail = &r->head;
		r->bytes = 0;
		pthread_mutex_unlock(&r->lock);
		for (; rec; rec = next, n++) {
			next = rec->next;
			fn(ctx, rec->data, rec->size);
			free(rec);
		}
	} while (more);
	return n;
}

uint64_t mt_copy_reader_most(const struct mt_copy_reader *r)
{
	return r ? r->most : 0;
}

void mt_copy_reader_free(struct mt_copy_reader *r)
{
	struct record *rec, *next;

	if (!r)
		return;
	mt_copy_reader_stop(r);
	ring_buffer__free(r->rb);
	if (r->efd >= 0)
		close(r->efd);
	for (rec = r->head; rec; rec = next) {
		next = rec->next;
		free(rec);
	}
	pthread_mutex_destroy(&r->lock);
	free(r);
}
