// SPDX-License-Identifier: MIT
/* growth_command.c: memtrace report --growth (see growth_command.h). */
#include "growth_command.h"

#include <stdio.h>
#include "growth_series.h"

int mt_report_growth(const struct mt_options *o,
		     const struct mt_pprof_limits *lim,
		     const struct mt_render_opts *ropts)
{
	struct mt_growth_opts go = { o->metric, o->top_n, (uint32_t)o->only_pid,
				     o->comm, lim, &o->view };
	struct mt_render_opts r = *ropts;
	struct mt_text_series series;
	struct mt_growth g;
	char err[1024];
	int ret = mt_growth_read((const char *const *)o->inputs, o->ninputs,
				 &go, &g, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "memtrace: %s\n", err);
		return 1;
	}
	series = (struct mt_text_series){ g.npoints, mt_growth_series, &g };
	r.text.series = &series;
	/* mt_render says what could not be written. */
	ret = mt_render(o->outputs, o->noutputs, &g.prof, NULL, &r);
	mt_growth_free(&g);
	return ret ? 1 : 0;
}
