/* The pprof reader: see pprof.h. The file is untrusted: every length is checked against what
 * is left, every id against its table, and the work is bounded by the size of the input (a
 * location's lines and a sample's frames have caps), so a hostile file fails in one line. */
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../model/sanitize.h"
#include "util/grow.h"

#define MAX_COLUMNS 64	      /* sample types */
#define MAX_LINES 256	      /* lines of one location (inlining depth) */
#define MAX_DEPTH (1u << 16)  /* frames of one sample */

/* A field of a message: its number, wire type, and value (varint) or bytes. */
struct field {
	uint64_t num;
	unsigned wire;
	uint64_t v;
	const unsigned char *p;
	size_t n;
};

struct cur {
	const unsigned char *p, *end;
};

struct rd {
	const char *label;
	char *err;
	size_t errlen;
	const unsigned char *base; /* the message, for byte offsets in errors */
	struct { const unsigned char *p; size_t n; } *strs;
	size_t nstrs, strs_cap;
	struct pcol { uint64_t type, unit; } cols[MAX_COLUMNS];
	size_t ncols;
	struct pfunc { uint64_t id, name; uint32_t frame[2]; } *funcs; /* frame: own, inlined */
	size_t nfuncs, funcs_cap;
	struct ploc { uint64_t id, address; size_t line0, nlines; } *locs;
	size_t nlocs, locs_cap;
	uint64_t *lines; /* function ids, innermost first, of every location */
	size_t nlines, lines_cap;
	struct frames *ft;
	uint32_t *stack;
	size_t stack_cap;
};

static int fail(struct rd *r, const unsigned char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct rd *r, const unsigned char *at, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->errlen, "%s: not a valid pprof profile: ", r->label);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		n += vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	if (at && n >= 0 && (size_t)n < r->errlen)
		snprintf(r->err + n, r->errlen - (size_t)n, " (byte %zu of the profile)",
			 (size_t)(at - r->base));
	return -EINVAL;
}

static int varint(struct cur *c, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		unsigned b;

		if (c->p >= c->end)
			return -1;
		b = *c->p++;
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* The next field of c; 0 at the end, 1 with a field, -1 on malformed bytes (truncated, a
 * group or an unknown wire type: profile.proto has none). */
static int next_field(struct cur *c, struct field *f)
{
	uint64_t tag;

	if (c->p >= c->end)
		return 0;
	if (varint(c, &tag) || !(tag >> 3))
		return -1;
	f->num = tag >> 3;
	f->wire = (unsigned)(tag & 7);
	switch (f->wire) {
	case 0:
		return varint(c, &f->v) ? -1 : 1;
	case 1:
	case 5: {
		size_t w = f->wire == 1 ? 8 : 4;

		if ((size_t)(c->end - c->p) < w)
			return -1;
		f->v = 0;
		memcpy(&f->v, c->p, w); /* little-endian hosts only: fixed fields are unused */
		c->p += w;
		return 1;
	}
	case 2:
		if (varint(c, &f->v) || f->v > (uint64_t)(c->end - c->p))
			return -1;
		f->p = c->p;
		f->n = (size_t)f->v;
		c->p += f->n;
		return 1;
	default:
		return -1;
	}
}

/* Calls fn for each integer of a repeated field: a packed run or one varint. */
static int each_int(struct rd *r, const struct field *f, int (*fn)(struct rd *, void *, uint64_t),
		    void *ctx)
{
	struct cur c = { f->p, f->p + f->n };
	uint64_t v;
	int ret;

	if (f->wire == 0)
		return fn(r, ctx, f->v);
	if (f->wire != 2)
		return fail(r, f->p, "field %" PRIu64 " has the wrong wire type", f->num);
	while (c.p < c.end) {
		if (varint(&c, &v))
			return fail(r, c.p, "truncated packed integers");
		ret = fn(r, ctx, v);
		if (ret)
			return ret;
	}
	return 0;
}

/* Parses the message bytes of f with fn called for each of its fields. */
static int each_field(struct rd *r, const unsigned char *p, size_t n,
		      int (*fn)(struct rd *, void *, const struct field *), void *ctx)
{
	struct cur c = { p, p + n };
	struct field f;
	int k, ret;

	while ((k = next_field(&c, &f)) > 0)
		if ((ret = fn(r, ctx, &f)))
			return ret;
	return k < 0 ? fail(r, c.p, "truncated or malformed field") : 0;
}

static int want_varint(struct rd *r, const struct field *f)
{
	return f->wire == 0 ? 0 : fail(r, f->p, "field %" PRIu64 " has the wrong wire type", f->num);
}

static int col_field(struct rd *r, void *ctx, const struct field *f)
{
	struct pcol *c = ctx;

	if (f->num == 1 || f->num == 2) {
		if (want_varint(r, f))
			return -EINVAL;
		*(f->num == 1 ? &c->type : &c->unit) = f->v;
	}
	return 0;
}

static int func_field(struct rd *r, void *ctx, const struct field *f)
{
	struct pfunc *fn = ctx;

	if (f->num == 1 || f->num == 2) {
		if (want_varint(r, f))
			return -EINVAL;
		*(f->num == 1 ? &fn->id : &fn->name) = f->v;
	}
	return 0;
}

static int line_field(struct rd *r, void *ctx, const struct field *f)
{
	if (f->num == 1)
		return want_varint(r, f) ? -EINVAL : (*(uint64_t *)ctx = f->v, 0);
	return 0;
}

static int loc_field(struct rd *r, void *ctx, const struct field *f)
{
	struct ploc *l = ctx;
	uint64_t fid = 0;

	switch (f->num) {
	case 1:
	case 3:
		if (want_varint(r, f))
			return -EINVAL;
		*(f->num == 1 ? &l->id : &l->address) = f->v;
		return 0;
	case 4:
		if (f->wire != 2)
			return fail(r, f->p, "a location's line is not a message");
		if (l->nlines >= MAX_LINES)
			return fail(r, f->p, "a location with more than %d lines", MAX_LINES);
		if (each_field(r, f->p, f->n, line_field, &fid))
			return -EINVAL;
		if (ARRAY_GROW(r->lines, r->lines_cap, r->nlines + 1))
			return -ENOMEM;
		r->lines[r->nlines++] = fid;
		l->nlines++;
		return 0;
	}
	return 0;
}

/* First pass: the tables, whatever their order (samples wait for the second). */
static int table_field(struct rd *r, void *ctx, const struct field *f)
{
	if (f->num < 1 || f->num > 6 || f->num == 2 || f->num == 3)
		return 0;
	if (f->wire != 2)
		return fail(r, f->p, "field %" PRIu64 " is not length-delimited", f->num);
	switch (f->num) {
	case 1:
		if (r->ncols >= MAX_COLUMNS)
			return fail(r, f->p, "more than %d sample types", MAX_COLUMNS);
		r->cols[r->ncols] = (struct pcol){ 0 };
		return each_field(r, f->p, f->n, col_field, &r->cols[r->ncols++]);
	case 4:
		if (ARRAY_GROW(r->locs, r->locs_cap, r->nlocs + 1))
			return -ENOMEM;
		r->locs[r->nlocs] = (struct ploc){ .line0 = r->nlines };
		return each_field(r, f->p, f->n, loc_field, &r->locs[r->nlocs++]);
	case 5:
		if (ARRAY_GROW(r->funcs, r->funcs_cap, r->nfuncs + 1))
			return -ENOMEM;
		r->funcs[r->nfuncs] = (struct pfunc){ .frame = { UINT32_MAX, UINT32_MAX } };
		return each_field(r, f->p, f->n, func_field, &r->funcs[r->nfuncs++]);
	case 6:
		if (ARRAY_GROW(r->strs, r->strs_cap, r->nstrs + 1))
			return -ENOMEM;
		r->strs[r->nstrs].p = f->p;
		r->strs[r->nstrs++].n = f->n;
		return 0;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts a table whose items start with their uint64 id; ids must be non-zero and distinct. */
static int sort_ids(struct rd *r, void *arr, size_t n, size_t size, const char *what)
{
	const char *a = arr;

	if (!n)
		return 0;
	qsort(arr, n, size, by_id);
	for (size_t i = 0; i < n; i++) {
		uint64_t id, prev = 0;

		memcpy(&id, a + i * size, sizeof(id));
		if (i)
			memcpy(&prev, a + (i - 1) * size, sizeof(prev));
		if (!id || (i && id == prev))
			return fail(r, NULL, "%s id %" PRIu64 " is %s", what, id,
				    id ? "used twice" : "reserved");
	}
	return 0;
}

static void *find_id(void *arr, size_t n, size_t size, uint64_t id)
{
	return n ? bsearch(&id, arr, n, size, by_id) : NULL;
}

static int str_at(struct rd *r, uint64_t i, const char *what, const unsigned char **p, size_t *n)
{
	if (i >= r->nstrs)
		return fail(r, NULL, "%s names string %" PRIu64 " of %zu", what, i, r->nstrs);
	*p = r->strs[i].p;
	*n = r->strs[i].n;
	return 0;
}

static bool str_is(struct rd *r, uint64_t i, const char *s)
{
	return i < r->nstrs && r->strs[i].n == strlen(s) && !memcmp(r->strs[i].p, s, r->strs[i].n);
}

/* The frame of function fn, inlined or not. An inlined one is a FRAME_INLINED frame of the same
 * name, as the recording had it: "_[i]" only where the recording annotated its frames. */
static int func_frame(struct rd *r, struct pfunc *fn, bool inl, uint32_t *frame)
{
	const unsigned char *s = NULL;
	size_t n = 0, k;
	char *buf;

	if (fn->frame[inl] != UINT32_MAX) {
		*frame = fn->frame[inl];
		return 0;
	}
	if (str_at(r, fn->name, "a function", &s, &n))
		return -EINVAL;
	buf = malloc(SANITIZE_MAX(n) + 16); /* room for "[unknown]" */
	if (!buf)
		return -ENOMEM;
	k = n ? sanitize_text((const char *)s, n, buf) : (size_t)sprintf(buf, "[unknown]");
	if (inl) {
		struct frame f = { .kind = FRAME_INLINED };

		f.name = strtab__intern(frames__strtab(r->ft), buf, k);
		fn->frame[inl] = f.name == UINT32_MAX ? UINT32_MAX : frames__intern(r->ft, &f);
	} else {
		fn->frame[inl] = frames__intern_name(r->ft, buf, k);
	}
	free(buf);
	if (fn->frame[inl] == UINT32_MAX)
		return -ENOMEM;
	*frame = fn->frame[inl];
	return 0;
}

/* Appends the frames of location id, root first, to the stack. */
static int push_location(struct rd *r, uint64_t id, size_t *depth)
{
	struct ploc *l = find_id(r->locs, r->nlocs, sizeof(*r->locs), id);
	char addr[32];

	if (!l)
		return fail(r, NULL, "a sample names location %" PRIu64 ", which is not there", id);
	if (*depth + l->nlines + 1 > MAX_DEPTH)
		return fail(r, NULL, "a sample deeper than %u frames", MAX_DEPTH);
	if (ARRAY_GROW(r->stack, r->stack_cap, *depth + l->nlines + 1))
		return -ENOMEM;
	if (!l->nlines) {
		/* Not symbolized: its address, as pprof shows it. */
		uint32_t f;
		int n = l->address ? snprintf(addr, sizeof(addr), "0x%" PRIx64, l->address)
				   : snprintf(addr, sizeof(addr), "[unknown]");

		f = frames__intern_name(r->ft, addr, (size_t)n);
		if (f == UINT32_MAX)
			return -ENOMEM;
		r->stack[(*depth)++] = f;
		return 0;
	}
	for (size_t i = l->nlines; i-- > 0;) {
		uint64_t fid = r->lines[l->line0 + i];
		struct pfunc *fn = find_id(r->funcs, r->nfuncs, sizeof(*r->funcs), fid);
		int err;

		if (!fn)
			return fail(r, NULL, "location %" PRIu64 " names function %" PRIu64
				    ", which is not there", id, fid);
		err = func_frame(r, fn, i + 1 < l->nlines, &r->stack[*depth]);
		if (err)
			return err;
		(*depth)++;
	}
	return 0;
}

struct sample {
	uint64_t *locs; /* leaf first */
	size_t nlocs, locs_cap;
	uint64_t value[MAX_COLUMNS];
	size_t nvalues;
};

static int add_loc(struct rd *r, void *ctx, uint64_t v)
{
	struct sample *s = ctx;

	if (ARRAY_GROW(s->locs, s->locs_cap, s->nlocs + 1))
		return -ENOMEM;
	s->locs[s->nlocs++] = v;
	return 0;
}

static int add_value(struct rd *r, void *ctx, uint64_t v)
{
	struct sample *s = ctx;

	if (s->nvalues >= r->ncols)
		return fail(r, NULL, "a sample has more values than the %zu sample types", r->ncols);
	s->value[s->nvalues++] = v;
	return 0;
}

static int sample_field(struct rd *r, void *ctx, const struct field *f)
{
	if (f->num == 1)
		return each_int(r, f, add_loc, ctx);
	if (f->num == 2)
		return each_int(r, f, add_value, ctx);
	return 0;
}

struct walk {
	struct sample s;
	size_t col;
	double scale; /* a value is divided by it */
	struct profile *p;
};

static int sample_msg(struct rd *r, void *ctx, const struct field *f)
{
	struct walk *w = ctx;
	size_t depth = 0;
	int64_t v;
	int err;

	if (f->num != 2)
		return 0;
	if (f->wire != 2)
		return fail(r, f->p, "a sample is not a message");
	w->s.nlocs = w->s.nvalues = 0;
	if ((err = each_field(r, f->p, f->n, sample_field, &w->s)))
		return err;
	if (w->s.nvalues != r->ncols)
		return fail(r, f->p, "a sample has %zu values for %zu sample types", w->s.nvalues,
			    r->ncols);
	v = (int64_t)w->s.value[w->col];
	if (v < 0)
		return fail(r, f->p, "a negative value (%" PRId64 ")", v);
	if (!v)
		return 0;
	for (size_t i = w->s.nlocs; i-- > 0;)
		if ((err = push_location(r, w->s.locs[i], &depth)))
			return err;
	if (!depth) {
		/* A sample without a stack still counts, as pprof counts it. */
		if (ARRAY_GROW(r->stack, r->stack_cap, 1))
			return -ENOMEM;
		r->stack[0] = frames__intern_name(r->ft, "[unknown]", 9);
		if (r->stack[depth++] == UINT32_MAX)
			return -ENOMEM;
	}
	return profile__add_stack(w->p, r->stack, depth, (double)v / w->scale);
}

/* Picks the column of type (see pprof.h) and the kind and scale its values come back in. */
static int pick_column(struct rd *r, const char *type, size_t *col, enum value_kind *kind,
		       double *scale)
{
	static const struct { const char *unit; enum value_kind kind; } units[] = {
		{ "nanoseconds", VALUE_NANOSECONDS }, { "microseconds", VALUE_MICROSECONDS },
		{ "bytes", VALUE_BYTES },
	};
	int asked = type ? stack_type_parse(type) : -1;

	if (!r->ncols)
		return fail(r, NULL, "no sample types");
	for (size_t c = 0; c < r->ncols; c++)
		if (r->cols[c].type >= r->nstrs || r->cols[c].unit >= r->nstrs)
			return fail(r, NULL, "sample type %zu names a string past the %zu of the "
				    "string table", c + 1, r->nstrs);
	*col = SIZE_MAX;
	for (size_t c = 0; c < r->ncols && *col == SIZE_MAX; c++) {
		struct pprof_column gc[2];

		if (!type || str_is(r, r->cols[c].type, type))
			*col = c;
		else if (asked >= 0 && (pprof_columns(asked, stack_types[asked].kind, 0, gc),
					str_is(r, r->cols[c].type, gc[0].type)))
			*col = c;
	}
	if (*col == SIZE_MAX) {
		int n = snprintf(r->err, r->errlen, "%s: no sample type %s (it has", r->label, type);

		for (size_t c = 0; c < r->ncols && n >= 0 && (size_t)n < r->errlen; c++) {
			/* Untrusted names: sanitized, and cut to keep the line short. */
			size_t len = r->strs[r->cols[c].type].n;
			char name[SANITIZE_MAX(32) + 1];

			len = sanitize_text((const char *)r->strs[r->cols[c].type].p,
					    len < 32 ? len : 32, name);
			n += snprintf(r->err + n, r->errlen - (size_t)n, " %.*s", (int)len, name);
		}
		if (n >= 0 && (size_t)n < r->errlen)
			snprintf(r->err + n, r->errlen - (size_t)n, ")");
		return -EINVAL;
	}
	/* galatop's own columns come back in the kind they were written from. */
	*kind = VALUE_SAMPLES;
	*scale = 1;
	for_each_stack_type(t) {
		struct pprof_column gc[2];

		pprof_columns(t, stack_types[t].kind, 0, gc);
		if (str_is(r, r->cols[*col].type, gc[0].type) &&
		    str_is(r, r->cols[*col].unit, gc[0].unit)) {
			*kind = stack_types[t].kind;
			*scale = gc[0].scale;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (str_is(r, r->cols[*col].unit, units[i].unit))
			*kind = units[i].kind;
	return 0;
}

/* Inflates a gzip file into *out (at most PPROF_MAX_BYTES). */
static int gunzip(struct rd *r, const unsigned char *buf, size_t len, unsigned char **out,
		  size_t *olen)
{
	z_stream z = { 0 };
	size_t cap = 0, n = 0;
	unsigned char *o = NULL;
	int zr = Z_OK;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	while (zr == Z_OK) {
		if (n == cap) {
			if (cap >= PPROF_MAX_BYTES ||
			    ARRAY_GROW(o, cap, n + (n < 65536 ? 65536 : n))) {
				inflateEnd(&z);
				free(o);
				if (cap >= PPROF_MAX_BYTES)
					return fail(r, NULL, "inflates to more than 1 GiB");
				return -ENOMEM;
			}
			if (cap > PPROF_MAX_BYTES)
				cap = PPROF_MAX_BYTES;
		}
		z.next_out = o + n;
		z.avail_out = (uInt)(cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
		if (zr == Z_BUF_ERROR && z.avail_out)
			break; /* no more input */
		if (zr == Z_BUF_ERROR)
			zr = Z_OK;
	}
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(o);
		return fail(r, NULL, zr == Z_BUF_ERROR ? "truncated gzip data"
						       : "corrupt gzip data");
	}
	*out = o;
	*olen = n;
	return 0;
}

static void rd_free(struct rd *r)
{
	free(r->strs);
	free(r->funcs);
	free(r->locs);
	free(r->lines);
	free(r->stack);
}

int pprof_read_mem(const void *buf, size_t len, const char *label, const char *type,
		   struct frames *ft, struct profile **out, char *err, size_t errlen)
{
	struct rd r = { .label = label, .err = err, .errlen = errlen, .ft = ft };
	const unsigned char *b = buf;
	unsigned char *plain = NULL;
	struct walk w = { 0 };
	enum value_kind kind = VALUE_SAMPLES;
	int ret;

	*out = NULL;
	err[0] = '\0';
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		ret = gunzip(&r, b, len, &plain, &len);
		if (ret)
			goto done;
		b = plain;
	}
	r.base = b;
	ret = each_field(&r, b, len, table_field, NULL);
	if (!ret && (!r.nstrs || r.strs[0].n))
		ret = fail(&r, NULL, "the string table does not start with \"\"");
	if (!ret)
		ret = pick_column(&r, type, &w.col, &kind, &w.scale);
	if (!ret)
		ret = sort_ids(&r, r.funcs, r.nfuncs, sizeof(*r.funcs), "function");
	if (!ret)
		ret = sort_ids(&r, r.locs, r.nlocs, sizeof(*r.locs), "location");
	if (!ret) {
		w.p = profile__new(ft, kind, false);
		ret = w.p ? each_field(&r, b, len, sample_msg, &w) : -ENOMEM;
	}
	free(w.s.locs);
	if (!ret) {
		*out = w.p;
		w.p = NULL;
	}
	profile__free(w.p);
done:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: %s", label, strerror(ENOMEM));
	else if (ret && !err[0])
		fail(&r, NULL, "malformed");
	free(plain);
	rd_free(&r);
	return ret == -ENOMEM ? -ENOMEM : ret ? -EINVAL : 0;
}

/* Whether wire is the wire type of Profile's field num (repeated integers packed or not). */
static bool profile_wire_ok(uint64_t num, unsigned wire)
{
	if (num < 1 || num > 15)
		return false;
	if (num <= 6 || num == 11)
		return wire == 2;
	return wire == 0 || (num == 13 && wire == 2);
}

/* Whether buf[0..len) is a whole well-formed Profile message with a string table that starts
 * with "" (field numbers of profile.proto only, each with its wire type). */
static bool plain_profile(const unsigned char *buf, size_t len)
{
	struct cur c = { buf, buf + len };
	struct field f;
	bool first_str = true, empty_first = false;
	int k;

	while ((k = next_field(&c, &f)) > 0) {
		if (!profile_wire_ok(f.num, f.wire))
			return false;
		if (f.num == 6) {
			if (first_str)
				empty_first = f.n == 0;
			first_str = false;
		}
	}
	return k == 0 && empty_first;
}

bool pprof_sniff(const void *buf, size_t len)
{
	const unsigned char *h = buf;
	unsigned char head[64];
	z_stream z = { 0 };
	struct cur c = { head, head };
	uint64_t tag;
	int ret;

	if (len < 2 || h[0] != 0x1f || h[1] != 0x8b)
		return plain_profile(h, len);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return false;
	z.next_in = (unsigned char *)h;
	z.avail_in = (uInt)(len < 65536 ? len : 65536);
	z.next_out = head;
	z.avail_out = sizeof(head);
	ret = inflate(&z, Z_SYNC_FLUSH);
	c.end = head + (sizeof(head) - z.avail_out);
	inflateEnd(&z);
	if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
		return false;
	/* The first field of a Profile: a known field number with its wire type (a bounded
	 * length may run past these few bytes). */
	if (c.end - c.p < 2 || c.p[0] == '{' || varint(&c, &tag))
		return false;
	return profile_wire_ok(tag >> 3, (unsigned)(tag & 7));
}
