#include "table.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hash.h"
#include "model/sanitize.h"
#include "util/grow.h"

/* An open-addressing index over one of the row arrays: slots hold row index + 1. */
struct index {
	uint32_t *slots;
	uint64_t *hashes;
	size_t cap; /* power of two, 0 before first use */
};

struct l7_table {
	struct l7_session *sessions;
	size_t nsessions, sessions_cap;
	struct l7_endpoint *endpoints;
	size_t nendpoints, endpoints_cap;
	struct l7_pair *pairs;
	size_t npairs, pairs_cap;
	struct index sidx, eidx, pidx;
	uint64_t gen, records;
	uint64_t undecoded; /* header blocks the parsers could not decode */
};

/* Finds the row with hash h for which eq(ctx, row) holds; returns its index or -1, and the
 * free slot to use in *slot. */
static long index_find(const struct index *x, uint64_t h, bool (*eq)(const void *, uint32_t),
		       const void *ctx, size_t *slot)
{
	size_t mask = x->cap - 1;

	if (!x->cap)
		return -1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		if (!x->slots[i]) {
			*slot = i;
			return -1;
		}
		if (x->hashes[i] == h && eq(ctx, x->slots[i] - 1))
			return x->slots[i] - 1;
	}
}

/* Inserts row idx with hash h, growing to keep the load under one half. */
static int index_insert(struct index *x, uint64_t h, uint32_t idx, size_t nrows)
{
	size_t mask;

	if (nrows * 2 >= x->cap) {
		size_t ncap = x->cap ? x->cap * 2 : 256;
		uint32_t *slots = calloc(ncap, sizeof(*slots));
		uint64_t *hashes = calloc(ncap, sizeof(*hashes));

		if (!slots || !hashes) {
			free(slots);
			free(hashes);
			return -ENOMEM;
		}
		for (size_t i = 0; i < x->cap; i++) {
			size_t j;

			if (!x->slots[i])
				continue;
			for (j = x->hashes[i] & (ncap - 1); slots[j]; j = (j + 1) & (ncap - 1))
				;
			slots[j] = x->slots[i];
			hashes[j] = x->hashes[i];
		}
		free(x->slots);
		free(x->hashes);
		x->slots = slots;
		x->hashes = hashes;
		x->cap = ncap;
	}
	mask = x->cap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		if (!x->slots[i]) {
			x->slots[i] = idx + 1;
			x->hashes[i] = h;
			return 0;
		}
	}
}

static void index_free(struct index *x)
{
	free(x->slots);
	free(x->hashes);
	memset(x, 0, sizeof(*x));
}

struct l7_table *l7_table__new(void)
{
	return calloc(1, sizeof(struct l7_table));
}

void l7_stats_reset(struct l7_stats *st)
{
	hist_reset(&st->lat);
}

static void free_rows(struct l7_table *t)
{
	for (size_t i = 0; i < t->nsessions; i++)
		l7_stats_reset(&t->sessions[i].st);
	for (size_t i = 0; i < t->nendpoints; i++) {
		l7_stats_reset(&t->endpoints[i].st);
		for (size_t k = 0; k < t->endpoints[i].nslow; k++)
			free(t->endpoints[i].slow[k].stack);
	}
	for (size_t i = 0; i < t->npairs; i++)
		l7_stats_reset(&t->pairs[i].st);
}

void l7_table__free(struct l7_table *t)
{
	if (!t)
		return;
	free_rows(t);
	free(t->sessions);
	free(t->endpoints);
	free(t->pairs);
	index_free(&t->sidx);
	index_free(&t->eidx);
	index_free(&t->pidx);
	free(t);
}

void l7_table__clear(struct l7_table *t)
{
	free_rows(t);
	memset(t->sessions, 0, t->sessions_cap * sizeof(*t->sessions));
	memset(t->endpoints, 0, t->endpoints_cap * sizeof(*t->endpoints));
	memset(t->pairs, 0, t->pairs_cap * sizeof(*t->pairs));
	t->nsessions = t->nendpoints = t->npairs = 0;
	index_free(&t->sidx);
	index_free(&t->eidx);
	index_free(&t->pidx);
	t->gen++;
	t->records = 0;
	t->undecoded = 0;
}

static void copy_clean(char *dst, size_t cap, const char *src)
{
	char tmp[SANITIZE_MAX(127) + 1];
	size_t n = sanitize_text(src, strnlen(src, 127), tmp);

	snprintf(dst, cap, "%.*s", (int)n, tmp);
}

struct session_q {
	const struct l7_table *t;
	const struct l7_session_key *k;
};

static bool session_eq(const void *ctx, uint32_t i)
{
	const struct session_q *q = ctx;

	return !memcmp(&q->t->sessions[i].key, q->k, sizeof(*q->k));
}

int l7_table__session(struct l7_table *t, const struct l7_session_key *k, const char *comm,
		      uint64_t cgroup_id, uint32_t *idx)
{
	struct l7_session_key key = *k;
	struct session_q q = {t, &key};
	uint64_t h;
	size_t slot;
	long found;
	struct l7_session *s;

	key.pad = 0;
	h = hash_bytes(&key, sizeof(key));
	found = index_find(&t->sidx, h, session_eq, &q, &slot);
	if (found >= 0) {
		*idx = (uint32_t)found;
		return 0;
	}
	if (ARRAY_GROW_ZERO(t->sessions, t->sessions_cap, t->nsessions + 1) ||
	    index_insert(&t->sidx, h, (uint32_t)t->nsessions, t->nsessions))
		return -ENOMEM;
	s = &t->sessions[t->nsessions];
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->cgroup_id = cgroup_id;
	copy_clean(s->comm, sizeof(s->comm), comm);
	*idx = (uint32_t)t->nsessions++;
	t->gen++;
	return 0;
}

static void touch(struct l7_stats *st, uint64_t ts)
{
	if (!ts)
		return;
	if (!st->first_ns || ts < st->first_ns)
		st->first_ns = ts;
	if (ts > st->last_ns)
		st->last_ns = ts;
}

void l7_table__set_ident(struct l7_table *t, uint32_t session, const char *container,
			 const char *pod)
{
	struct l7_session *s;

	if (session >= t->nsessions)
		return;
	s = &t->sessions[session];
	copy_clean(s->container, sizeof(s->container), container ? container : "");
	copy_clean(s->pod, sizeof(s->pod), pod ? pod : "");
	s->ident_done = true;
	t->gen++;
}

void l7_table__io(struct l7_table *t, uint32_t session, enum l7_dir dir, uint64_t bytes,
		  uint64_t segs, uint64_t ts_ns)
{
	struct l7_stats *st;

	if (session >= t->nsessions)
		return;
	st = &t->sessions[session].st;
	if (dir == L7_DIR_SEND) {
		st->bytes_sent += bytes;
		st->segs_sent += segs;
	} else {
		st->bytes_recv += bytes;
		st->segs_recv += segs;
	}
	touch(st, ts_ns);
	t->gen++;
}

struct endpoint_q {
	const struct l7_table *t;
	uint8_t proto, role;
	const char *name;
};

static bool endpoint_eq(const void *ctx, uint32_t i)
{
	const struct endpoint_q *q = ctx;
	const struct l7_endpoint *e = &q->t->endpoints[i];

	return e->proto == q->proto && e->l7_role == q->role && !strcmp(e->name, q->name);
}

static uint64_t endpoint_hash(uint8_t proto, uint8_t role, const char *name)
{
	return hash_bytes(name, strlen(name)) ^ hash_pair(proto, role);
}

/* The endpoint row (proto, role, name), made on first use; past L7_MAX_ENDPOINTS new keys go
 * to "(other)". -1 on ENOMEM. */
static long endpoint_get(struct l7_table *t, uint8_t proto, uint8_t role, const char *name)
{
	struct endpoint_q q = {t, proto, role, name};
	uint64_t h = endpoint_hash(proto, role, name);
	size_t slot;
	long found = index_find(&t->eidx, h, endpoint_eq, &q, &slot);
	struct l7_endpoint *e;

	if (found >= 0)
		return found;
	if (t->nendpoints >= L7_MAX_ENDPOINTS && strcmp(name, "(other)"))
		return endpoint_get(t, proto, role, "(other)");
	if (ARRAY_GROW_ZERO(t->endpoints, t->endpoints_cap, t->nendpoints + 1) ||
	    index_insert(&t->eidx, h, (uint32_t)t->nendpoints, t->nendpoints))
		return -1;
	e = &t->endpoints[t->nendpoints];
	memset(e, 0, sizeof(*e));
	e->proto = proto;
	e->l7_role = role;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return (long)t->nendpoints++;
}

struct pair_q {
	const struct l7_table *t;
	uint32_t s, e;
};

static bool pair_eq(const void *ctx, uint32_t i)
{
	const struct pair_q *q = ctx;

	return q->t->pairs[i].session == q->s && q->t->pairs[i].endpoint == q->e;
}

static long pair_get(struct l7_table *t, uint32_t s, uint32_t e)
{
	struct pair_q q = {t, s, e};
	uint64_t h = hash_pair(s, e);
	size_t slot;
	long found = index_find(&t->pidx, h, pair_eq, &q, &slot);
	struct l7_pair *p;

	if (found >= 0)
		return found;
	if (ARRAY_GROW_ZERO(t->pairs, t->pairs_cap, t->npairs + 1) ||
	    index_insert(&t->pidx, h, (uint32_t)t->npairs, t->npairs))
		return -1;
	p = &t->pairs[t->npairs];
	memset(p, 0, sizeof(*p));
	p->session = s;
	p->endpoint = e;
	return (long)t->npairs++;
}

/* Counts one record into st; role says which side's bytes are sent. */
static int count_record(struct l7_stats *st, const struct l7_record *r, uint8_t role, bool bytes)
{
	st->req_count++;
	if (!r->no_response) {
		st->resp_count++;
		if (r->resp_end_ns >= r->req_start_ns &&
		    hist_add(&st->lat, r->resp_end_ns - r->req_start_ns))
			return -ENOMEM;
	}
	if (r->error) {
		const struct l7_proto_info *pi = l7_proto_info(r->proto);
		bool http = pi && pi->http_status;

		st->err_count++;
		if (http && r->status >= 400 && r->status < 500)
			st->err_4xx++;
		else if (http && r->status >= 500)
			st->err_5xx++;
	}
	if (bytes) {
		bool server = role == L7_ROLE_SERVER;

		st->bytes_sent += server ? r->resp_bytes : r->req_bytes;
		st->bytes_recv += server ? r->req_bytes : r->resp_bytes;
	}
	touch(st, r->req_start_ns);
	touch(st, r->no_response ? r->req_end_ns : r->resp_end_ns);
	return 0;
}

static uint64_t latency(const struct l7_record *r)
{
	return r->no_response || r->resp_end_ns < r->req_start_ns
		   ? 0
		   : r->resp_end_ns - r->req_start_ns;
}

/* Keeps r in e's slowest list when it is slower than the fastest there; the entry or NULL. */
static struct l7_slow *keep_slow(struct l7_endpoint *e, uint32_t session, uint32_t tid,
				 const struct l7_record *r)
{
	uint64_t lat = latency(r);
	size_t pos;

	if (r->no_response)
		return NULL;
	/* Most requests are no slower than the fastest of a full list: one compare. */
	if (e->nslow == L7_SLOW_PER_ENDPOINT && lat <= latency(&e->slow[e->nslow - 1].rec))
		return NULL;
	for (pos = 0; pos < e->nslow; pos++)
		if (lat > latency(&e->slow[pos].rec))
			break;
	if (pos == L7_SLOW_PER_ENDPOINT)
		return NULL;
	if (e->nslow == L7_SLOW_PER_ENDPOINT)
		free(e->slow[--e->nslow].stack);
	memmove(&e->slow[pos + 1], &e->slow[pos], (e->nslow - pos) * sizeof(e->slow[0]));
	e->nslow++;
	e->slow[pos].session = session;
	e->slow[pos].tid = tid;
	e->slow[pos].rec = *r;
	e->slow[pos].stack = NULL;
	return &e->slow[pos];
}

int l7_table__record(struct l7_table *t, uint32_t session, const struct l7_record *r, uint32_t tid,
		     struct l7_slow **slow)
{
	struct l7_session *s;
	const char *name;
	long e, p;
	int err;

	if (slow)
		*slow = NULL;
	if (session >= t->nsessions)
		return -EINVAL;
	s = &t->sessions[session];
	name = r->endpoint[0] ? r->endpoint : "(none)";
	if (s->last_endpoint && !strcmp(t->endpoints[s->last_endpoint - 1].name, name)) {
		e = (long)s->last_endpoint - 1;
		p = (long)s->last_pair - 1;
	} else {
		e = endpoint_get(t, s->key.proto, s->key.l7_role, name);
		if (e < 0)
			return -ENOMEM;
		p = pair_get(t, session, (uint32_t)e);
		if (p < 0)
			return -ENOMEM;
		s = &t->sessions[session];
		s->last_endpoint = (uint32_t)e + 1;
		s->last_pair = (uint32_t)p + 1;
	}
	err = count_record(&s->st, r, s->key.l7_role, false);
	err = err ?: count_record(&t->endpoints[e].st, r, s->key.l7_role, true);
	err = err ?: count_record(&t->pairs[p].st, r, s->key.l7_role, true);
	if (err)
		return err;
	{
		struct l7_slow *k = keep_slow(&t->endpoints[e], session, tid, r);

		if (slow)
			*slow = k;
	}
	t->gen++;
	t->records++;
	return 0;
}

int l7_table__counted(struct l7_table *t, uint32_t session, const char *name,
		      const struct l7_stats *d)
{
	struct l7_session *s;
	struct l7_stats rows;
	long e, p;

	if (session >= t->nsessions)
		return -EINVAL;
	s = &t->sessions[session];
	e = endpoint_get(t, s->key.proto, s->key.l7_role, name[0] ? name : "(none)");
	p = e < 0 ? -1 : pair_get(t, session, (uint32_t)e);
	if (p < 0)
		return -ENOMEM;
	/* TCP segments are the sessions' only, as l7_table__io counts them. */
	rows = *d;
	rows.segs_sent = rows.segs_recv = 0;
	if (l7_stats_merge(&t->sessions[session].st, d) ||
	    l7_stats_merge(&t->endpoints[e].st, &rows) || l7_stats_merge(&t->pairs[p].st, &rows))
		return -ENOMEM;
	t->gen++;
	t->records += d->req_count;
	return 0;
}

uint64_t l7_table__slow_floor(const struct l7_table *t, uint8_t proto, uint8_t role,
			      const char *name)
{
	struct endpoint_q q = {t, proto, role, name};
	size_t slot;
	long e = index_find(&t->eidx, endpoint_hash(proto, role, name), endpoint_eq, &q, &slot);

	if (e < 0 || t->endpoints[e].nslow < L7_SLOW_PER_ENDPOINT)
		return 0;
	return latency(&t->endpoints[e].slow[L7_SLOW_PER_ENDPOINT - 1].rec);
}

int l7_slow__set_stack(struct l7_slow *s, const char *text)
{
	size_t len = strlen(text), o = 0;
	char *out = malloc(SANITIZE_MAX(len) + 1);

	if (!out)
		return -ENOMEM;
	/* Each line on its own so the newlines between frames survive. */
	while (*text) {
		size_t n = strcspn(text, "\n");

		o += sanitize_text(text, n, out + o);
		text += n;
		if (*text == '\n') {
			out[o++] = '\n';
			text++;
		}
	}
	out[o] = 0;
	free(s->stack);
	s->stack = out;
	return 0;
}

size_t l7_table__nsessions(const struct l7_table *t)
{
	return t->nsessions;
}

const struct l7_session *l7_table__get_session(const struct l7_table *t, size_t i)
{
	return i < t->nsessions ? &t->sessions[i] : NULL;
}

size_t l7_table__nendpoints(const struct l7_table *t)
{
	return t->nendpoints;
}

const struct l7_endpoint *l7_table__get_endpoint(const struct l7_table *t, size_t i)
{
	return i < t->nendpoints ? &t->endpoints[i] : NULL;
}

size_t l7_table__npairs(const struct l7_table *t)
{
	return t->npairs;
}

const struct l7_pair *l7_table__get_pair(const struct l7_table *t, size_t i)
{
	return i < t->npairs ? &t->pairs[i] : NULL;
}

uint64_t l7_table__gen(const struct l7_table *t)
{
	return t->gen;
}

uint64_t l7_table__records(const struct l7_table *t)
{
	return t->records;
}

void l7_table__add_undecoded(struct l7_table *t, uint64_t n)
{
	t->undecoded += n;
	t->gen++;
}

uint64_t l7_table__undecoded(const struct l7_table *t)
{
	return t->undecoded;
}

int l7_stats_merge(struct l7_stats *dst, const struct l7_stats *src)
{
	if (hist_merge(&dst->lat, &src->lat))
		return -ENOMEM;
	dst->req_count += src->req_count;
	dst->resp_count += src->resp_count;
	dst->err_count += src->err_count;
	dst->err_4xx += src->err_4xx;
	dst->err_5xx += src->err_5xx;
	dst->bytes_sent += src->bytes_sent;
	dst->bytes_recv += src->bytes_recv;
	dst->segs_sent += src->segs_sent;
	dst->segs_recv += src->segs_recv;
	touch(dst, src->first_ns);
	touch(dst, src->last_ns);
	return 0;
}

double l7_stats_span(const struct l7_stats *st)
{
	double s;

	if (!st->first_ns)
		return 0;
	s = (double)(st->last_ns - st->first_ns) / 1e9;
	return s < 1e-3 ? 1e-3 : s;
}

double l7_stats_err_ratio(const struct l7_stats *st)
{
	return st->req_count ? (double)st->err_count / (double)st->req_count : 0;
}

int l7_table__load_session(struct l7_table *t, const struct l7_session *s)
{
	uint32_t idx;
	int err = l7_table__session(t, &s->key, s->comm, s->cgroup_id, &idx);

	if (!err && s->ident_done)
		l7_table__set_ident(t, idx, s->container, s->pod);
	return err ?: l7_stats_merge(&t->sessions[idx].st, &s->st);
}

int l7_table__load_endpoint(struct l7_table *t, const struct l7_endpoint *src)
{
	long e = endpoint_get(t, src->proto, src->l7_role, src->name);
	struct l7_endpoint *d;

	if (e < 0 || l7_stats_merge(&t->endpoints[e].st, &src->st))
		return -ENOMEM;
	d = &t->endpoints[e];
	for (size_t i = 0; i < src->nslow; i++) {
		struct l7_slow *k =
		    keep_slow(d, src->slow[i].session, src->slow[i].tid, &src->slow[i].rec);

		if (k && src->slow[i].stack && l7_slow__set_stack(k, src->slow[i].stack))
			return -ENOMEM;
	}
	t->gen++;
	return 0;
}

int l7_table__load_pair(struct l7_table *t, uint32_t session, uint32_t endpoint,
			const struct l7_stats *st)
{
	long p;

	if (session >= t->nsessions || endpoint >= t->nendpoints)
		return -EINVAL;
	p = pair_get(t, session, endpoint);
	if (p < 0 || l7_stats_merge(&t->pairs[p].st, st))
		return -ENOMEM;
	t->gen++;
	return 0;
}

int l7_table__merge(struct l7_table *dst, const struct l7_table *src)
{
	uint32_t *smap = calloc(src->nsessions + 1, sizeof(*smap));
	uint32_t *emap = calloc(src->nendpoints + 1, sizeof(*emap));
	int err = 0;

	if (!smap || !emap) {
		err = -ENOMEM;
		goto out;
	}
	dst->undecoded += src->undecoded;
	for (size_t i = 0; i < src->nsessions && !err; i++) {
		const struct l7_session *s = &src->sessions[i];

		err = l7_table__load_session(dst, s);
		if (!err)
			l7_table__session(dst, &s->key, s->comm, s->cgroup_id, &smap[i]);
	}
	for (size_t i = 0; i < src->nendpoints && !err; i++) {
		struct l7_endpoint e = src->endpoints[i];

		/* Slow entries name sessions of src: renumber them for dst. */
		for (size_t k = 0; k < e.nslow; k++)
			e.slow[k].session = smap[e.slow[k].session];
		err = l7_table__load_endpoint(dst, &e);
		if (!err) {
			struct endpoint_q q = {dst, e.proto, e.l7_role, e.name};
			size_t slot;
			long found =
			    index_find(&dst->eidx, endpoint_hash(e.proto, e.l7_role, e.name),
				       endpoint_eq, &q, &slot);

			emap[i] = found < 0 ? 0 : (uint32_t)found;
		}
	}
	for (size_t i = 0; i < src->npairs && !err; i++)
		err = l7_table__load_pair(dst, smap[src->pairs[i].session],
					  emap[src->pairs[i].endpoint], &src->pairs[i].st);
	dst->records += src->records;
out:
	free(smap);
	free(emap);
	return err;
}

const char *l7_l4_str(enum l7_l4 l4)
{
	static const char *const names[L7_L4_MAX] = {"tcp", "udp", "unix", "unix_dgram"};

	return l4 < L7_L4_MAX ? names[l4] : "tcp";
}

const char *l7_role_str(enum l7_role r)
{
	return r == L7_ROLE_CLIENT ? "client" : r == L7_ROLE_SERVER ? "server" : "unknown";
}

void l7_addr_str(const uint8_t a[16], bool v6, char *buf, size_t cap)
{
	char tmp[INET6_ADDRSTRLEN];

	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, a, tmp, sizeof(tmp)))
		snprintf(tmp, sizeof(tmp), "?");
	snprintf(buf, cap, "%s", tmp);
}
