// SPDX-License-Identifier: MIT
/*
 * http_symbol.c: /debug/pprof/symbol, as Go's net/http/pprof serves it
 * and go tool pprof asks it (its symbolz) for the addresses a profile
 * left without a function: GET with no addresses says "num_symbols: 1"
 * (symbols are to be had); POST "0xADDR+0xADDR+..." (or GET with them as
 * the query) answers that line and then "0xADDR NAME" for each address
 * found in a traced process's files.  The names are memtrace's own
 * (symbolize.h, with the server's symbol cache): for an address of code
 * with no symbol, the "file+0xOFFSET" its reports print.  The addresses
 * are the processes' own and the request does not say whose: each is
 * looked up in every traced process mapping a file there (at most
 * MAX_PROCS_PER_ADDR), a name with a symbol preferred.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_request.h"
#include "symbolize.h"

#define MAX_PROCS_PER_ADDR 8

/* An address asked for, and the stacks made to resolve it. */
struct want {
	uint64_t addr;
	size_t first, n;   /* into the stacks */
};

struct lookup {
	struct want *want;
	size_t nwant, wantcap;
	struct mt_raw_stack *stacks;
	uint64_t *ips;
	size_t nstacks, stackcap;
};

static int add_addr(struct lookup *lk, uint64_t addr)
{
	if (lk->nwant == lk->wantcap) {
		size_t cap = lk->wantcap ? 2 * lk->wantcap : 64;
		struct want *v = reallocarray(lk->want, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		lk->want = v;
		lk->wantcap = cap;
	}
	lk->want[lk->nwant++] = (struct want){ .addr = addr };
	return 0;
}

/* The addresses of TEXT: words between '+' (or blanks), as Go's
 * strconv.ParseUint(word, 0, 64) reads them; others are ignored. */
static int parse_addrs(struct lookup *lk, const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;
		char word[32], *end;
		uint64_t v;

		while (j < len && text[j] != '+' && text[j] != ' ' &&
		       text[j] != '\n' && text[j] != '\r' && text[j] != '\t')
			j++;
		if (j - i > 0 && j - i < sizeof(word)) {
			memcpy(word, text + i, j - i);
			word[j - i] = '\0';
			errno = 0;
			v = strtoull(word, &end, 0);
			if (!errno && !*end && v && word[0] != '-' &&
			    add_addr(lk, v))
				return -ENOMEM;
		}
		i = j + 1;
	}
	return 0;
}

static int add_stack(struct lookup *lk, uint32_t pid, uint64_t addr)
{
	if (lk->nstacks == lk->stackcap) {
		size_t cap = lk->stackcap ? 2 * lk->stackcap : 64;
		struct mt_raw_stack *s = reallocarray(lk->stacks, cap,
						      sizeof(*s));
		uint64_t *ips;

		if (!s)
			return -ENOMEM;
		lk->stacks = s;
		ips = reallocarray(lk->ips, cap, sizeof(*ips));
		if (!ips)
			return -ENOMEM;
		lk->ips = ips;
		lk->stackcap = cap;
	}
	/* The profile's address is the call's; a frame's, the return's. */
	lk->ips[lk->nstacks] = addr + 1;
	lk->stacks[lk->nstacks++] = (struct mt_raw_stack){
		.pid = pid, .stack_id = MT_STACK_NONE, .category = MT_CAT_HEAP,
		.nips = 1,
	};
	return 0;
}

static bool maps(const struct mt_process *p, uint64_t addr)
{
	for (size_t k = 0; k < p->nmods; k++)
		if (p->mods[k].start <= addr && addr < p->mods[k].end)
			return true;
	return false;
}

/* A one-address stack for each process mapping a file at each address. */
static int make_stacks(struct lookup *lk, const struct mt_raw_profile *raw)
{
	for (size_t i = 0; i < lk->nwant; i++) {
		struct want *w = &lk->want[i];

		w->first = lk->nstacks;
		for (size_t p = 0; p < raw->nprocs && w->n < MAX_PROCS_PER_ADDR; p++) {
			if (!maps(&raw->procs[p], w->addr))
				continue;
			if (add_stack(lk, raw->procs[p].pid, w->addr))
				return -ENOMEM;
			w->n++;
		}
	}
	for (size_t k = 0; k < lk->nstacks; k++)  /* the array has moved */
		lk->stacks[k].ips = &lk->ips[k];
	return 0;
}

/* The name of W: its innermost frame's, one with a symbol first. */
static const char *name_of(const struct mt_profile *prof, const struct want *w)
{
	const char *name = NULL;

	for (size_t k = w->first; k < w->first + w->n && k < prof->nsamples; k++) {
		const struct mt_sample *s = &prof->samples[k];
		const struct mt_frame *f = s->nframes ? &prof->frames[s->frames[0]]
						      : NULL;

		if (!f || !f->function)
			continue;
		if (!f->unresolved)
			return f->function;
		if (!name)
			name = f->function;
	}
	return name;
}

/* "num_symbols: 1" and a line per address of LK that has a name. */
static int answer(struct mt_http *h, struct lookup *lk, FILE *out)
{
	struct mt_http_result now = { 0 };
	struct mt_raw_profile syn = { 0 };
	struct mt_profile prof = { 0 };
	int ret;

	fputs("num_symbols: 1\n", out);
	if (!lk->nwant)
		return 0;
	ret = mt_http_bridge_call(&h->bridge, MT_HTTP_JOB_PROFILE,
				  MT_HTTP_WAIT_S, &now);
	if (!ret)
		ret = make_stacks(lk, &now.raw->raw);
	if (!ret && lk->nstacks) {
		syn.sum = now.raw->raw.sum;
		syn.procs = now.raw->raw.procs;
		syn.nprocs = now.raw->raw.nprocs;
		syn.stacks = lk->stacks;
		syn.nstacks = lk->nstacks;
		ret = mt_symbolize_cached(&syn, &prof, h->symbols);
	}
	for (size_t i = 0; !ret && lk->nstacks && i < lk->nwant; i++) {
		const char *name = name_of(&prof, &lk->want[i]);

		if (name)
			fprintf(out, "0x%" PRIx64 " %s\n", lk->want[i].addr, name);
	}
	mt_profile_free(&prof);
	mt_http_result_free(&h->bridge, &now);
	return ret;
}

/* GET's addresses: the query's words ("?0x1+0x2" is one argument). */
static enum MHD_Result query_word(void *cls, enum MHD_ValueKind kind,
				  const char *key, const char *value)
{
	struct lookup *lk = cls;

	(void)kind;
	(void)value;
	return key && parse_addrs(lk, key, strlen(key)) ? MHD_NO : MHD_YES;
}

enum MHD_Result mt_http_symbol(struct mt_http *h, struct MHD_Connection *c,
			       const char *body, size_t len)
{
	struct lookup lk = { 0 };
	char *data = NULL;
	size_t dlen = 0;
	FILE *out;
	int ret = 0;

	if (body)
		ret = parse_addrs(&lk, body, len);
	else
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_word,
					  &lk);
	out = ret ? NULL : open_memstream(&data, &dlen);
	if (!ret && !out)
		ret = -errno;
	if (!ret)
		ret = answer(h, &lk, out);
	if (out && fclose(out) && !ret)
		ret = -EIO;
	free(lk.want);
	free(lk.stacks);
	free(lk.ips);
	if (ret) {
		free(data);
		return mt_http_fail(c, ret);
	}
	return mt_http_send(c, MHD_HTTP_OK, "text/plain; charset=utf-8", data,
			    dlen);
}
