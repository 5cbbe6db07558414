/* SPDX-License-Identifier: MIT */
/* text_priv.h: the sections of the text report (text.c) and their helpers. */
#ifndef MEMTRACE_TEXT_PRIV_H
#define MEMTRACE_TEXT_PRIV_H

#include <stdint.h>
#include <stdio.h>
#include "text.h"

/* Room for any value or percentage the report prints. */
#define MT_TEXT_BUF 48

/* V of metric M: bytes formatted in unit U, objects as a plain integer. */
const char *mt_text_value(char *buf, size_t len, int64_t v, enum mt_value m,
			  enum mt_unit u);

/* "65.10%": V as a percentage of TOTAL ("0.00%" when TOTAL is 0). */
const char *mt_text_percent(char *buf, size_t len, int64_t v, int64_t total);

/* The other value of the same kind: alloc_space <-> alloc_objects, ... */
enum mt_value mt_text_counterpart(enum mt_value m);

/* FILE:LINE (or FILE when LINE is 0), preceded by SEP; nothing if no FILE. */
void mt_text_location(FILE *out, const char *sep, const char *file, int line);

/* A frame's function name, never NULL. */
const char *mt_text_function(const struct mt_frame *f);

/* Sum of metric M over all samples of P. */
int64_t mt_text_total(const struct mt_profile *p, enum mt_value m);

/* "Processes by METRIC:" rows, only when P holds more than one pid. */
int mt_text_processes(FILE *out, const struct mt_profile *p,
		      const struct mt_text_opts *o);

/* "Showing top N of M functions ..." and the flat/cum table. */
int mt_text_functions(FILE *out, const struct mt_profile *p,
		      const struct mt_text_opts *o);

/* "Top N stacks by METRIC:" and each stack's frames. */
int mt_text_stacks(FILE *out, const struct mt_profile *p,
		   const struct mt_text_opts *o);

/*
 * "Allocated by size class:" and a line per class that is not empty
 * (objects, bytes, share of the bytes, a bar); with --mmap the same for
 * the mappings; one line "... not recorded" when P has no histogram.
 */
int mt_text_sizes(FILE *out, const struct mt_profile *p,
		  const struct mt_text_opts *o);

#endif /* MEMTRACE_TEXT_PRIV_H */
