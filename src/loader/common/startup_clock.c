// SPDX-License-Identifier: MIT
/* startup_clock.c: the start-up's phases timed, for -v (startup_clock.h). */
#include "startup_clock.h"
#include "loop.h"


static uint64_t begin_ns, end_ns;
/* Written by the thread that ran the phase, read once it is over. */
static uint64_t phase_ns[MT_STARTUP_NPHASES];

static const char *const phase_names[MT_STARTUP_NPHASES] = {
	[MT_STARTUP_SPAWN] = "spawn",
	[MT_STARTUP_OPEN] = "open",
	[MT_STARTUP_VERIFY] = "verify",
	[MT_STARTUP_ATTACH] = "attach",
	[MT_STARTUP_TABLES] = "unwind tables",
};

void mt_startup_begin(void)
{
	begin_ns = mt_loop_now_ns();
}

void mt_startup_add(enum mt_startup_phase phase, uint64_t since)
{
	__atomic_add_fetch(&phase_ns[phase], mt_loop_now_ns() - since,
			   __ATOMIC_RELAXED);
}

void mt_startup_end(void)
{
	if (!end_ns)
		end_ns = mt_loop_now_ns();
}

void mt_startup_say(FILE *f)
{
	uint64_t end = end_ns ? end_ns : mt_loop_now_ns();
	const char *sep = "";

	fprintf(f, "memtrace: started in %.1f ms (", (double)(end - begin_ns) / 1e6);
	for (int i = 0; i < MT_STARTUP_NPHASES; i++) {
		uint64_t ns = __atomic_load_n(&phase_ns[i], __ATOMIC_RELAXED);

		fprintf(f, "%s%s %.1f", sep, phase_names[i], (double)ns / 1e6);
		sep = ", ";
	}
	fprintf(f, ", in ms; the tables are made beside the rest)\n");
}
