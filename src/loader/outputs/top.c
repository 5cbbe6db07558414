// SPDX-License-Identifier: MIT
/* top.c: `memtrace top`: the frames' timer, the keys, the drawing. */
#include "top.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "errmsg.h"
#include "loop.h"
#include "symbolize.h"
#include "tracer.h"
#include "units.h"

#define ALT_ON "\033[?1049h\033[?25l"
#define ALT_OFF "\033[?25h\033[?1049l"
#define FRAMES_SHOWN 4 /* a stack's functions on its line, leaf first */

/* The terminal to give back from a fatal signal's handler. */
static struct mt_top *live_view;

static const char *const sort_names[] = {
	[MT_TOP_INUSE] = "in use", [MT_TOP_GROWTH] = "growth",
	[MT_TOP_PEAK] = "peak", [MT_TOP_ALLOC] = "allocation rate",
};

static void restore_terminal(struct mt_top *v)
{
	if (v->screen) {
		ssize_t n = write(STDOUT_FILENO, ALT_OFF, sizeof(ALT_OFF) - 1);

		(void)n;
		v->screen = false;
	}
	if (v->restore)
		tcsetattr(STDIN_FILENO, TCSANOW, &v->saved);
	v->restore = false;
}

/* A crash leaves the terminal as it was, then dies of its signal. */
static void on_fatal(int sig)
{
	if (live_view)
		restore_terminal(live_view);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_exit_restore(void)
{
	if (live_view)
		restore_terminal(live_view);
}

static void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* V as bytes in the --unit, "+" before a growth. */
static const char *bytes(char *buf, size_t len, int64_t v, enum mt_unit u,
			 bool sign)
{
	size_t off = sign && v > 0 && len > 1;

	if (off)
		buf[0] = '+';
	mt_format_bytes(buf + off, len - off, v, u);
	return buf;
}

static int64_t per_s(int64_t v, double dt)
{
	return dt > 0 ? (int64_t)((double)v / dt) : v;
}

/* The lines of a frame: kept short of the terminal's width. */
struct out {
	FILE *f;
	bool tty;
	int cols;
	int lines, max_lines;
};

static void line(struct out *o, bool hilite, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void line(struct out *o, bool hilite, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (o->tty && o->lines >= o->max_lines)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (o->tty && n > o->cols) /* no wrapping on the screen */
		buf[o->cols > 0 ? o->cols : 0] = '\0';
	if (o->tty)
		fprintf(o->f, "%s%s\033[K%s\n", hilite ? "\033[7m" : "", buf,
			hilite ? "\033[0m" : "");
	else
		fprintf(o->f, "%s\n", buf);
	o->lines++;
}

/* The functions of sample S of PROF, leaf first: "f < g < h". */
static void stack_names(const struct mt_profile *prof, size_t s, char *buf,
			size_t len)
{
	const struct mt_sample *sm = &prof->samples[s];
	size_t off = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sm->nframes && shown < FRAMES_SHOWN; i++) {
		const char *fn = prof->frames[sm->frames[i]].function;
		int n = snprintf(buf + off, len - off, "%s%s", shown ? " < " : "",
				 fn ? fn : "?");

		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
		shown++;
	}
	if (shown < sm->nframes && off + 6 < len)
		snprintf(buf + off, len - off, " < ...");
}

/* The top stacks by growth of the focused process (or all), symbolised. */
static void draw_stacks(struct mt_top *v, struct out *o, size_t max)
{
	const struct mt_top_frame *f = &v->cur;
	struct mt_top_stack *rows = calloc(f->nstacks + 1, sizeof(*rows));
	struct mt_raw_profile sub = { 0 };
	struct mt_profile prof = { 0 };
	enum mt_unit u = v->o->unit;
	size_t n = 0;
	int ret;

	if (!rows) {
		line(o, false, "(out of memory)");
		return;
	}
	for (size_t i = 0; i < f->nstacks; i++)
		if ((!v->focus || f->stacks[i].pid == v->focus) &&
		    (f->stacks[i].inuse || f->stacks[i].growth))
			rows[n++] = f->stacks[i];
	mt_top_sort_stacks(rows, n);
	if (n > max)
		n = max;
	sub.stacks = calloc(n + 1, sizeof(*sub.stacks));
	if (!sub.stacks) {
		free(rows);
		line(o, false, "(out of memory)");
		return;
	}
	for (size_t i = 0; i < n; i++)
		sub.stacks[i] = f->raw.stacks[rows[i].raw]; /* ips borrowed */
	sub.nstacks = n;
	/* The tracer's processes now: its array may have moved since. */
	mt_tracer_procs(v->tr, &sub.procs, &sub.nprocs);
	ret = n ? mt_symbolize_cached(&sub, &prof, v->symbols) : 0;
	line(o, false, "%10s %10s %10s %7s  %s", "GROWTH", "GROWTH/s", "IN USE",
	     "PID", "STACK (callers after <)");
	for (size_t i = 0; i < n; i++) {
		char g[48], r[48], in[48], names[600];

		if (!ret && i < prof.nsamples)
			stack_names(&prof, i, names, sizeof(names));
		else
			snprintf(names, sizeof(names), "stack %" PRIu64,
				 rows[i].stack_id);
		line(o, false, "%10s %10s %10s %7u  %s",
		     bytes(g, sizeof(g), rows[i].growth, u, true),
		     bytes(r, sizeof(r), per_s(rows[i].growth, f->dt), u, true),
		     bytes(in, sizeof(in), (int64_t)rows[i].inuse, u, false),
		     rows[i].pid, names);
	}
	if (!n)
		line(o, false, "(no heap in use%s)", v->focus ? " in this process" : "");
	mt_profile_free(&prof);
	free(sub.stacks);
	free(rows);
}

static const char *comm_of(const struct mt_top_frame *f, uint32_t pid)
{
	for (size_t i = 0; i < f->nprocs; i++)
		if (f->procs[i].pid == pid)
			return f->procs[i].comm;
	return "?";
}

static void draw(struct mt_top *v)
{
	const struct mt_top_frame *f = &v->cur;
	struct mt_top_proc *rows = NULL;
	enum mt_unit u = v->o->unit;
	char *text = NULL;
	size_t len = 0, nrows = 0, first = 0, sel = 0;
	uint64_t inuse = 0, alloc = 0;
	int64_t growth = 0;
	int trows, tcols;
	struct out o;
	char a[48], b[48], c[48], d[48];

	o.f = open_memstream(&text, &len);
	if (!o.f)
		return;
	term_size(&trows, &tcols);
	o.tty = v->tty;
	o.cols = tcols;
	o.lines = 0;
	o.max_lines = trows - 1;
	rows = calloc(f->nprocs + 1, sizeof(*rows));
	for (size_t i = 0; rows && i < f->nprocs; i++) {
		inuse += f->procs[i].inuse;
		alloc += f->procs[i].alloc;
		growth += f->procs[i].growth;
		if (f->procs[i].inuse || f->procs[i].alloc || f->procs[i].growth)
			rows[nrows++] = f->procs[i];
	}
	mt_top_sort_procs(rows, nrows, v->sort);
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].pid == v->selected)
			sel = i;
	if (rows && nrows)
		v->selected = rows[sel].pid;
	if (v->tty)
		fputs("\033[H", o.f);
	line(&o, false, "memtrace top - %.1f s, frame %u, sorted by %s - %s, %" PRIu64 " events",
	     f->t, f->seq, sort_names[v->sort], f->raw.sum.target, f->events);
	line(&o, false, "in use %s, allocated/s %s, growth/s %s (last %.2f s: %s)",
	     bytes(a, sizeof(a), (int64_t)inuse, u, false),
	     bytes(b, sizeof(b), per_s((int64_t)alloc, f->dt), u, false),
	     bytes(c, sizeof(c), per_s(growth, f->dt), u, true), f->dt,
	     bytes(d, sizeof(d), growth, u, true));
	line(&o, false, "%s", "");
	line(&o, false, "%7s %-15s %10s %10s %10s %10s %10s", "PID", "COMM",
	     "IN USE", "GROWTH", "GROWTH/s", "PEAK", "ALLOC/s");
	{
		/* The process table: up to half the screen, the selection in it. */
		size_t room = v->tty ? (size_t)(o.max_lines > 16 ? (o.max_lines - 8) / 2 : 3)
				     : (size_t)v->o->top_n;

		if (sel >= room)
			first = sel - room + 1;
		for (size_t i = first; i < nrows && i < first + room; i++) {
			const struct mt_top_proc *p = &rows[i];
			char e[48];

			line(&o, v->keys && i == sel, "%7u %-15.15s %10s %10s %10s %10s %10s",
			     p->pid, p->comm,
			     bytes(a, sizeof(a), (int64_t)p->inuse, u, false),
			     bytes(b, sizeof(b), p->growth, u, true),
			     bytes(c, sizeof(c), per_s(p->growth, f->dt), u, true),
			     bytes(d, sizeof(d), (int64_t)p->peak, u, false),
			     bytes(e, sizeof(e), per_s((int64_t)p->alloc, f->dt), u, false));
		}
		if (!nrows)
			line(&o, false, "(no process has allocated yet)");
	}
	line(&o, false, "%s", "");
	if (v->focus)
		line(&o, false, "Top stacks by growth, pid %u (%s):", v->focus,
		     comm_of(f, v->focus));
	else
		line(&o, false, "Top stacks by growth, every process:");
	{
		size_t room = v->tty ? (size_t)(o.max_lines > o.lines + 2 ? o.max_lines - o.lines - 2 : 1)
				     : (size_t)v->o->top_n;

		if (room > (size_t)v->o->top_n)
			room = (size_t)v->o->top_n;
		draw_stacks(v, &o, room);
	}
	if (v->tty) {
		fputs("\033[J", o.f);
		if (v->keys)
			fprintf(o.f, "\033[%d;1H\033[7m%.*s\033[0m", trows, tcols,
				"q quit  i/g/p/a sort by in use/growth/peak/alloc  j/k or arrows select  Enter focus  0 all");
	} else {
		line(&o, false, "%s", "");
	}
	free(rows);
	fclose(o.f);
	if (text) {
		fwrite(text, 1, len, stdout);
		fflush(stdout);
	}
	free(text);
}

/* The loop's timer: a new frame, from a snapshot. */
static void on_frame(void *ctx, double now)
{
	struct mt_top *v = ctx;
	struct mt_raw_profile raw = { 0 };
	struct mt_top_frame next;
	int ret;

	(void)now;
	ret = mt_tracer_collect(v->tr, &raw);
	if (!ret)
		ret = mt_top_frame_make(&raw, &v->cur, &next);
	if (ret) {
		raw.procs = NULL;
		mt_raw_profile_free(&raw);
		if (!v->error) {
			v->error = ret;
			fprintf(stderr, "memtrace: top: cannot read the profile: %s\n",
				strerror(-ret));
		}
		return;
	}
	/* The timeline's peak is exact (it sees between frames). */
	for (size_t i = 0; v->tr->tl.on && i < next.nprocs; i++)
		for (size_t j = 0; j < v->tr->tl.data.n; j++)
			if (v->tr->tl.data.series[j].pid == next.procs[i].pid &&
			    v->tr->tl.data.series[j].peak > next.procs[i].peak)
				next.procs[i].peak = v->tr->tl.data.series[j].peak;
	mt_top_frame_free(&v->cur);
	v->cur = next;
	draw(v);
	if (v->o->top_frames && ++v->frames >= v->o->top_frames)
		kill(getpid(), SIGINT); /* stops as a SIGINT does */
}

/* Keys: one read of what the terminal has. */
static void on_keys(void *ctx, int fd, short revents)
{
	struct mt_top *v = ctx;
	struct mt_top_proc *rows;
	unsigned char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf));
	size_t nrows = 0, sel = 0;
	int move = 0;
	bool redraw = false;

	(void)revents;
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		/* The terminal is gone (it would be readable for ever): the
		 * view cannot be seen, so it ends, as on q. */
		if (v->keys)
			kill(getpid(), SIGINT);
		v->keys = false;
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = buf[i];

		if (c == 033 && i + 2 < n && buf[i + 1] == '[') {
			move += buf[i + 2] == 'A' ? -1 : buf[i + 2] == 'B' ? 1 : 0;
			i += 2;
			redraw = true;
			continue;
		}
		switch (c) {
		case 'q': case 'Q': case 3: /* Ctrl-C */
			kill(getpid(), SIGINT);
			return;
		case 'i': v->sort = MT_TOP_INUSE; break;
		case 'g': v->sort = MT_TOP_GROWTH; break;
		case 'p': v->sort = MT_TOP_PEAK; break;
		case 'a': v->sort = MT_TOP_ALLOC; break;
		case 'j': move++; break;
		case 'k': move--; break;
		case '\r': case '\n': case 'f': v->focus = v->selected; break;
		case '0': case 033: v->focus = 0; break;
		default: continue;
		}
		redraw = true;
	}
	if (!redraw || !v->cur.seq)
		return;
	/* Move the selection in the table's order. */
	rows = calloc(v->cur.nprocs + 1, sizeof(*rows));
	if (!rows)
		return;
	for (size_t i = 0; i < v->cur.nprocs; i++)
		if (v->cur.procs[i].inuse || v->cur.procs[i].alloc ||
		    v->cur.procs[i].growth)
			rows[nrows++] = v->cur.procs[i];
	mt_top_sort_procs(rows, nrows, v->sort);
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].pid == v->selected)
			sel = i;
	if (move < 0)
		sel = (size_t)-move > sel ? 0 : sel - (size_t)-move;
	else if (nrows)
		sel = sel + (size_t)move >= nrows ? nrows - 1 : sel + (size_t)move;
	if (nrows)
		v->selected = rows[sel].pid;
	free(rows);
	draw(v);
}

static bool foreground(void)
{
	pid_t fg = tcgetpgrp(STDIN_FILENO);

	return fg < 0 || fg == getpgrp();
}

static int raw_keys(struct mt_top *v)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || !foreground() ||
	    tcgetattr(STDIN_FILENO, &v->saved))
		return 0;
	t = v->saved;
	/* Key by key, no echo; Ctrl-C is a key too (it quits the view and
	 * memtrace alone, as q does, rather than the command's group). */
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t))
		return 0;
	v->restore = true;
	v->keys = true;
	return 0;
}

int mt_top_start(struct mt_top *v, const struct mt_options *o,
		 struct mt_tracer *tr, struct mt_symcache *symbols)
{
	int ret;

	memset(v, 0, sizeof(*v));
	v->o = o;
	v->tr = tr;
	v->sort = o->top_sort;
	v->tty = !o->top_batch && isatty(STDOUT_FILENO);
	v->own_symbols = !symbols;
	v->symbols = symbols ? symbols : mt_symcache_new();
	if (!v->symbols)
		return mt_fail("top: %s", strerror(ENOMEM));
	ret = mt_loop_add_timer(&tr->s.loop, o->top_interval, 0, on_frame, v);
	if (ret)
		return mt_fail("top: cannot time the frames: %s", strerror(-ret));
	if (!v->tty)
		return 0;
	live_view = v;
	atexit(on_exit_restore);
	signal(SIGSEGV, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGABRT, on_fatal);
	signal(SIGFPE, on_fatal);
	raw_keys(v);
	if (v->keys && (ret = mt_loop_add_fd(&tr->s.loop, STDIN_FILENO, on_keys, v))) {
		restore_terminal(v);
		return mt_fail("top: cannot read the keys: %s", strerror(-ret));
	}
	fputs(ALT_ON "\033[H\033[Jmemtrace top: the first frame comes after one interval (q quits)\n",
	      stdout);
	fflush(stdout);
	v->screen = true;
	return 0;
}

void mt_top_end(struct mt_top *v)
{
	if (!v->o)
		return;
	restore_terminal(v);
	if (live_view == v)
		live_view = NULL;
	mt_top_frame_free(&v->cur);
	if (v->own_symbols)
		mt_symcache_free(v->symbols);
	v->symbols = NULL;
	v->o = NULL;
}
