/* The pprof writer: see pprof.h. A small protobuf encoder (varints, length-delimited fields,
 * packed repeated integers) over a growing buffer, gzip'd by zlib. */
#include "pprof.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../model/hash.h"
#include "util/grow.h"

/* Field numbers of profile.proto (perftools.profiles). */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

#define WIRE_VARINT 0
#define WIRE_LEN 2

size_t pprof_columns(enum stack_type t, enum value_kind kind, double hz,
		     struct pprof_column cols[2])
{
	static const struct {
		const char *unit;
		double scale;
	} units[VALUE_KIND_MAX] = {
		[VALUE_SAMPLES] = { "count", 1 },     [VALUE_NANOSECONDS] = { "nanoseconds", 1 },
		[VALUE_MICROSECONDS] = { "nanoseconds", 1000 }, [VALUE_BYTES] = { "bytes", 1 },
		[VALUE_FAULTS] = { "count", 1 },
	};
	unsigned k = (unsigned)kind < VALUE_KIND_MAX ? (unsigned)kind : VALUE_SAMPLES;
	size_t n = 0;

	cols[n++] = (struct pprof_column){ kind == VALUE_SAMPLES ? "samples" : stack_type_name(t),
					   units[k].unit, units[k].scale };
	/* Only on-CPU samples at a frequency: each sample stands for 1/hz s of CPU time. */
	if (kind == VALUE_SAMPLES && (unsigned)t < STACK_TYPES && stack_types[t].rate_slot < 0 &&
	    hz > 0)
		cols[n++] = (struct pprof_column){ "cpu", "nanoseconds", round(1e9 / hz) };
	return n;
}

struct pbuf {
	unsigned char *b;
	size_t len, cap;
	int err;
};

static void put_raw(struct pbuf *o, const void *p, size_t n)
{
	if (o->err || ARRAY_GROW(o->b, o->cap, o->len + n)) {
		o->err = -ENOMEM;
		return;
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

static void put_varint(struct pbuf *o, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put_raw(o, t, n);
}

static void put_tag(struct pbuf *o, unsigned field, unsigned wire)
{
	put_varint(o, (uint64_t)field << 3 | wire);
}

/* A scalar field; zero is the default and is left out, as protobuf encoders do. */
static void put_uint(struct pbuf *o, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_tag(o, field, WIRE_VARINT);
	put_varint(o, v);
}

static void put_bytes(struct pbuf *o, unsigned field, const void *p, size_t n)
{
	put_tag(o, field, WIRE_LEN);
	put_varint(o, n);
	put_raw(o, p, n);
}

/* A message field whose body is sub (emptied for the next one). */
static void put_msg(struct pbuf *o, unsigned field, struct pbuf *sub)
{
	if (sub->err)
		o->err = sub->err;
	put_bytes(o, field, sub->b, sub->len);
	sub->len = 0;
}

/* A location: one frame, or a frame and the chain of frames inlined into it (parent is the
 * location of the frame it is inlined into, 0 for none). */
struct loc {
	uint32_t parent, frame;
};

struct enc {
	const struct frames *ft;
	struct strtab *st;     /* the file's string table; id 0 is "" as pprof wants */
	uint32_t *func_of;     /* frame id -> function id, 0 when not yet written */
	uint32_t *map_of;      /* module string id (ft's) -> mapping id */
	uint32_t nfuncs, nmaps;
	struct loc *locs;      /* location id - 1 -> its chain */
	size_t nlocs, loc_cap;
	uint32_t *slots;       /* open addressing over (parent, frame) -> location id */
	size_t nslots;
	uint64_t *ids;	       /* one sample's location ids, leaf first */
	size_t ids_cap;
	struct pbuf out, sub, sub2;
	/* the part being walked and its place among the columns */
	size_t col0, ncols, mycols;
	struct pprof_column cols[2];
};

static uint32_t str_id(struct enc *e, const char *s)
{
	uint32_t id = strtab__intern(e->st, s ? s : "", s ? strlen(s) : 0);

	if (id == (uint32_t)-1)
		e->out.err = -ENOMEM;
	return id == (uint32_t)-1 ? 0 : id;
}

static int slots_grow(struct enc *e)
{
	size_t n = e->nslots ? e->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < e->nlocs; i++) {
		uint64_t h = hash_mix((uint64_t)e->locs[i].parent << 32 | e->locs[i].frame);
		size_t j = h & (n - 1);

		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(e->slots);
	e->slots = s;
	e->nslots = n;
	return 0;
}

/* The location of frame inlined into parent (0: a frame of its own), added if new; 0 on
 * ENOMEM. */
static uint32_t loc_id(struct enc *e, uint32_t parent, uint32_t frame)
{
	size_t j;

	if ((e->nlocs + 1) * 2 > e->nslots && slots_grow(e))
		return 0;
	j = hash_mix((uint64_t)parent << 32 | frame) & (e->nslots - 1);
	for (; e->slots[j]; j = (j + 1) & (e->nslots - 1)) {
		const struct loc *l = &e->locs[e->slots[j] - 1];

		if (l->parent == parent && l->frame == frame)
			return e->slots[j];
	}
	if (e->nlocs >= UINT32_MAX - 1 || ARRAY_GROW(e->locs, e->loc_cap, e->nlocs + 1))
		return 0;
	e->locs[e->nlocs++] = (struct loc){ parent, frame };
	e->slots[j] = (uint32_t)e->nlocs;
	return (uint32_t)e->nlocs;
}

static int add_sample(void *ctx, const uint32_t *frames, size_t depth, double self, double self2)
{
	struct enc *e = ctx;
	struct pbuf *s = &e->sub;
	size_t n = 0;
	uint32_t cur = 0;

	(void)self2;
	if (ARRAY_GROW(e->ids, e->ids_cap, depth + 1))
		return -ENOMEM;
	/* Root first in the tree; an inlined frame joins the location of the frame before it. */
	for (size_t i = 0; i < depth; i++) {
		const struct frame *f = frames__get(e->ft, frames[i]);
		bool inl = f->kind == FRAME_INLINED && cur;

		cur = loc_id(e, inl ? cur : 0, frames[i]);
		if (!cur)
			return -ENOMEM;
		if (inl)
			e->ids[n - 1] = cur;
		else
			e->ids[n++] = cur;
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint64_t t = e->ids[i];

		e->ids[i] = e->ids[n - 1 - i];
		e->ids[n - 1 - i] = t;
	}
	for (size_t i = 0; i < n; i++)
		put_varint(&e->sub2, e->ids[i]);
	if (n)
		put_msg(s, SAMPLE_LOCATION_ID, &e->sub2);
	for (size_t c = 0; c < e->ncols; c++) {
		bool mine = c >= e->col0 && c < e->col0 + e->mycols;

		put_varint(&e->sub2, mine ? (uint64_t)llround(self * e->cols[c - e->col0].scale) : 0);
	}
	put_msg(s, SAMPLE_VALUE, &e->sub2);
	put_msg(&e->out, PROFILE_SAMPLE, s);
	return e->out.err;
}

static void put_value_type(struct enc *e, unsigned field, const struct pprof_column *c)
{
	put_uint(&e->sub, VALUE_TYPE_TYPE, str_id(e, c->type));
	put_uint(&e->sub, VALUE_TYPE_UNIT, str_id(e, c->unit));
	put_msg(&e->out, field, &e->sub);
}

static uint32_t function_id(struct enc *e, uint32_t frame)
{
	const struct strtab *fst = frames__strtab(e->ft);
	const struct frame *f = frames__get(e->ft, frame);
	uint32_t name;

	if (e->func_of[frame])
		return e->func_of[frame];
	e->func_of[frame] = ++e->nfuncs;
	name = str_id(e, frames__name(e->ft, frame));
	put_uint(&e->sub, FUNCTION_ID, e->nfuncs);
	put_uint(&e->sub, FUNCTION_NAME, name);
	put_uint(&e->sub, FUNCTION_SYSTEM_NAME, name);
	if (f->file)
		put_uint(&e->sub, FUNCTION_FILENAME, str_id(e, strtab__str(fst, f->file)));
	put_msg(&e->out, PROFILE_FUNCTION, &e->sub);
	return e->nfuncs;
}

/* Functions, mappings (the modules the frames name), then the locations' lines, innermost
 * inlined frame first as pprof orders them. */
static void put_tables(struct enc *e)
{
	const struct strtab *fst = frames__strtab(e->ft);

	for (size_t i = 0; i < e->nlocs; i++)
		for (uint32_t l = (uint32_t)(i + 1); l; l = e->locs[l - 1].parent)
			function_id(e, e->locs[l - 1].frame);
	for (size_t i = 0; i < e->nlocs; i++) {
		uint32_t base = (uint32_t)(i + 1);
		uint32_t mod;

		while (e->locs[base - 1].parent)
			base = e->locs[base - 1].parent;
		mod = frames__get(e->ft, e->locs[base - 1].frame)->module;
		if (!mod || e->map_of[mod])
			continue;
		e->map_of[mod] = ++e->nmaps;
		put_uint(&e->sub, MAPPING_ID, e->nmaps);
		put_uint(&e->sub, MAPPING_FILENAME, str_id(e, strtab__str(fst, mod)));
		put_uint(&e->sub, MAPPING_HAS_FUNCTIONS, 1);
		put_msg(&e->out, PROFILE_MAPPING, &e->sub);
	}
	for (size_t i = 0; i < e->nlocs; i++) {
		uint32_t l = (uint32_t)(i + 1), mod = 0;

		put_uint(&e->sub, LOCATION_ID, i + 1);
		for (; l; l = e->locs[l - 1].parent) {
			const struct frame *f = frames__get(e->ft, e->locs[l - 1].frame);

			put_uint(&e->sub2, LINE_FUNCTION_ID, e->func_of[e->locs[l - 1].frame]);
			put_uint(&e->sub2, LINE_LINE, f->line);
			put_msg(&e->sub, LOCATION_LINE, &e->sub2);
			mod = f->module;
		}
		/* After the lines in the bytes is still valid protobuf: fields may come in any
		 * order, and decoders merge them. */
		put_uint(&e->sub, LOCATION_MAPPING_ID, mod ? e->map_of[mod] : 0);
		put_msg(&e->out, PROFILE_LOCATION, &e->sub);
	}
}

static void enc_free(struct enc *e)
{
	strtab__free(e->st);
	free(e->func_of);
	free(e->map_of);
	free(e->locs);
	free(e->slots);
	free(e->ids);
	free(e->sub.b);
	free(e->sub2.b);
}

int pprof_encode(const struct typed_profile *parts, size_t n, const struct pprof_meta *m,
		 unsigned char **out, size_t *len)
{
	static const struct pprof_meta none = { 0 };
	struct enc e = { 0 };
	struct pprof_column cols[2];
	size_t col = 0;
	int err = 0;

	*out = NULL;
	*len = 0;
	if (!m)
		m = &none;
	if (!n)
		return -EINVAL;
	e.ft = profile__frames(parts[0].p);
	for (size_t i = 0; i < n; i++) {
		if (profile__frames(parts[i].p) != e.ft)
			return -EINVAL;
		e.ncols += pprof_columns(parts[i].type, profile__kind(parts[i].p), m->hz, cols);
	}
	e.st = strtab__new();
	e.func_of = calloc(frames__count(e.ft), sizeof(*e.func_of));
	e.map_of = calloc(strtab__count(frames__strtab(e.ft)), sizeof(*e.map_of));
	if (!e.st || !e.func_of || !e.map_of) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		e.mycols = pprof_columns(parts[i].type, profile__kind(parts[i].p), m->hz, e.cols);
		for (size_t c = 0; c < e.mycols; c++)
			put_value_type(&e, PROFILE_SAMPLE_TYPE, &e.cols[c]);
	}
	for (size_t i = 0; i < n && !err; i++) {
		e.mycols = pprof_columns(parts[i].type, profile__kind(parts[i].p), m->hz, e.cols);
		e.col0 = col;
		col += e.mycols;
		err = profile__for_each_stack(parts[i].p, ORDER_NAME, add_sample, &e);
	}
	if (err)
		goto out;
	put_tables(&e);
	/* The period: one sample's CPU time for on-CPU profiles, else one of the first column. */
	e.mycols = pprof_columns(parts[0].type, profile__kind(parts[0].p), m->hz, e.cols);
	if (m->start > 0)
		put_uint(&e.out, PROFILE_TIME_NANOS, (uint64_t)llround(m->start * 1e9));
	if (m->duration > 0)
		put_uint(&e.out, PROFILE_DURATION_NANOS, (uint64_t)llround(m->duration * 1e9));
	put_value_type(&e, PROFILE_PERIOD_TYPE, &e.cols[e.mycols - 1]);
	put_uint(&e.out, PROFILE_PERIOD, e.mycols > 1 ? (uint64_t)e.cols[1].scale : 1);
	for (uint32_t i = 0; i < strtab__count(e.st); i++)
		put_bytes(&e.out, PROFILE_STRING_TABLE, strtab__str(e.st, i), strtab__len(e.st, i));
	err = e.out.err ? e.out.err : e.sub.err ? e.sub.err : e.sub2.err;
out:
	if (err)
		free(e.out.b);
	else {
		*out = e.out.b ? e.out.b : malloc(1);
		*len = e.out.len;
		if (!*out)
			err = -ENOMEM;
	}
	enc_free(&e);
	return err;
}

int pprof_write(FILE *f, const struct typed_profile *parts, size_t n, const struct pprof_meta *m)
{
	unsigned char *pb, chunk[1 << 16];
	size_t len;
	z_stream z = { 0 };
	int err = pprof_encode(parts, n, m, &pb, &len), zr;

	if (err)
		return err;
	/* windowBits 15 + 16: a gzip header, with mtime 0 so equal profiles give equal files. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		free(pb);
		return -ENOMEM;
	}
	z.next_in = pb;
	do {
		size_t chunk_in = len - (size_t)(z.next_in - pb);

		z.avail_in = chunk_in > (1u << 30) ? 1u << 30 : (uInt)chunk_in;
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, z.avail_in == chunk_in ? Z_FINISH : Z_NO_FLUSH);
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, f) != sizeof(chunk) - z.avail_out)
			err = -(errno ? errno : EIO);
	} while (!err && zr == Z_OK);
	if (!err && zr != Z_STREAM_END)
		err = -EIO;
	deflateEnd(&z);
	free(pb);
	return err;
}
