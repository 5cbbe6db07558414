// SPDX-License-Identifier: MIT
/* top_sort.c: the sort orders of `memtrace top` by name (top_sort.h). */
#include "top_sort.h"

#include <stddef.h>
#include <string.h>

int mt_top_sort_parse(const char *s, enum mt_top_sort *out)
{
	static const char *const words[] = {
		[MT_TOP_INUSE] = "inuse", [MT_TOP_GROWTH] = "growth",
		[MT_TOP_PEAK] = "peak", [MT_TOP_ALLOC] = "alloc",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcmp(s, words[i]) == 0) {
			*out = (enum mt_top_sort)i;
			return 0;
		}
	}
	return -1;
}
