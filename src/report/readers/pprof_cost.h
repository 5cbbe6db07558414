/* SPDX-License-Identifier: MIT */
/*
 * pprof_cost.h: what decoding an encoded profile.proto with protobuf-c will
 * allocate, found by walking its wire format without allocating anything.
 *
 * protobuf-c's unpack allocates one struct per message, one array per
 * repeated field, one copy per string and unknown field, each as a separate
 * allocation; a small message costs many times its encoded size (an empty
 * Sample: 2 bytes encoded, over 100 in memory).  The pprof reader calls this
 * first, so that a profile too costly for its budget is rejected before any
 * of it is decoded.
 */
#ifndef MEMTRACE_PPROF_COST_H
#define MEMTRACE_PPROF_COST_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bytes that unpacking the LEN bytes at DATA as a Profile allocates, with
 * OVERHEAD bytes added per allocation (the reader's allocator header), plus
 * PER_SAMPLE bytes per Sample (what the reader keeps for each).  Stops
 * counting once the total passes LIMIT.  Returns 0 with *COST set, or
 * -EINVAL when the wire format is broken (protobuf-c would reject it).
 */
int mt_pprof_cost(const uint8_t *data, size_t len, size_t overhead,
		  size_t per_sample, uint64_t limit, uint64_t *cost);

#endif
