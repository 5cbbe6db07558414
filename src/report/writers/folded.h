/* SPDX-License-Identifier: MIT */
/*
 * folded.h: folded stacks for flamegraph.pl: one line per distinct stack,
 * frames root first joined by ';', a space, and the metric's value.
 */
#ifndef MEMTRACE_FOLDED_H
#define MEMTRACE_FOLDED_H

#include <stdio.h>
#include "profile.h"

/*
 * Stacks whose value is 0 are left out, so the values add up to the
 * metric's total.  When P holds more than one process, each stack starts
 * with a frame "COMM (PID)".  Returns 0 or -errno.
 */
int mt_write_folded(FILE *out, const struct mt_profile *p,
		    enum mt_value metric);

#endif
