/* SPDX-License-Identifier: MIT */
/*
 * copy_reader.h: the ring buffer of stack copies (bpf/unwind_defer.h) and
 * of the mappings the kernel tells (bpf/vma_dump.h), read by a thread of
 * its own into a queue, so that a loader busy walking copies, reading
 * /proc or making a report does not leave the ring to overflow.
 */
#ifndef MEMTRACE_COPY_READER_H
#define MEMTRACE_COPY_READER_H

#include <stddef.h>
#include <stdint.h>

struct mt_copy_reader;

/*
 * Start reading the ring buffer map MAP_FD on a thread of its own.  The
 * epoll set WAKE_EPOLL_FD (the loader's, -1: none) becomes readable while
 * records wait in the queue.  NULL with errno on failure.
 */
struct mt_copy_reader *mt_copy_reader_start(int map_fd, int wake_epoll_fd);

/* Hand each queued record, in the ring's order, to FN on the caller's
 * thread (after mt_copy_reader_stop(), the ring's rest as well).
 * Returns how many. */
size_t mt_copy_reader_drain(struct mt_copy_reader *r,
			    int (*fn)(void *ctx, void *data, size_t size),
			    void *ctx);

/* The thread stops; mt_copy_reader_drain() reads the ring itself then. */
void mt_copy_reader_stop(struct mt_copy_reader *r);

/* The most bytes the queue held at once. */
uint64_t mt_copy_reader_most(const struct mt_copy_reader *r);

void mt_copy_reader_free(struct mt_copy_reader *r);

#endif
