/* Reading snapshots (see snapshot.h and docs/snapshot.md); writing is in snapshot_write.c. */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../model/sanitize.h"
#include "../model/slices.h"
#include "../model/stack_type.h"
#include "../util/file.h"
#include "jsonio.h"
#include "snapshot_format.h"
#include "snapshot_l7.h"
#include "snapshot_timeline.h"
#include "sli.h"
#include "util/grow.h"


/* Everything snapshot_read allocates besides profiles, freed together. */
struct store {
	void **ptr;
	size_t n, cap;
};

struct reader {
	struct json_in s;
	struct frames *ft;
	struct snapshot *snap;
	struct store *store;
	uint32_t *fmap; /* file frame index -> frame id in ft */
	size_t nframes, fcap;
	char *tmp; /* sanitized text */
	size_t tcap;
};

static int oom(struct reader *r)
{
	return json_err_set(r->s.e, -ENOMEM, "%s", strerror(ENOMEM));
}

/* Records p (NULL on ENOMEM) in the store, freeing it if that fails. */
static void *store_keep(struct reader *r, void *p)
{
	struct store *st = r->store;

	if (p && ARRAY_GROW(st->ptr, st->cap, st->n + 1)) {
		free(p);
		return NULL;
	}
	if (p)
		st->ptr[st->n++] = p;
	return p;
}

/* Sanitizes s[0..n) into r->tmp; keep_lines keeps newlines and tabs (notes). */
static int clean_text(struct reader *r, const char *s, size_t n, bool keep_lines, size_t *len)
{
	size_t o = 0, i = 0;

	if (ARRAY_GROW(r->tmp, r->tcap, SANITIZE_MAX(n) + 1))
		return oom(r);
	while (i <= n) {
		size_t j = i;

		while (j < n && !(keep_lines && (s[j] == '\n' || s[j] == '\t')))
			j++;
		o += sanitize_is_clean(s + i, j - i) ? (memcpy(r->tmp + o, s + i, j - i), j - i)
						     : sanitize_text(s + i, j - i, r->tmp + o);
		if (j < n)
			r->tmp[o++] = s[j];
		i = j + 1;
	}
	r->tmp[o] = '\0';
	*len = o;
	return 0;
}

/* Reads a string into the store, sanitized. */
static int read_text(struct reader *r, bool keep_lines, const char **out)
{
	const char *s;
	size_t n;

	if (json_in__str(&r->s, &s, &n) || clean_text(r, s, n, keep_lines, &n))
		return -EINVAL;
	*out = store_keep(r, strndup(r->tmp, n));
	return *out ? 0 : oom(r);
}

/* Reads a short enum name ("kernel", "ns") and returns its parse, or -1. */
static int read_enum(struct reader *r, int (*parse)(const char *))
{
	const char *s;
	char word[16];
	size_t n;

	if (json_in__str(&r->s, &s, &n))
		return -2;
	if (n >= sizeof(word))
		return -1;
	memcpy(word, s, n);
	word[n] = '\0';
	return parse(word);
}

/* Reads the members of an object as key/value pairs into kv[SNAPSHOT_MAX_LIST]; a probe's "type" goes
 * to *type and its values may be numbers or booleans (kept as their text). */
static int read_kvs(struct reader *r, struct snapshot_kv *kv, size_t *n, const char **type)
{
	const char *key;
	size_t klen;
	bool first = true;
	int more;

	*n = 0;
	while ((more = json_in__obj_next(&r->s, &first, &key, &klen)) == 1) {
		const char *tok;
		size_t len;
		bool plain;

		if (type && json_key_is(key, klen, "type")) {
			if (*type)
				return json_in__fail(&r->s, "duplicate \"type\"");
			if (read_text(r, false, type))
				return -EINVAL;
			continue;
		}
		if (*n == SNAPSHOT_MAX_LIST)
			return json_in__fail(&r->s, "more than %d entries", SNAPSHOT_MAX_LIST);
		if (clean_text(r, key, klen, false, &len))
			return -EINVAL;
		kv[*n].key = store_keep(r, strndup(r->tmp, len));
		if (!kv[*n].key)
			return oom(r);
		for (size_t i = 0; i < *n; i++)
			if (!strcmp(kv[i].key, kv[*n].key))
				return json_in__fail(&r->s, "duplicate key");
		if (json_in__peek(&r->s, '"')) {
			if (read_text(r, false, &kv[*n].value))
				return -EINVAL;
		} else if (!type) {
			return json_in__fail(&r->s, "expected a string");
		} else {
			if (json_in__word(&r->s, "true"))
				tok = "true", len = 4;
			else if (json_in__word(&r->s, "false"))
				tok = "false", len = 5;
			else if (json_in__number(&r->s, &tok, &len, &plain))
				return -EINVAL;
			kv[*n].value = store_keep(r, strndup(tok, len));
			if (!kv[*n].value)
				return oom(r);
		}
		(*n)++;
	}
	if (!more && type && !*type)
		return json_in__fail(&r->s, "probe without a \"type\"");
	return more;
}

static int read_probes(struct reader *r, struct snapshot_meta *m)
{
	struct snapshot_probe *probes = store_keep(r, calloc(SNAPSHOT_MAX_LIST, sizeof(*probes)));
	bool first = true;
	int more;

	if (!probes)
		return oom(r);
	m->probes = probes;
	while ((more = json_in__arr_next(&r->s, &first)) == 1) {
		struct snapshot_kv *kv = store_keep(r, calloc(SNAPSHOT_MAX_LIST, sizeof(*kv)));

		if (!kv)
			return oom(r);
		if (m->nprobes == SNAPSHOT_MAX_LIST)
			return json_in__fail(&r->s, "more than %d probes", SNAPSHOT_MAX_LIST);
		json_in__where(&r->s, 1, "probes", m->nprobes);
		probes[m->nprobes].params = kv;
		if (read_kvs(r, kv, &probes[m->nprobes].nparams, &probes[m->nprobes].type))
			return -EINVAL;
		m->nprobes++;
	}
	return more;
}

static int read_meta(struct reader *r)
{
	struct snapshot_meta *m = &r->snap->meta;
	const char *key;
	size_t klen;
	bool first = true;
	int more, ret = 0;

	while (!ret && (more = json_in__obj_next(&r->s, &first, &key, &klen)) == 1) {
		json_in__where(&r->s, 0, "meta", SIZE_MAX);
		if (json_key_is(key, klen, "start")) {
			ret = json_in__value(&r->s, &m->start);
		} else if (json_key_is(key, klen, "end")) {
			ret = json_in__value(&r->s, &m->end);
		} else if (json_key_is(key, klen, "host")) {
			ret = read_text(r, false, &m->host);
		} else if (json_key_is(key, klen, "kernel")) {
			ret = read_text(r, false, &m->kernel);
		} else if (json_key_is(key, klen, "galatop_version")) {
			ret = read_text(r, false, &m->version);
		} else if (json_key_is(key, klen, "notes")) {
			ret = read_text(r, true, &m->notes);
		} else if (json_key_is(key, klen, "probes")) {
			ret = m->probes ? json_in__fail(&r->s, "duplicate \"probes\"")
					: read_probes(r, m);
		} else if (json_key_is(key, klen, "filters")) {
			struct snapshot_kv *kv = store_keep(r, calloc(SNAPSHOT_MAX_LIST, sizeof(*kv)));

			json_in__where(&r->s, 1, "filters", SIZE_MAX);
			ret = !kv	   ? oom(r)
			      : m->filters ? json_in__fail(&r->s, "duplicate \"filters\"")
					   : read_kvs(r, kv, &m->nfilters, NULL);
			m->filters = kv;
		} else {
			ret = json_in__skip(&r->s);
		}
	}
	if (ret || more < 0)
		return -EINVAL;
	if (m->end < m->start)
		return json_in__fail(&r->s, "end of the time range before its start");
	return 0;
}

/* Interns a frame string (already sanitized into r->tmp unless clean). */
static uint32_t intern_text(struct reader *r, const char *s, size_t n)
{
	if (!sanitize_is_clean(s, n)) {
		if (clean_text(r, s, n, false, &n))
			return UINT32_MAX;
		s = r->tmp;
	}
	return strtab__intern(frames__strtab(r->ft), s, n);
}

/* One frame: [name, module, kind, file, line]. */
static int read_frame(struct reader *r, uint32_t *id)
{
	struct frame f = {0};
	uint32_t *fields[] = {&f.name, &f.module, NULL, &f.file};
	const char *s;
	size_t n;
	uint64_t line;
	int kind;

	if (json_in__expect(&r->s, '['))
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		if (i && json_in__expect(&r->s, ','))
			return -EINVAL;
		if (i == 2) {
			kind = read_enum(r, frame_kind_parse);
			if (kind == -2)
				return -EINVAL;
			if (kind < 0)
				return json_in__fail(&r->s, "unknown frame kind");
			f.kind = (uint32_t)kind;
			continue;
		}
		if (json_in__str(&r->s, &s, &n))
			return -EINVAL;
		*fields[i] = intern_text(r, s, n);
		if (*fields[i] == UINT32_MAX)
			return oom(r);
	}
	if (json_in__expect(&r->s, ',') || json_in__uint(&r->s, UINT32_MAX, &line) ||
	    json_in__expect(&r->s, ']'))
		return -EINVAL;
	f.line = (uint32_t)line;
	*id = frames__intern(r->ft, &f);
	return *id == UINT32_MAX ? oom(r) : 0;
}

static int read_frames(struct reader *r)
{
	bool first = true;
	int more;

	while ((more = json_in__arr_next(&r->s, &first)) == 1) {
		if (ARRAY_GROW(r->fmap, r->fcap, r->nframes + 1))
			return oom(r);
		json_in__where(&r->s, 0, "frames", r->nframes);
		if (read_frame(r, &r->fmap[r->nframes]))
			return -EINVAL;
		r->nframes++;
	}
	return more;
}

/* A profile as read, before its tree is built. */
struct pdesc {
	const char *name, *type;
	int kind;
	bool chart, two;
	uint64_t nodes;
	double root_self, root_self2;
	void *col[COL_MAX]; /* uint32_t parent deltas and frames, double selfs */
	size_t len[COL_MAX];
	unsigned seen;	      /* bit per member, to refuse duplicates and missing ones */
	double t0, t1;	      /* a slice's time range */
	bool signed_self;     /* a slice of a type whose values go down: negative selfs too */
	struct slices *hist;  /* a profile's history, once read */
};

enum {
	SEEN_NAME = 1 << 0,
	SEEN_TYPE = 1 << 1,
	SEEN_VALUE = 1 << 2,
	SEEN_CHART = 1 << 3,
	SEEN_TWO = 1 << 4,
	SEEN_NODES = 1 << 5,
	SEEN_ROOT = 1 << 6,
	SEEN_ROOT2 = 1 << 7,
	SEEN_COL = 1 << 8, /* << column */
	SEEN_T0 = 1 << 12,
	SEEN_T1 = 1 << 13,
	SEEN_HISTORY = 1 << 14,
};

/* A profile's members; a slice of its history has t0, t1 and the tree ones. */
static const char *const profile_keys[] = {"name",	 "type",  "value",     "chart",
					   "two_column", "nodes", "root_self", "root_self2",
					   "parent",	 "frame", "self",      "self2",
					   "t0",	 "t1",	  "history"};
#define NKEYS (int)(sizeof(profile_keys) / sizeof(*profile_keys))

static int read_history(struct reader *r, struct pdesc *d);

static int read_column(struct reader *r, struct pdesc *d, enum column c)
{
	size_t esz = c < COL_SELF ? sizeof(uint32_t) : sizeof(double), n = 0, cap = 0;
	bool first = true;
	int more;

	while ((more = json_in__arr_next(&r->s, &first)) == 1) {
		uint64_t u;

		if (n >= UINT32_MAX - 1)
			return json_in__fail(&r->s, "too many nodes");
		if (array_grow(&d->col[c], &cap, n + 1, esz))
			return oom(r);
		json_in__where(&r->s, 1, column_names[c], n);
		if (c >= COL_SELF) {
			if ((d->signed_self ? json_in__signed : json_in__value)(&r->s,
										  (double *)d->col[c] + n))
				return -EINVAL;
		} else if (json_in__uint(&r->s, UINT32_MAX, &u)) {
			return -EINVAL;
		} else {
			((uint32_t *)d->col[c])[n] = (uint32_t)u;
		}
		n++;
	}
	d->len[c] = n;
	return more;
}

static int read_profile_member(struct reader *r, struct pdesc *d, int k)
{
	switch (k) {
	case 0:
		return read_text(r, false, &d->name);
	case 1:
		return read_text(r, false, &d->type);
	case 2:
		d->kind = read_enum(r, value_kind_parse);
		return d->kind == -2 ? -EINVAL
		       : d->kind < 0 ? json_in__fail(&r->s, "unknown value kind")
				     : 0;
	case 3:
		return json_in__bool(&r->s, &d->chart);
	case 4:
		return json_in__bool(&r->s, &d->two);
	case 5:
		return json_in__uint(&r->s, UINT32_MAX - 1, &d->nodes);
	case 6:
		return (d->signed_self ? json_in__signed : json_in__value)(&r->s, &d->root_self);
	case 7:
		return json_in__value(&r->s, &d->root_self2);
	case 12:
		return json_in__value(&r->s, &d->t0);
	case 13:
		return json_in__value(&r->s, &d->t1);
	case 14:
		return read_history(r, d);
	default:
		return read_column(r, d, (enum column)(k - 8));
	}
}

/* Builds the tree: node i + 1 hangs under node i + 1 - parent[i]; totals are summed in one pass
 * at the end, so even a hostile deep chain loads in linear time. */
static int build_profile(struct reader *r, const struct pdesc *d, struct profile **out)
{
	const uint32_t *parent = d->col[COL_PARENT], *frame = d->col[COL_FRAME];
	const double *self = d->col[COL_SELF], *self2 = d->col[COL_SELF2];
	size_t n = d->nodes;
	struct profile *p = profile__new(r->ft, (enum value_kind)d->kind, d->chart);
	uint32_t *map = malloc((n + 1) * sizeof(*map));
	int ret = 0;

	if (!p || !map || (d->two && profile__set_two_column(p))) {
		ret = oom(r);
		goto out;
	}
	map[0] = PROFILE_ROOT;
	for (size_t i = 0; i < n; i++) {
		size_t id = i + 1;

		r->s.index[1] = i;
		if (!parent[i] || parent[i] > id) {
			r->s.where[1] = "parent";
			ret = json_in__fail(&r->s, "parent distance %u out of range", parent[i]);
			goto out;
		}
		if (frame[i] >= r->nframes) {
			r->s.where[1] = "frame";
			ret = json_in__fail(&r->s, "frame %u out of range (%zu frames)", frame[i],
					    r->nframes);
			goto out;
		}
		map[id] = profile__child(p, map[id - parent[i]], r->fmap[frame[i]]);
		if (map[id] == PROFILE_NONE) {
			ret = oom(r);
			goto out;
		}
		profile__add_self(p, map[id], self[i], d->two ? self2[i] : 0);
	}
	profile__add_self(p, PROFILE_ROOT, d->root_self, d->root_self2);
	profile__sum_totals(p);
out:
	free(map);
	if (ret)
		profile__free(p);
	else
		*out = p;
	return ret;
}

/* Reads the members of a profile (or, with slice set, of a history slice: t0, t1 and the tree;
 * kind comes from the profile) into d and checks that the columns fit. */
static int read_object(struct reader *r, struct pdesc *d, bool slice)
{
	const char *key;
	size_t klen;
	bool first = true;
	int more, ret = 0;
	unsigned need = SEEN_NODES | SEEN_COL << COL_PARENT | SEEN_COL << COL_FRAME |
			SEEN_COL << COL_SELF;
	unsigned allowed = slice ? SEEN_NODES | SEEN_ROOT | SEEN_COL << COL_PARENT |
					   SEEN_COL << COL_FRAME | SEEN_COL << COL_SELF |
					   SEEN_T0 | SEEN_T1
				 : ~(unsigned)(SEEN_T0 | SEEN_T1);

	need |= slice ? SEEN_T0 | SEEN_T1 : SEEN_NAME | SEEN_TYPE | SEEN_VALUE;
	while (!ret && (more = json_in__obj_next(&r->s, &first, &key, &klen)) == 1) {
		int k = 0;

		while (k < NKEYS && !json_key_is(key, klen, profile_keys[k]))
			k++;
		if (k < NKEYS && !(allowed & 1u << k))
			k = NKEYS; /* not a member of this kind of object: skipped */
		if (!slice)
			json_in__where(&r->s, 1, k < NKEYS ? profile_keys[k] : NULL, SIZE_MAX);
		if (k == NKEYS)
			ret = json_in__skip(&r->s);
		else if (d->seen & 1u << k)
			ret = json_in__fail(&r->s, "duplicate member");
		else
			ret = read_profile_member(r, d, k);
		d->seen |= k < NKEYS ? 1u << k : 0;
	}
	if (!slice)
		json_in__where(&r->s, 1, NULL, SIZE_MAX);
	if (ret || more < 0)
		return -EINVAL;
	if (d->two)
		need |= SEEN_COL << COL_SELF2;
	if ((d->seen & need) != need || (!d->two && d->seen & (SEEN_ROOT2 | SEEN_COL << COL_SELF2)))
		return json_in__fail(&r->s, "missing members (or self2 without two_column)");
	if (!slice && !*d->type)
		return json_in__fail(&r->s, "empty type");
	for (int c = 0; c < (d->two ? COL_MAX : COL_SELF2); c++)
		if (d->len[c] != d->nodes)
			return json_in__fail(&r->s, "%s has %zu entries for %llu nodes",
					     column_names[c], d->len[c], (unsigned long long)d->nodes);
	return 0;
}

static void pdesc_fini(struct pdesc *d)
{
	for (int c = 0; c < COL_MAX; c++)
		free(d->col[c]);
	slices__free(d->hist);
}

static int read_profile(struct reader *r, struct snapshot_profile *sp)
{
	struct pdesc d = {.kind = -1};
	int ret = read_object(r, &d, false);

	if (!ret) {
		sp->name = d.name;
		sp->type = d.type;
		ret = build_profile(r, &d, &sp->p);
	}
	if (!ret) {
		sp->history = d.hist;
		d.hist = NULL;
	}
	pdesc_fini(&d);
	return ret;
}

/* What a history holds while it is read; the ring is made once the number of slices is known. */
struct hist_read {
	struct slice *v;
	size_t n, cap;
	double *heat;
	size_t nheat, heat_cap;
	uint64_t heat_first;
	double heat_base;
	unsigned seen;
};

static int read_heat(struct reader *r, struct hist_read *h, bool down)
{
	bool first = true;
	int more;

	while ((more = json_in__arr_next(&r->s, &first)) == 1) {
		if (h->nheat == SLICES_HEAT_MAX)
			return json_in__fail(&r->s, "more than %u heat buckets", SLICES_HEAT_MAX);
		if (ARRAY_GROW(h->heat, h->heat_cap, h->nheat + 1))
			return oom(r);
		if ((down ? json_in__signed : json_in__value)(&r->s, &h->heat[h->nheat]))
			return -EINVAL;
		h->nheat++;
	}
	return more;
}

static int read_slices(struct reader *r, struct hist_read *h, int kind, bool down)
{
	bool first = true;
	int more;

	while ((more = json_in__arr_next(&r->s, &first)) == 1) {
		struct pdesc d = {.kind = kind, .signed_self = down};
		double prev = h->n ? h->v[h->n - 1].t1 : 0;
		int ret;

		if (h->n == SNAPSHOT_MAX_SLICES)
			return json_in__fail(&r->s, "more than %d slices", SNAPSHOT_MAX_SLICES);
		json_in__where(&r->s, 1, "history.slices", h->n);
		ret = read_object(r, &d, true);
		if (!ret && !(d.t1 > d.t0 && d.t0 >= prev))
			ret = json_in__fail(&r->s, "times %g..%g out of order", d.t0, d.t1);
		if (!ret && ARRAY_GROW(h->v, h->cap, h->n + 1))
			ret = oom(r);
		if (!ret)
			ret = build_profile(r, &d, &h->v[h->n].p);
		if (!ret) {
			h->v[h->n].t0 = d.t0;
			h->v[h->n].t1 = d.t1;
			h->n++;
		}
		pdesc_fini(&d);
		if (ret)
			return ret;
	}
	return more;
}

/* The "history" member of a profile: {"bucket_s", "heat_first", "heat", "slices", "heat_base"}. */
static int read_history(struct reader *r, struct pdesc *d)
{
	static const char *const keys[] = {"bucket_s", "heat_first", "heat", "slices", "heat_base"};
	struct hist_read h = {0};
	/* A stack type whose values go down keeps changes, negative ones too, in its history. */
	int t = d->type ? stack_type_parse(d->type) : -1;
	bool down = t >= 0 && stack_types[t].can_go_down;
	const char *key;
	size_t klen;
	bool first = true;
	int more, ret = 0;

	if (!(d->seen & SEEN_VALUE))
		return json_in__fail(&r->s, "history before value");
	while (!ret && (more = json_in__obj_next(&r->s, &first, &key, &klen)) == 1) {
		int k = 0;
		double bs;

		while (k < 5 && !json_key_is(key, klen, keys[k]))
			k++;
		if (k < 5 && h.seen & 1u << k) {
			ret = json_in__fail(&r->s, "duplicate member %s", keys[k]);
			break;
		}
		h.seen |= k < 5 ? 1u << k : 0;
		switch (k) {
		case 0:
			ret = json_in__value(&r->s, &bs);
			if (!ret && fabs(bs - SLICES_BUCKET_S) > 1e-9)
				ret = json_in__fail(&r->s, "heat bucket of %g s (this galatop "
							   "reads %g s)", bs, SLICES_BUCKET_S);
			break;
		case 1:
			ret = json_in__uint(&r->s, 1ull << 40, &h.heat_first);
			break;
		case 2:
			ret = read_heat(r, &h, down);
			break;
		case 3:
			ret = read_slices(r, &h, d->kind, down);
			break;
		case 4:
			ret = json_in__signed(&r->s, &h.heat_base);
			break;
		default:
			ret = json_in__skip(&r->s);
		}
	}
	if (!ret && more >= 0) {
		d->hist = slices__new(r->ft, (enum value_kind)d->kind, h.n < 2 ? 2 : h.n, 0);
		if (!d->hist)
			ret = oom(r);
		for (size_t i = 0; !ret && i < h.n; i++)
			if (slices__push(d->hist, h.v[i].t0, h.v[i].t1, h.v[i].p))
				ret = oom(r);
		if (!ret)
			slices__heat_add_base(d->hist, h.heat_base);
		/* Buckets of a type whose values go down hold changes, negative ones too. */
		for (size_t i = 0; !ret && i < h.nheat; i++)
			if (h.heat[i] != 0 &&
			    slices__heat_add(d->hist,
					     ((double)(h.heat_first + i) + 0.5) * SLICES_BUCKET_S,
					     h.heat[i]) == -ENOMEM)
				ret = oom(r);
	} else if (!ret) {
		ret = -EINVAL;
	}
	for (size_t i = 0; i < h.n; i++)
		profile__free(h.v[i].p);
	free(h.v);
	free(h.heat);
	return ret;
}

static int read_profiles(struct reader *r)
{
	struct snapshot *snap = r->snap;
	bool first = true;
	int more;

	snap->profiles = store_keep(r, calloc(SNAPSHOT_MAX_LIST, sizeof(*snap->profiles)));
	if (!snap->profiles)
		return oom(r);
	while ((more = json_in__arr_next(&r->s, &first)) == 1) {
		if (snap->nprofiles == SNAPSHOT_MAX_LIST)
			return json_in__fail(&r->s, "more than %d profiles", SNAPSHOT_MAX_LIST);
		json_in__where(&r->s, 0, "profiles", snap->nprofiles);
		if (read_profile(r, &snap->profiles[snap->nprofiles]))
			return -EINVAL;
		snap->nprofiles++;
	}
	return more;
}

/* The "sli" section (export/sli): its text is handed whole to the SLI parser. */
static int read_sli(struct reader *r)
{
	const char *from;
	char err[256];
	int ret;

	while (r->s.p < r->s.end && strchr(" \t\r\n", *r->s.p))
		r->s.p++;
	from = r->s.p;
	if (json_in__skip(&r->s))
		return -EINVAL;
	ret = sli_snapshot_parse(from, (size_t)(r->s.p - from), &r->snap->sli, err, sizeof(err));
	if (ret == -ENOMEM)
		return oom(r);
	return ret ? json_err_set(r->s.e, ret, "%s", err) : 0;
}

enum head { HEAD_MATCH, HEAD_OTHER, HEAD_SHORT };

/* Whether text[0..n) starts with {"format":"galatop-snapshot" (JSON whitespace allowed), or is
 * too short to tell. */
static enum head match_head(const char *text, size_t n)
{
	static const char *const tokens[] = {"{", "\"format\"", ":", "\"" SNAPSHOT_FORMAT "\""};
	size_t i = 0;

	for (size_t t = 0; t < sizeof(tokens) / sizeof(*tokens); t++) {
		size_t len = strlen(tokens[t]), k;

		while (i < n &&
		       (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
			i++;
		k = n - i < len ? n - i : len;
		if (memcmp(text + i, tokens[t], k))
			return HEAD_OTHER;
		if (k < len)
			return HEAD_SHORT;
		i += len;
	}
	return HEAD_MATCH;
}

/* The document: "format" and "version" first, so that other files and newer versions are told
 * apart before anything else is read; then the other members, "frames" before "profiles". */
static int read_doc(struct reader *r)
{
	struct json_in *s = &r->s;
	const char *key, *str;
	size_t klen, n;
	bool first = true, meta = false, frames = false, profiles = false, sli = false;
	uint64_t version;
	int more, ret = 0;

	if (match_head(s->p, (size_t)(s->end - s->p)) != HEAD_MATCH)
		return json_err_set(s->e, -EINVAL,
				    "not a galatop snapshot (no \"format\":\"%s\" first)",
				    SNAPSHOT_FORMAT);
	if (json_in__obj_next(s, &first, &key, &klen) != 1 || json_in__str(s, &str, &n))
		return -EINVAL;
	if (json_in__obj_next(s, &first, &key, &klen) != 1 || !json_key_is(key, klen, "version"))
		return json_in__fail(s, "expected \"version\" after \"format\"");
	json_in__where(s, 0, "version", SIZE_MAX);
	if (json_in__uint(s, UINT32_MAX, &version))
		return -EINVAL;
	if (version != SNAPSHOT_VERSION)
		return json_err_set(s->e, -EINVAL,
				    "snapshot version %llu is not supported (this galatop reads "
				    "version %d): a newer galatop wrote it",
				    (unsigned long long)version, SNAPSHOT_VERSION);
	while (!ret && (more = json_in__obj_next(s, &first, &key, &klen)) == 1) {
		bool *seen = json_key_is(key, klen, "meta")	  ? &meta
			     : json_key_is(key, klen, "frames")	  ? &frames
			     : json_key_is(key, klen, "profiles") ? &profiles
			     : json_key_is(key, klen, "sli")	  ? &sli
								  : NULL;

		json_in__where(s, 0, NULL, SIZE_MAX);
		if (seen && *seen)
			return json_in__fail(s, "duplicate member");
		if (seen == &meta)
			ret = read_meta(r);
		else if (seen == &frames)
			ret = read_frames(r);
		else if (seen == &profiles)
			ret = frames ? read_profiles(r)
				     : json_in__fail(s, "\"profiles\" before \"frames\"");
		else if (json_key_is(key, klen, "l7"))
			ret = snapshot_l7_read(s, r->snap);
		else if (seen == &sli)
			ret = read_sli(r);
		else if (json_key_is(key, klen, "timeline") && !r->snap->timeline)
			ret = snapshot_timeline_read(s, &r->snap->timeline);
		else
			ret = json_in__skip(s);
		if (seen)
			*seen = true;
		if (!ret)
			json_in__where(s, 0, NULL, SIZE_MAX);
	}
	json_in__where(s, 0, NULL, SIZE_MAX);
	if (ret || more < 0)
		return -EINVAL;
	if (!json_in__at_end(s))
		return json_in__fail(s, "trailing data after the document");
	if (!profiles)
		return json_in__fail(s, "no \"profiles\"");
	return 0;
}

/* Inflates the gzip data in[0..len) into a new buffer *out (caller frees). */
static int inflate_all(const unsigned char *in, size_t len, char **out, size_t *outlen,
		       struct json_err *e)
{
	z_stream z = {0};
	size_t cap, used = 0;
	char *buf = NULL;
	int ret;

	if (!len)
		return json_err_set(e, -EINVAL, "empty file");
	if (len < 2 || in[0] != 0x1f || in[1] != 0x8b)
		return json_err_set(e, -EINVAL, "not a galatop snapshot (not gzip data)");
	if (len > SNAPSHOT_MAX_BYTES)
		return json_err_set(e, -EINVAL, "larger than %lu MiB", SNAPSHOT_MAX_BYTES >> 20);
	/* The trailer's size is a hint only: the data is not trusted yet. */
	cap = len >= 18 ? (size_t)in[len - 4] | (size_t)in[len - 3] << 8 |
			      (size_t)in[len - 2] << 16 | (size_t)in[len - 1] << 24
			: 0;
	if (cap < 65536 || cap > len * 64)
		cap = 65536;
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return json_err_set(e, -ENOMEM, "%s", strerror(ENOMEM));
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		if (used == cap || !buf) {
			if (buf && cap >= SNAPSHOT_MAX_BYTES) {
				ret = json_err_set(e, -EINVAL, "inflates to more than %lu MiB",
						   SNAPSHOT_MAX_BYTES >> 20);
				break;
			}
			cap = buf ? grow_cap(cap, cap + 1, 0, SNAPSHOT_MAX_BYTES) : cap;
			if (ARRAY_RESIZE(buf, cap)) {
				ret = json_err_set(e, -ENOMEM, "%s", strerror(ENOMEM));
				break;
			}
		}
		z.next_out = (unsigned char *)buf + used;
		z.avail_out = (uInt)(cap - used);
		ret = inflate(&z, Z_NO_FLUSH);
		used = cap - z.avail_out;
		if (ret == Z_STREAM_END) {
			ret = z.avail_in
				  ? json_err_set(e, -EINVAL, "trailing data after the gzip stream")
				  : 0;
			break;
		}
		if (ret == Z_MEM_ERROR) {
			ret = json_err_set(e, -ENOMEM, "%s", strerror(ENOMEM));
			break;
		}
		if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR) {
			ret = json_err_set(e, -EINVAL, "corrupt gzip data (%s)",
					   z.msg ? z.msg : "bad stream");
			break;
		}
		if (!z.avail_in && z.avail_out) {
			ret = json_err_set(e, -EINVAL, "truncated (the gzip stream ends early)");
			break;
		}
	}
	inflateEnd(&z);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	*outlen = used;
	return 0;
}

void snapshot_release(struct snapshot *s)
{
	struct store *st = s->store;

	if (!st)
		return;
	for (size_t i = 0; i < s->nprofiles; i++) {
		profile__free(s->profiles[i].p);
		slices__free(s->profiles[i].history);
	}
	snapshot_l7_free(s);
	timeline__free(s->timeline);
	sli__free(s->sli);
	for (size_t i = 0; i < st->n; i++)
		free(st->ptr[i]);
	free(st->ptr);
	free(st);
	memset(s, 0, sizeof(*s));
}

int snapshot_read_mem(const void *buf, size_t len, const char *name, struct frames *ft,
		      struct snapshot *s, char *err, size_t errlen)
{
	struct json_err e = {err, errlen, name, false};
	struct reader r = {.ft = ft, .snap = s};
	locale_t old, c;
	char *json = NULL;
	size_t n = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = inflate_all(buf, len, &json, &n, &e);
	if (ret)
		return ret;
	r.store = s->store = calloc(1, sizeof(struct store));
	if (!r.store) {
		free(json);
		return json_err_set(&e, -ENOMEM, "%s", strerror(ENOMEM));
	}
	json_in__init(&r.s, json, n, &e);
	c = json_c_locale_begin(&old);
	ret = read_doc(&r);
	json_c_locale_end(c, old);
	if (ret)
		snapshot_release(s);
	free(json);
	json_in__fini(&r.s);
	free(r.tmp);
	free(r.fmap);
	return ret;
}

int snapshot_read(const char *path, struct frames *ft, struct snapshot *s, char *err, size_t errlen)
{
	struct json_err e = {err, errlen, path, false};
	char *buf = NULL;
	size_t len = 0;
	int ret = file_read(path, SNAPSHOT_MAX_BYTES, 0, &buf, &len);

	memset(s, 0, sizeof(*s));
	if (ret == -EFBIG)
		ret = json_err_set(&e, -EINVAL, "larger than %lu MiB", SNAPSHOT_MAX_BYTES >> 20);
	else if (ret)
		ret = json_err_set(&e, ret, "%s", strerror(-ret));
	if (!ret)
		ret = snapshot_read_mem(buf, len, path, ft, s, err, errlen);
	free(buf);
	return ret;
}

bool snapshot_sniff(const void *head, size_t len)
{
	const unsigned char *h = head;
	z_stream z = {0};
	char text[64];
	int ret;

	if (len < 2 || h[0] != 0x1f || h[1] != 0x8b)
		return false;
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return true;
	z.next_in = (unsigned char *)h;
	z.avail_in = (uInt)(len < 65536 ? len : 65536);
	z.next_out = (unsigned char *)text;
	z.avail_out = sizeof(text);
	ret = inflate(&z, Z_SYNC_FLUSH);
	inflateEnd(&z);
	if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
		return false;
	return match_head(text, sizeof(text) - z.avail_out) != HEAD_OTHER;
}
