// SPDX-License-Identifier: MIT
/* folded.c: the folded-stacks writer. */
#include "folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "stacks.h"

/* A frame name may hold neither the separator nor a line break. */
static void put_name(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		char c = *s;

		if (c == ';')
			c = ':';
		else if (c == '\n' || c == '\r' || c == '\t')
			c = ' ';
		putc(c, out);
	}
}

static const char *comm_of(const struct mt_profile *p, uint32_t pid)
{
	for (size_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid)
			return p->procs[i].comm;
	return "?";
}

int mt_write_folded(FILE *out, const struct mt_profile *p,
		    enum mt_value metric)
{
	bool multi = p->nprocs > 1;
	struct mt_stack_group *g;
	size_t ng;
	int ret = mt_stacks_group(p, multi, &g, &ng, NULL);

	if (ret)
		return ret;
	for (size_t i = 0; i < ng; i++) {
		const struct mt_sample *s = &p->samples[g[i].sample];

		if (g[i].v[metric] == 0)
			continue;
		if (multi) {
			put_name(out, comm_of(p, s->pid));
			fprintf(out, " (%" PRIu32 ")%s", s->pid, s->nframes ? ";" : "");
		}
		for (size_t k = s->nframes; k-- > 0;) {
			put_name(out, p->frames[s->frames[k]].function);
			if (k)
				putc(';', out);
		}
		fprintf(out, " %" PRId64 "\n", g[i].v[metric]);
	}
	free(g);
	return ferror(out) ? -EIO : 0;
}
