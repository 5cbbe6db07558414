// SPDX-License-Identifier: MIT
/* raw.c: the --raw writer. */
#include "raw.h"

#include <errno.h>
#include <inttypes.h>

#include "frame.h"

static const struct mt_module *module_of(const struct mt_raw_profile *raw,
					 uint32_t pid, uint64_t ip)
{
	for (size_t i = 0; i < raw->nprocs; i++) {
		const struct mt_process *pr = &raw->procs[i];

		if (pr->pid != pid)
			continue;
		for (size_t m = 0; m < pr->nmods; m++)
			if (ip >= pr->mods[m].start && ip < pr->mods[m].end)
				return &pr->mods[m];
	}
	return NULL;
}

/* The mapping of P that holds ADDR in process PID (any pid: 0). */
static const struct mt_map *map_of(const struct mt_profile *p, uint32_t pid,
				   uint64_t addr)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct mt_map *m = &p->maps[i];

		if ((m->pid == pid || m->pid == 0) && addr >= m->start &&
		    addr < m->limit)
			return m;
	}
	return NULL;
}

/* S's frames, leaf first, with their file and line. */
static void write_frames(FILE *out, const struct mt_profile *p,
			 const struct mt_sample *s)
{
	for (size_t k = 0; k < s->nframes; k++) {
		const struct mt_frame *f = &p->frames[s->frames[k]];

		fprintf(out, "  frame #%-3zu %s", k, f->function);
		if (f->file)
			fprintf(out, " %s:%d", f->file, f->line);
		fputs(f->inlined ? " (inlined)\n" : "\n", out);
	}
}

/*
 * A saved profile: its samples as they are, a location's address per
 * frame that is not inlined (module+file offset), then the frames.
 */
static int write_saved(FILE *out, const struct mt_profile *p)
{
	fprintf(out, "raw stacks: %zu (a saved profile: its samples, without stack ids or blocks)\n",
		p->nsamples);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct mt_sample *s = &p->samples[i];
		uint32_t ip = 0;

		fprintf(out, "\nstack %zu pid %" PRIu32 ": allocated %" PRId64
			" bytes in %" PRId64 " objects, freed %" PRId64
			" bytes in %" PRId64 " objects\n",
			i, s->pid, s->v[MT_ALLOC_SPACE], s->v[MT_ALLOC_OBJECTS],
			s->v[MT_ALLOC_SPACE] - s->v[MT_INUSE_SPACE],
			s->v[MT_ALLOC_OBJECTS] - s->v[MT_INUSE_OBJECTS]);
		for (size_t k = 0; k < s->nframes; k++) {
			const struct mt_frame *f = &p->frames[s->frames[k]];
			const struct mt_map *m;

			if (f->inlined || !f->addr)
				continue;
			m = map_of(p, s->pid, f->addr);
			fprintf(out, "  ip #%-3" PRIu32 " 0x%016" PRIx64 "  ", ip++, f->addr);
			if (m)
				fprintf(out, "%s+0x%" PRIx64 "\n", mt_path_basename(m->path),
					f->addr - m->start + m->offset);
			else
				fputs("[no module]\n", out);
		}
		write_frames(out, p, s);
	}
	return ferror(out) ? -EIO : 0;
}

int mt_write_raw(FILE *out, const struct mt_raw_profile *raw,
		 const struct mt_profile *p)
{
	if (!raw)
		return write_saved(out, p);
	fprintf(out, "raw stacks: %zu, outstanding blocks: %zu\n", raw->nstacks,
		raw->nblocks);
	for (size_t i = 0; i < raw->nstacks; i++) {
		const struct mt_raw_stack *rs = &raw->stacks[i];
		const struct mt_sample *s = i < p->nsamples ? &p->samples[i] : NULL;

		fprintf(out, "\nstack %zu id 0x%016" PRIx64 " pid %" PRIu32
			": allocated %" PRIu64 " bytes in %" PRIu64
			" objects, freed %" PRIu64 " bytes in %" PRIu64 " objects\n",
			i, rs->stack_id, rs->pid, rs->alloc_bytes, rs->alloc_objects,
			rs->free_bytes, rs->free_objects);
		for (uint32_t k = 0; k < rs->nips; k++) {
			const struct mt_module *m = module_of(raw, rs->pid, rs->ips[k]);

			fprintf(out, "  ip #%-3" PRIu32 " 0x%016" PRIx64 "  ", k, rs->ips[k]);
			if (m)
				fprintf(out, "%s+0x%" PRIx64 "\n", mt_path_basename(m->path),
					rs->ips[k] - m->bias);
			else
				fputs("[no module]\n", out);
		}
		if (s)
			write_frames(out, p, s);
	}
	return ferror(out) ? -EIO : 0;
}
