/* SPDX-License-Identifier: MIT */
/*
 * pprof_cost.c: the memory protobuf-c's unpack of a Profile will take (see
 * pprof_cost.h).  protobuf-c has no way to measure a message without
 * decoding it, so this walks the wire format (tags, varints, lengths) with
 * a table of profile.proto's message fields; the decoding itself stays
 * protobuf-c's.
 */
#include "pprof_cost.h"

#include <errno.h>
#include <stdbool.h>
#include "pprof_pb.h"

enum msg { M_PROFILE, M_VALUE_TYPE, M_SAMPLE, M_LABEL, M_MAPPING,
	   M_LOCATION, M_LINE, M_FUNCTION, M__COUNT };

enum kind {
	F_UNKNOWN,     /* kept by protobuf-c as an unknown field */
	F_SCALAR,      /* in the struct */
	F_REP_SCALAR,  /* repeated (u)int64: an array of 8-byte elements */
	F_STRING,      /* a copy of the bytes and a NUL */
	F_REP_STRING,  /* the same, and an array of pointers */
	F_MSG,         /* a struct of its own */
	F_REP_MSG,     /* structs, and an array of pointers */
};

struct field {
	enum kind kind;
	enum msg type;  /* of F_MSG and F_REP_MSG */
};

#define MAX_FIELD 15

/* profile.proto (proto/profile.proto), field number -> what it is. */
static struct field field_of(enum msg m, uint64_t n)
{
	static const struct field profile[MAX_FIELD + 1] = {
		[1] = { F_REP_MSG, M_VALUE_TYPE }, [2] = { F_REP_MSG, M_SAMPLE },
		[3] = { F_REP_MSG, M_MAPPING }, [4] = { F_REP_MSG, M_LOCATION },
		[5] = { F_REP_MSG, M_FUNCTION }, [6] = { F_REP_STRING, 0 },
		[7] = { F_SCALAR, 0 }, [8] = { F_SCALAR, 0 }, [9] = { F_SCALAR, 0 },
		[10] = { F_SCALAR, 0 }, [11] = { F_MSG, M_VALUE_TYPE },
		[12] = { F_SCALAR, 0 }, [13] = { F_REP_SCALAR, 0 },
		[14] = { F_SCALAR, 0 }, [15] = { F_STRING, 0 },
	};
	static const struct field sample[4] = {
		[1] = { F_REP_SCALAR, 0 }, [2] = { F_REP_SCALAR, 0 },
		[3] = { F_REP_MSG, M_LABEL },
	};
	static const struct field location[6] = {
		[1] = { F_SCALAR, 0 }, [2] = { F_SCALAR, 0 }, [3] = { F_SCALAR, 0 },
		[4] = { F_REP_MSG, M_LINE }, [5] = { F_SCALAR, 0 },
	};
	/* Messages of scalars only: how many fields they have. */
	static const uint64_t nscalars[M__COUNT] = {
		[M_VALUE_TYPE] = 2, [M_LABEL] = 4, [M_MAPPING] = 10, [M_LINE] = 3,
		[M_FUNCTION] = 5,
	};
	const struct field unknown = { F_UNKNOWN, 0 };

	switch (m) {
	case M_PROFILE:
		return n <= MAX_FIELD ? profile[n] : unknown;
	case M_SAMPLE:
		return n < 4 ? sample[n] : unknown;
	case M_LOCATION:
		return n < 6 ? location[n] : unknown;
	default:
		return n >= 1 && n <= nscalars[m] ? (struct field){ F_SCALAR, 0 }
						  : unknown;
	}
}

static size_t struct_size(enum msg m)
{
	static const size_t size[M__COUNT] = {
		[M_PROFILE] = sizeof(PbProfile), [M_VALUE_TYPE] = sizeof(PbValueType),
		[M_SAMPLE] = sizeof(PbSample), [M_LABEL] = sizeof(PbLabel),
		[M_MAPPING] = sizeof(PbMapping), [M_LOCATION] = sizeof(PbLocation),
		[M_LINE] = sizeof(PbLine), [M_FUNCTION] = sizeof(PbFunction),
	};

	return size[m];
}

struct walk {
	size_t overhead, per_sample;
	uint64_t limit, cost;
};

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 70 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static void add(struct walk *w, uint64_t bytes)
{
	w->cost = w->cost > UINT64_MAX - bytes ? UINT64_MAX : w->cost + bytes;
}

/* The value of a field of wire type WT at *P: its bytes [*VAL, *VALEND). */
static bool value(const uint8_t **p, const uint8_t *end, uint64_t wt,
		  const uint8_t **val, const uint8_t **valend)
{
	uint64_t len;

	*val = *p;
	switch (wt) {
	case 0:
		if (!varint(p, end, &len))
			return false;
		break;
	case 1:
	case 5:
		if ((size_t)(end - *p) < (wt == 1 ? 8u : 4u))
			return false;
		*p += wt == 1 ? 8 : 4;
		break;
	case 2:
		if (!varint(p, end, &len) || len > (uint64_t)(end - *p))
			return false;
		*val = *p;
		*p += len;
		break;
	default:
		return false;  /* groups: protobuf-c rejects them too */
	}
	*valend = *p;
	return true;
}

/* Varints packed in [P, END): the bytes that end one. */
static uint64_t packed_count(const uint8_t *p, const uint8_t *end)
{
	uint64_t n = 0;

	for (; p < end; p++)
		n += !(*p & 0x80);
	return n;
}

static int walk_msg(struct walk *w, enum msg m, const uint8_t *p,
		    const uint8_t *end);

/* One field; COUNTS (per field number) gathers the repeated ones. */
static int walk_field(struct walk *w, enum msg m, uint64_t tag,
		      const uint8_t *val, const uint8_t *valend,
		      uint64_t *counts, uint64_t *nunknown)
{
	uint64_t n = tag >> 3, wt = tag & 7;
	struct field f = field_of(m, n);

	switch (f.kind) {
	case F_UNKNOWN:
		(*nunknown)++;
		add(w, (uint64_t)(valend - val) + w->overhead);
		return 0;
	case F_SCALAR:
		return 0;
	case F_REP_SCALAR:
		counts[n] += wt == 2 ? packed_count(val, valend) : 1;
		return 0;
	case F_REP_STRING:
		counts[n]++;
		/* fall through */
	case F_STRING:
		add(w, (uint64_t)(valend - val) + 1 + w->overhead);
		return 0;
	case F_REP_MSG:
		counts[n]++;
		/* fall through */
	case F_MSG:
		if (wt != 2)
			return -EINVAL;
		return walk_msg(w, f.type, val, valend);
	}
	return 0;
}

/*
 * protobuf-c scans a message's fields into slabs before it decodes them:
 * 16 on its stack, then slabs of 32 << k, 64 << k, ... fields of 32 bytes
 * each, from the allocator (freed when the message is done, but there at
 * the same time as everything under it).
 */
static void add_slabs(struct walk *w, uint64_t nfields)
{
	uint64_t room = 16;

	for (unsigned k = 1; nfields > room && k < 40; k++) {
		add(w, ((uint64_t)32 << (k + 4)) + w->overhead);
		room += (uint64_t)16 << k;
	}
}

static int walk_msg(struct walk *w, enum msg m, const uint8_t *p,
		    const uint8_t *end)
{
	uint64_t counts[MAX_FIELD + 1] = { 0 }, nunknown = 0, nfields = 0;

	add(w, struct_size(m) + w->overhead);
	if (m == M_SAMPLE)
		add(w, w->per_sample);
	while (p < end && w->cost <= w->limit) {
		const uint8_t *val, *valend;
		uint64_t tag;
		int err;

		if (!varint(&p, end, &tag) || (tag >> 3) == 0 ||
		    !value(&p, end, tag & 7, &val, &valend))
			return -EINVAL;
		err = walk_field(w, m, tag, val, valend, counts, &nunknown);
		if (err)
			return err;
		nfields++;
	}
	add_slabs(w, nfields);
	/* One array per repeated field: elements are 8 bytes (a pointer or
	 * an int64); unknown fields have one of their own. */
	for (int i = 0; i <= MAX_FIELD; i++) {
		if (counts[i])
			add(w, counts[i] * 8 + w->overhead);
	}
	if (nunknown)
		add(w, nunknown * sizeof(ProtobufCMessageUnknownField) +
			       w->overhead);
	return 0;
}

int mt_pprof_cost(const uint8_t *data, size_t len, size_t overhead,
		  size_t per_sample, uint64_t limit, uint64_t *cost)
{
	struct walk w = { .overhead = overhead, .per_sample = per_sample,
			  .limit = limit };
	int err = walk_msg(&w, M_PROFILE, data, data + len);

	*cost = w.cost;
	return err;
}
