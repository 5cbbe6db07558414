/* SPDX-License-Identifier: MIT */
/*
 * json.h: the profile as one JSON document, for scripts (--json).  The
 * schema ("memtrace-profile", schema_version 1) is described in
 * doc/json.md; fields are only ever added to it.
 */
#ifndef MEMTRACE_JSON_H
#define MEMTRACE_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include "profile.h"

/* Write P to OUT; functions and stacks ranked by METRIC (functions by
 * cum with BY_CUM).  Returns 0, -ENOMEM or -EIO. */
int mt_write_json(FILE *out, const struct mt_profile *p, enum mt_value metric,
		  bool by_cum);

#endif
