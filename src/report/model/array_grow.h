/* SPDX-License-Identifier: MIT */
/* array_grow.h: growing an array by doubling. */
#ifndef MEMTRACE_ARRAY_GROW_H
#define MEMTRACE_ARRAY_GROW_H

#include <stddef.h>

/*
 * Grow the array *ARRP points to (elements of SIZE bytes, capacity *CAP) to
 * hold NEED elements, doubling from 16.  ARRP is the address of the array
 * pointer, accessed with memcpy so that any element type works.  Returns 0
 * or -ENOMEM (the array is then as it was).
 */
int mt_reserve(void *arrp, size_t *cap, size_t need, size_t size);

#endif
