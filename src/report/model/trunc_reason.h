/* SPDX-License-Identifier: MIT */
/*
 * trunc_reason.h: the names of the reasons a stack is cut short (enum
 * mt_trunc_reason, bpf/memleak.h), one place for the report's header
 * ("no table"), pprof's facts ("truncated stacks no table") and the
 * /metrics label ("no_table").
 */
#ifndef MEMTRACE_TRUNC_REASON_H
#define MEMTRACE_TRUNC_REASON_H

#include <linux/types.h>
#include "memleak.h"

/* The words of reason R, or NULL for no reason. */
static inline const char *mt_trunc_reason_name(int r)
{
	switch (r) {
	case MT_TRUNC_NO_TABLE: return "no table";
	case MT_TRUNC_NO_CFI: return "no CFI";
	case MT_TRUNC_BAD_STACK: return "bad stack";
	case MT_TRUNC_DEPTH: return "depth";
	case MT_TRUNC_CFI_RULE: return "CFI rule";
	case MT_TRUNC_VMA_BUSY: return "mapping busy";
	case MT_TRUNC_COPY_LOST: return "copy lost";
	case MT_TRUNC_UNREADABLE: return "file unreadable";
	case MT_TRUNC_COPY_SHORT: return "copy short";
	default: return NULL;
	}
}

/* Reason R as a Prometheus label value, or NULL. */
static inline const char *mt_trunc_reason_label(int r)
{
	switch (r) {
	case MT_TRUNC_NO_TABLE: return "no_table";
	case MT_TRUNC_NO_CFI: return "no_cfi";
	case MT_TRUNC_BAD_STACK: return "bad_stack";
	case MT_TRUNC_DEPTH: return "depth";
	case MT_TRUNC_CFI_RULE: return "cfi_rule";
	case MT_TRUNC_VMA_BUSY: return "mapping_busy";
	case MT_TRUNC_COPY_LOST: return "copy_lost";
	case MT_TRUNC_UNREADABLE: return "file_unreadable";
	case MT_TRUNC_COPY_SHORT: return "copy_short";
	default: return NULL;
	}
}

#endif
