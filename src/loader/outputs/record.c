// SPDX-License-Identifier: MIT
/* record.c: --record DIR, and report DIR --at. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "outfile.h"
#include "trace_reports.h"

#define INDEX "index.tsv"
#define PROFILE "heap.pb.gz"

/* DIR/NAME into a string that lives as long as the process. */
static const char *in_dir(const char *dir, const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

int mt_record_prepare(struct mt_options *o)
{
	const char *dir = o->record;
	const char *idx, *prof;
	int err;

	/* As the user (outfile.h): not through another user's link, not
	 * into another's directory. */
	err = mt_outfile_mkdir(dir, 0755);
	if (err == -MT_OUTFILE_EFOREIGN_FILE)
		return mt_fail("--record %s: the directory belongs to another user",
			       dir);
	if (err)
		return mt_fail("--record %s: %s", dir, mt_outfile_strerror(err));
	idx = in_dir(dir, INDEX);
	prof = in_dir(dir, PROFILE);
	if (!idx || !prof)
		return mt_fail("--record: out of memory");
	if (access(idx, F_OK) == 0)
		return mt_fail("--record %s: it already holds a recording (%s)",
			       dir, INDEX);
	if (o->noutputs == MT_MAX_OUTPUTS)
		return mt_fail("--record: at most %d outputs", MT_MAX_OUTPUTS - 1);
	o->outputs[o->noutputs++] = (struct mt_output){ MT_FMT_PPROF, prof };
	if (o->interval <= 0)
		o->interval = 10;
	if (o->timeline_interval <= 0)
		return mt_fail("--record needs the timeline (--timeline-interval above 0)");
	if (!o->timeline_csv)
		o->timeline_csv = in_dir(dir, "timeline.csv");
	if (!o->timeline_svg)
		o->timeline_svg = in_dir(dir, "timeline.svg");
	if (!o->timeline_csv || !o->timeline_svg)
		return mt_fail("--record: out of memory");
	return 0;
}

int mt_record_index(const struct mt_options *o, unsigned seq, double t_s,
		    double at_s, uint64_t inuse)
{
	char path[4096], name[256], line[512];
	struct stat st = { 0 };
	ssize_t n;
	int fd, len, err;

	if (!o->record ||
	    snprintf(path, sizeof(path), "%s/%s", o->record, INDEX) >= (int)sizeof(path))
		return 0;
	if (seq)
		mt_reports_numbered(PROFILE, seq, o->count, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", PROFILE);
	len = snprintf(line, sizeof(line), "%u\t%.3f\t%.3f\t%llu\t%s\n", seq,
		       t_s, at_s, (unsigned long long)inuse, name);
	/* As the user (outfile.h), not through another user's link. */
	fd = mt_outfile_append(path, 0644);
	err = fd < 0 ? -fd : fstat(fd, &st) ? errno : 0;
	/* A line that cannot all be written (a full disk) is taken back, so
	 * that the index never ends in part of a line. */
	for (size_t done = 0; !err && done < (size_t)len; done += (size_t)n) {
		n = write(fd, line + done, (size_t)len - done);
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			if (done && ftruncate(fd, st.st_size))
				err = errno;
		}
	}
	if (fd >= 0 && close(fd) && !err)
		err = errno;
	if (!err)
		return 0;
	fprintf(stderr, "memtrace: --record: cannot write %s: %s\n", path,
		mt_outfile_strerror(err));
	return -1;
}

struct entry {
	unsigned seq;
	double t, at;
	unsigned long long inuse;
	char file[256];
};

int mt_record_pick(const struct mt_options *o, const char *dir, char *path,
		   size_t len)
{
	struct entry e, best = { 0 };
	bool found = false;
	char idx[4096], line[512];
	FILE *f;

	snprintf(idx, sizeof(idx), "%s/%s", dir, INDEX);
	f = fopen(idx, "re");
	if (!f)
		return mt_fail("%s: not a recording (no %s): %s", dir, INDEX,
			       strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char rest[256];

		if (sscanf(line, "%u\t%lf\t%lf\t%llu\t%255s", &e.seq, &e.t,
			   &e.at, &e.inuse, rest) != 5 || strchr(rest, '/'))
			continue;
		snprintf(e.file, sizeof(e.file), "%s", rest);
		snprintf(path, len, "%s/%s", dir, e.file);
		if (access(path, R_OK)) /* removed by --keep */
			continue;
		if (o->at_peak ? !found || e.inuse > best.inuse
			       : o->at_s >= 0 ? !found && e.t >= o->at_s
					      : e.seq == 0) {
			best = e;
			found = true;
		}
	}
	fclose(f);
	if (!found && o->at_s >= 0 && !o->at_peak)
		return mt_fail("%s: no profile kept covers %.2f s (the recording ends earlier, or --keep removed it)",
			       dir, o->at_s);
	if (!found)
		return mt_fail("%s: no profile kept in %s", dir, INDEX);
	if (snprintf(path, len, "%s/%s", dir, best.file) >= (int)len)
		return mt_fail("%s: path too long", dir);
	fprintf(stderr, "memtrace: %s: %s, the profile at %.2f s (%llu bytes in use)\n",
		dir, best.file, best.at, best.inuse);
	return 0;
}
