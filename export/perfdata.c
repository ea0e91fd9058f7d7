/* perf.data reader: see perfdata.h and docs/perfdata.md.
 *
 * The file is untrusted bytes: every field is read with memcpy after a bounds check, and a
 * record that overruns itself is counted bad, never read past. Records are replayed in time
 * order, as perf script's ordered events do, so each sample is named against the mappings and
 * comm its process had when it was taken. */
#include "perfdata.h"
#include "perfdata_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../symbols/hmap.h"
#include "../symbols/symbols.h"
#include "../symbols/unwind.h"
#include "../util/grow.h"
#include "../model/hash.h"

static int fail(struct pd *pd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct pd *pd, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(pd->err, pd->errlen, "%s: ", pd->label);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < pd->errlen)
		vsnprintf(pd->err + n, pd->errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool perfdata_sniff(const void *buf, size_t len)
{
	return len >= 8 && !memcmp(buf, PD_MAGIC, 8);
}

/* ---- attributes and event names ---- */

/* Reads a perf_event_attr of at most max bytes at p; its own size field says how much. */
static int attr_add(struct pd *pd, const unsigned char *p, size_t max, size_t *used)
{
	struct pd_attr *a;
	uint32_t size;

	if (max < 64)
		return -EINVAL;
	size = rd32(p + 4);
	if (size < 64 || size > max)
		size = max < 128 ? (uint32_t)max : 128; /* PERF_ATTR_SIZE_VER0 files: the room */
	if (ARRAY_GROW(pd->attrs, pd->attrs_cap, pd->nattrs + 1))
		return -ENOMEM;
	a = &pd->attrs[pd->nattrs++];
	memset(a, 0, sizeof(*a));
	a->sample_type = rd64(p + 24);
	a->read_format = rd64(p + 32);
	a->sample_id_all = rd64(p + 40) >> 18 & 1;
	a->branch_type = size >= 80 ? rd64(p + 72) : 0;
	a->regs_mask = size >= 96 ? rd64(p + 80) : 0;
	snprintf(a->name, sizeof(a->name), "event%zu", pd->nattrs - 1);
	*used = size;
	return 0;
}

static int id_add(struct pd *pd, uint64_t id, size_t attr)
{
	if (ARRAY_GROW(pd->ids, pd->ids_cap, pd->nids + 1))
		return -ENOMEM;
	pd->ids[pd->nids].id = id;
	pd->ids[pd->nids++].attr = attr;
	pd->ids_sorted = false;
	memset(pd->id_cache, 0, sizeof(pd->id_cache));
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The attribute of sample id (the first one when ids are not known). */
static struct pd_attr *attr_of(struct pd *pd, uint64_t id)
{
	size_t lo = 0, hi = pd->nids;

	if (pd->nattrs == 1 || !pd->nids)
		return pd->nattrs ? &pd->attrs[0] : NULL;
	if (pd->id_cache[id % 4].attr && pd->id_cache[id % 4].id == id)
		return &pd->attrs[pd->id_cache[id % 4].attr - 1];
	if (!pd->ids_sorted) {
		qsort(pd->ids, pd->nids, sizeof(*pd->ids), id_cmp);
		pd->ids_sorted = true;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->ids[mid].id == id) {
			pd->id_cache[id % 4].id = id;
			pd->id_cache[id % 4].attr = pd->ids[mid].attr + 1;
			return &pd->attrs[pd->ids[mid].attr];
		}
		if (pd->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A name from the file: printable bytes but spaces, at most the room. */
void pd_set_name(char *dst, size_t room, const unsigned char *s, size_t max)
{
	size_t i;

	for (i = 0; i + 1 < room && i < max && s[i]; i++)
		dst[i] = s[i] <= ' ' || s[i] == 0x7f ? '_' : (char)s[i];
	dst[i] = '\0';
}

/* HEADER_EVENT_DESC: names in the order of the attributes. */
static void read_event_desc(struct pd *pd, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	uint32_t nr, asz;

	if (len < 8)
		return;
	nr = rd32(p);
	asz = rd32(p + 4);
	p += 8;
	for (uint32_t i = 0; i < nr && i < pd->nattrs; i++) {
		uint32_t nids, slen;

		if ((size_t)(end - p) < (size_t)asz + 8)
			return;
		p += asz;
		nids = rd32(p);
		slen = rd32(p + 4);
		p += 8;
		if ((size_t)(end - p) < slen)
			return;
		pd_set_name(pd->attrs[i].name, sizeof(pd->attrs[i].name), p, slen);
		p += slen;
		if ((size_t)(end - p) / 8 < nids)
			return;
		p += (size_t)nids * 8;
	}
}

/* One build-id record (feature section or pipe-mode record) of size len at p. */
static int bid_add(struct pd *pd, const unsigned char *p, size_t len)
{
	struct pd_bid *b;
	uint16_t misc = rd16(p + 4);
	size_t n;

	if (len < 36)
		return 0;
	if (ARRAY_GROW(pd->bids, pd->bids_cap, pd->nbids + 1))
		return -ENOMEM;
	b = &pd->bids[pd->nbids];
	b->pid = (int)rd32(p + 8);
	b->user = (misc & MISC_CPUMODE_MASK) == MISC_USER;
	memcpy(b->id, p + 12, 20);
	b->len = misc & MISC_BUILD_ID_SIZE ? p[32] : 20;
	if (b->len > 20)
		b->len = 20;
	n = strnlen((const char *)p + 36, len - 36);
	b->path = strndup((const char *)p + 36, n);
	if (!b->path)
		return -ENOMEM;
	pd->nbids++;
	return 0;
}

static int read_build_ids(struct pd *pd, const unsigned char *p, size_t len)
{
	while (len >= 8) {
		size_t size = rd16(p + 6);
		int err;

		if (size < 8 || size > len)
			return 0;
		err = bid_add(pd, p, size);
		if (err)
			return err;
		p += size;
		len -= size;
	}
	return 0;
}

static int read_features(struct pd *pd, const unsigned char *bits, uint64_t at)
{
	for (unsigned f = 0; f < FEAT_BITS; f++) {
		uint64_t off, size;
		int err = 0;

		if (!(bits[f / 8] >> (f % 8) & 1))
			continue;
		if (at > pd->len || pd->len - at < 16)
			return 0; /* a file cut in its features: the samples are whole */
		off = rd64(pd->buf + at);
		size = rd64(pd->buf + at + 8);
		at += 16;
		if (off > pd->len || size > pd->len - off)
			continue;
		if (f == FEAT_EVENT_DESC)
			read_event_desc(pd, pd->buf + off, size);
		else if (f == FEAT_BUILD_ID)
			err = read_build_ids(pd, pd->buf + off, size);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the time of each record ---- */

/* Bytes of the sample_id trailer of non-sample records. */
static size_t trailer_size(uint64_t t)
{
	return 8 * (!!(t & S_TID) + !!(t & S_TIME) + !!(t & S_ID) + !!(t & S_STREAM_ID) +
		    !!(t & S_CPU) + !!(t & S_IDENTIFIER));
}

/* The time of record r (size bytes), or prev when it carries none. */
static uint64_t rec_time(const struct pd *pd, const unsigned char *r, size_t size, uint64_t prev)
{
	uint32_t type = rd32(r);
	const struct pd_attr *a = pd->nattrs ? &pd->attrs[0] : NULL;
	uint64_t t;
	size_t at;

	if (!a || !(a->sample_type & S_TIME))
		return prev;
	t = a->sample_type;
	if (type == REC_SAMPLE) {
		at = 8 + 8 * (!!(t & S_IDENTIFIER) + !!(t & S_IP)) + 4 * 2 * !!(t & S_TID);
		return at + 8 <= size ? rd64(r + at) : prev;
	}
	if (type >= REC_HEADER_ATTR || !a->sample_id_all)
		return prev;
	/* pid/tid, then time, from the trailer's start */
	at = trailer_size(t);
	if (size < 8 + at)
		return prev;
	at = size - at + 8 * !!(t & S_TID);
	return rd64(r + at);
}

static inline bool rec_before(const struct pd_rec *x, const struct pd_rec *y)
{
	return x->time < y->time || (x->time == y->time && x->off < y->off);
}

/* Sorts v[0..n) by time, then offset in the file. perf writes records in rounds of a few runs
 * already in time order (a CPU's buffer each): the runs found are merged pairwise, in a
 * fraction of what sorting from scratch costs. -ENOMEM or 0. */
static int recs_sort(struct pd_rec *v, size_t n)
{
	struct pd_rec *tmp, *from = v, *to;
	size_t *runs, nruns = 0;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	runs = malloc((n + 1) * sizeof(*runs));
	if (!tmp || !runs) {
		free(tmp);
		free(runs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (!i || rec_before(&v[i], &v[i - 1]))
			runs[nruns++] = i;
	runs[nruns] = n;
	to = tmp;
	while (nruns > 1) {
		size_t k, out = 0;

		for (k = 0; k + 1 < nruns; k += 2) {
			size_t a = runs[k], ae = runs[k + 1], b = ae, be = runs[k + 2], o = a;

			while (a < ae && b < be)
				to[o++] = rec_before(&from[b], &from[a]) ? from[b++] : from[a++];
			memcpy(to + o, from + a, (ae - a) * sizeof(*to));
			o += ae - a;
			memcpy(to + o, from + b, (be - b) * sizeof(*to));
			runs[out++] = runs[k];
		}
		if (k < nruns) { /* an odd run out: copied as it is */
			memcpy(to + runs[k], from + runs[k], (runs[k + 1] - runs[k]) * sizeof(*to));
			runs[out++] = runs[k];
		}
		runs[out] = n;
		nruns = out;
		to = from;
		from = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	free(runs);
	return 0;
}

/* ---- processes, threads, mappings ---- */

/* ---- naming ---- */

int pd_flush_text(struct pd *pd)
{
	int err = pd->tlen ? perfscript__feed(pd->ps, pd->text, pd->tlen) : 0;

	pd->tlen = 0;
	return err;
}

int pd_arena_put(struct pd *pd, const void *s, size_t n, size_t *at)
{
	if (n > SIZE_MAX / 2 - pd->alen || BIG_ARRAY_GROW(pd->arena, pd->acap, pd->alen + n))
		return -ENOMEM;
	memcpy(pd->arena + pd->alen, s, n);
	*at = pd->alen;
	pd->alen += n;
	return 0;
}

/* The parser's callback: keeps the stack for the seen-samples table, then passes it on. */
static int pass_stack(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct pd *pd = ctx;

	if (pd_arena_put(pd, stack, len, &pd->passed_at))
		return -ENOMEM;
	pd->passed = true;
	pd->passed_len = len;
	return pd->fn(pd->ctx, stack, len, count);
}

static int key_put(struct pd *pd, const void *s, size_t n)
{
	if (ARRAY_GROW(pd->key, pd->kcap, pd->klen + n))
		return -ENOMEM;
	memcpy(pd->key + pd->klen, s, n);
	pd->klen += n;
	return 0;
}

int pd_table_room(void *tab, size_t *cap, size_t n, size_t esize, size_t first)
{
	unsigned char *old, *new;
	size_t ncap = *cap ? *cap * 2 : first;

	if (n * 2 < *cap)
		return 0;
	/* a large table is a mapping of its own, zero already (in huge pages: a read before
	 * the first write costs little); a smaller one is written whole now, as calloc's fresh
	 * pages would each fault twice, on the first read (the zero page) and the first write */
	new = NULL;
	if (ncap > SIZE_MAX / esize || big_array_resize(&new, 0, ncap * esize))
		return -ENOMEM;
	if (ncap * esize < BIG_ARRAY_MIN)
		memset(new, 0, ncap * esize);
	memcpy(&old, tab, sizeof(old));
	for (size_t j = 0; j < *cap; j++) {
		uint64_t h;
		size_t i;

		memcpy(&h, old + j * esize, sizeof(h));
		if (!h)
			continue;
		for (i = h & (ncap - 1);; i = (i + 1) & (ncap - 1)) {
			uint64_t used;

			memcpy(&used, new + i * esize, sizeof(used));
			if (!used)
				break;
		}
		memcpy(new + i * esize, old + j * esize, esize);
	}
	big_array_free(old, *cap * esize);
	memcpy(tab, &new, sizeof(new));
	*cap = ncap;
	return 0;
}

/* The slot of the key being built and of call chain s->chain: a seen sample's, or a free one.
 * NULL on ENOMEM. */
static struct pd_seen *seen_slot(struct pd *pd, const struct pd_sample *s, uint64_t h)
{
	size_t mask, i;

	if (pd_table_room(&pd->seen, &pd->seen_cap, pd->nseen, sizeof(*pd->seen), 1024))
		return NULL;
	mask = pd->seen_cap - 1;
	for (i = h & mask; pd->seen[i].hash; i = (i + 1) & mask) {
		const struct pd_seen *e = &pd->seen[i];

		if (e->hash == h && e->key_len == pd->klen && e->nchain == s->nchain &&
		    !memcmp(pd->arena + e->key, pd->key, pd->klen) &&
		    (!s->nchain || !memcmp(e->chain, s->chain, s->nchain * 8)))
			break;
	}
	return &pd->seen[i];
}

/* Parses a sample of attr a; false when its fields overrun it. */
static bool parse_sample(const struct pd_attr *a, const unsigned char *p, const unsigned char *end,
			 struct pd_sample *s)
{
	uint64_t t = a->sample_type, n;

#define NEED(k) do { if ((size_t)(end - p) < (size_t)(k)) return false; } while (0)
	memset(s, 0, sizeof(*s));
	s->period = 0;
	if (t & S_IDENTIFIER) { NEED(8); p += 8; }
	if (t & S_IP) { NEED(8); s->ip = rd64(p); p += 8; }
	if (t & S_TID) { NEED(8); s->pid = (int)rd32(p); s->tid = (int)rd32(p + 4); p += 8; }
	if (t & S_TIME) { NEED(8); s->time = rd64(p); p += 8; }
	if (t & S_ADDR) { NEED(8); p += 8; }
	if (t & S_ID) { NEED(8); p += 8; }
	if (t & S_STREAM_ID) { NEED(8); p += 8; }
	if (t & S_CPU) { NEED(8); s->cpu = rd32(p); p += 8; }
	if (t & S_PERIOD) { NEED(8); s->period = rd64(p); p += 8; }
	if (t & S_READ) {
		uint64_t rf = a->read_format, each = 8 * (1 + !!(rf & R_ID) + !!(rf & R_LOST));
		uint64_t times = 8 * (!!(rf & R_TOTAL_TIME_ENABLED) + !!(rf & R_TOTAL_TIME_RUNNING));

		if (rf & R_GROUP) {
			NEED(8);
			n = rd64(p);
			p += 8;
			if (n > (1u << 16))
				return false;
			NEED(times + n * each);
			p += times + n * each;
		} else {
			NEED(times + each);
			p += times + each;
		}
	}
	if (t & S_CALLCHAIN) {
		NEED(8);
		n = rd64(p);
		p += 8;
		if (n > (size_t)(end - p) / 8)
			return false;
		s->chain = p;
		s->nchain = n;
		p += n * 8;
	}
	if (t & S_RAW) {
		NEED(4);
		n = rd32(p);
		p += 4;
		NEED(n);
		p += n;
	}
	if (t & S_BRANCH_STACK) {
		NEED(8);
		n = rd64(p);
		p += 8;
		if (a->branch_type & BRANCH_HW_INDEX) {
			NEED(8);
			p += 8;
		}
		if (n > (size_t)(end - p) / 24)
			return false;
		p += n * 24;
	}
	if (t & S_REGS_USER) {
		NEED(8);
		s->regs_abi = rd64(p);
		p += 8;
		if (s->regs_abi) {
			n = (uint64_t)__builtin_popcountll(a->regs_mask);
			NEED(n * 8);
			s->regs = p;
			p += n * 8;
		}
	}
	if (t & S_STACK_USER) {
		NEED(8);
		n = rd64(p);
		p += 8;
		if (n) {
			if (n > (size_t)(end - p) || (size_t)(end - p) - n < 8)
				return false;
			s->stack = p;
			s->stack_size = n;
			s->stack_dyn = rd64(p + n);
			if (s->stack_dyn > n)
				s->stack_dyn = n;
		}
	}
#undef NEED
	return true;
}

/* Whether the stack the parser made for a sample of comm starts with the comm (spaces as
 * '_') as its own frame: else the header regex took more of the line (a comm such as "g"
 * or ":-1" that it cannot split), the time too, and no other sample can share that stack. */
static bool pname_is_comm(const char *stack, size_t len, const char *comm)
{
	size_t n = strlen(comm);

	if (len < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (stack[i] != (comm[i] == ' ' ? '_' : comm[i]))
			return false;
	return len == n || stack[n] == ';' || stack[n] == '-';
}

/* Builds the key of a sample in pd->key: what its collapsed stack depends on (with the user
 * frames unwound from its stack copy, upcs[0..nu)) but its call chain, which stays in the
 * file (seen_slot compares it there). */
static int seen_key(struct pd *pd, const struct pd_attr *a, const struct pd_sample *s,
		    uint16_t misc, const uint64_t *upcs, size_t nu)
{
	struct pd_proc *p = s->pid >= 0 ? pd_proc_get(pd, s->pid) : NULL;
	const char *comm = s->comm;
	uint64_t head[3] = {
		(uint64_t)pd->kgen << 32 | (uint64_t)(a - pd->attrs) << 8 |
			(misc & MISC_CPUMODE_MASK),
		(uint64_t)(uint32_t)s->pid << 32 | (p ? p->gen : 0),
		pd->o->include_tid ? (uint64_t)(uint32_t)s->tid : 0,
	};

	if (s->pid >= 0 && !p)
		return -ENOMEM;
	pd->klen = 0;
	if (key_put(pd, head, sizeof(head)) || key_put(pd, comm, strlen(comm) + 1))
		return -ENOMEM;
	if (nu && key_put(pd, upcs, nu * sizeof(*upcs)))
		return -ENOMEM;
	if (!s->chain && key_put(pd, &s->ip, sizeof(s->ip)))
		return -ENOMEM;
	return pd->klen > UINT32_MAX ? -ENOMEM : 0;
}

/* The attribute of sample record r (size bytes) and its fields in *s; NULL when it has no
 * known attribute or its fields overrun it. */
static const struct pd_attr *sample_parse(struct pd *pd, const unsigned char *r, size_t size,
					  struct pd_sample *s)
{
	const struct pd_attr *a;
	uint64_t id = 0;

	if (pd->nattrs > 1) {
		uint64_t t = pd->attrs[0].sample_type;
		size_t at = t & S_IDENTIFIER ? 8
			    : 8 + 8 * (!!(t & S_IP) + !!(t & S_TID) + !!(t & S_TIME) +
				       !!(t & S_ADDR));

		if (!(t & (S_IDENTIFIER | S_ID)) || at + 8 > size)
			return NULL;
		id = rd64(r + at);
	}
	a = attr_of(pd, id);
	return a && parse_sample(a, r + 8, r + size, s) ? a : NULL;
}

/* Adds kernel address addr to the set named ahead of the replay. 0 or -ENOMEM. */
static int kaddr_add(struct pd *pd, uint64_t addr)
{
	uint64_t h = hash_mix(addr) | 1;
	size_t mask, i;

	if (pd_table_room(&pd->kset, &pd->kset_cap, pd->nkset, sizeof(*pd->kset), 1024))
		return -ENOMEM;
	mask = pd->kset_cap - 1;
	for (i = h & mask; pd->kset[i].hash; i = (i + 1) & mask)
		if (pd->kset[i].addr == addr)
			return 0;
	pd->kset[i].hash = h;
	pd->kset[i].addr = addr;
	pd->nkset++;
	return 0;
}

/* Adds the kernel addresses of sample record r to the set named ahead. 0 or -ENOMEM. */
static int sample_kaddrs(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc)
{
	bool kernel = (misc & MISC_CPUMODE_MASK) == MISC_KERNEL;
	struct pd_sample s;
	const struct pd_attr *a = sample_parse(pd, r, size, &s);
	int err = 0;

	if (!a)
		return 0;
	if (!s.chain)
		return kernel && (a->sample_type & S_IP) ? kaddr_add(pd, s.ip) : 0;
	for (uint64_t i = 0; !err && i < s.nchain; i++) {
		uint64_t ip = rd64(s.chain + 8 * i);

		if (ip >= CONTEXT_MAX)
			kernel = ip == CONTEXT_KERNEL || ip == CONTEXT_HV;
		else if (kernel)
			err = kaddr_add(pd, ip);
	}
	return err;
}

static int on_sample(struct pd *pd, const unsigned char *r, size_t size, uint16_t misc)
{
	struct pd_sample s;
	const struct pd_attr *a = sample_parse(pd, r, size, &s);
	struct pd_seen *seen;
	uint64_t h;
	bool kernel = (misc & MISC_CPUMODE_MASK) == MISC_KERNEL;
	size_t nu = 0;
	int err;

	if (!a)
		return 1;
	if (!(a->sample_type & S_TID))
		s.pid = s.tid = -1;
	s.comm = pd_comm_of(pd, s.tid);
	pd->st.samples++;
	if ((a->sample_type & S_STACK_USER) && s.pid > 0) {
		/* the stack copy differs at every sample, the frames unwound from it do not */
		if (!pd->upcs && !(pd->upcs = malloc(MAX_FRAMES * sizeof(*pd->upcs))))
			return -ENOMEM;
		nu = pd_unwind_user(pd, a, &s, pd->upcs, MAX_FRAMES);
	}
	err = seen_key(pd, a, &s, misc, pd->upcs, nu);
	if (err)
		return err;
	h = hash_bytes(pd->key, pd->klen);
	if (s.nchain)
		h = hash_mix(h ^ hash_bytes(s.chain, s.nchain * 8));
	h |= 1;
	seen = seen_slot(pd, &s, h);
	if (!seen)
		return -ENOMEM;
	if (seen->hash && seen->filtered)
		return 0;
	if (seen->hash)
		return pd->fn(pd->ctx, pd->arena + seen->stack, seen->stack_len,
			      pd->o->count_samples || !s.period ? 1 : s.period);
	/* the header first: frames are pushed into the sample it starts (pd_frame) */
	pd->passed = false;
	err = pd_put_header(pd, a, &s);
	if (!err)
		err = pd_flush_text(pd);
	if (!err && s.chain) {
		for (uint64_t i = 0; !err && i < s.nchain; i++) {
			uint64_t ip = rd64(s.chain + 8 * i);

			if (ip >= CONTEXT_MAX) {
				kernel = ip == CONTEXT_KERNEL || ip == CONTEXT_HV;
				continue;
			}
			err = pd_frame(pd, s.pid, ip, kernel);
		}
	} else if (!err && (a->sample_type & S_IP)) {
		err = pd_frame(pd, s.pid, s.ip, kernel);
	}
	for (size_t i = 0; !err && i < nu; i++)
		err = pd_frame(pd, s.pid, pd->upcs[i], false);
	if (!err && pd_text_reserve(pd, 1) == 0)
		pd->text[pd->tlen++] = '\n';
	else if (!err)
		err = -ENOMEM;
	if (!err) {
		err = pd_flush_text(pd);
		if (!err)
			err = pd_arena_put(pd, pd->key, pd->klen, &seen->key);
		if (!err && (!pd->passed || pname_is_comm(pd->arena + pd->passed_at,
							  pd->passed_len, s.comm))) {
			seen->hash = h;
			seen->key_len = (uint32_t)pd->klen;
			seen->chain = s.chain;
			seen->nchain = s.nchain;
			seen->filtered = !pd->passed;
			seen->stack = pd->passed_at;
			seen->stack_len = pd->passed_len;
			pd->nseen++;
		}
	}
	return err;
}

/* ---- the data section ---- */

/* Bytes that follow record r outside its size (AUXTRACE data, pipe-mode tracing data). */
static uint64_t rec_extra(const unsigned char *r, size_t size)
{
	uint32_t type = rd32(r);

	if (type == REC_AUXTRACE && size >= 16)
		return rd64(r + 8);
	if (type == REC_TRACING_DATA && size >= 12)
		return rd32(r + 8);
	return 0;
}

/* Pipe-mode metadata records: attributes, event names, build-ids. */
static int on_meta(struct pd *pd, const unsigned char *r, size_t size)
{
	uint32_t type = rd32(r);
	size_t used;
	int err;

	if (type == REC_HEADER_ATTR) {
		err = attr_add(pd, r + 8, size - 8, &used);
		if (err)
			return err == -EINVAL ? 1 : err;
		for (size_t at = 8 + used; at + 8 <= size; at += 8)
			if (id_add(pd, rd64(r + at), pd->nattrs - 1))
				return -ENOMEM;
		return 0;
	}
	if (type == REC_EVENT_UPDATE && size > 24 && rd64(r + 8) == 2 /* NAME */) {
		struct pd_attr *a = attr_of(pd, rd64(r + 16));

		if (a)
			pd_set_name(a->name, sizeof(a->name), r + 24, size - 24);
		return 0;
	}
	if (type == REC_BUILD_ID)
		return bid_add(pd, r, size);
	if (type == REC_HEADER_FEATURE && size >= 16) {
		if (rd64(r + 8) == FEAT_EVENT_DESC)
			read_event_desc(pd, r + 16, size - 16);
		return 0;
	}
	return 0;
}

/* Walks the records of [at, end): metadata read now, the rest listed with its time. */
static int list_records(struct pd *pd, size_t at, size_t end)
{
	uint64_t prev = 0;
	int err;

	while (at < end) {
		const unsigned char *r = pd->buf + at;
		size_t size;
		uint64_t extra;
		uint32_t type;

		if (end - at < 8)
			return fail(pd, "truncated perf.data: %zu bytes left at offset %zu, less than "
				    "a record header", end - at, at);
		size = rd16(r + 6);
		type = rd32(r);
		if (size < 8)
			return fail(pd, "corrupt perf.data: record of %zu bytes at offset %zu", size,
				    at);
		if (size > end - at)
			return fail(pd, "truncated perf.data: the record at offset %zu needs %zu "
				    "bytes, %zu are left", at, size, end - at);
		extra = rec_extra(r, size);
		if (extra > end - at - size)
			return fail(pd, "truncated perf.data: the record at offset %zu carries "
				    "%" PRIu64 " more bytes than the file has", at, extra);
		if (type == REC_COMPRESSED)
			return fail(pd, "compressed records (perf record -z): record without -z, "
				    "or decompress with perf inject");
		pd->st.records++;
		if (type >= REC_HEADER_ATTR) {
			err = on_meta(pd, r, size);
			if (err < 0)
				return err;
			pd->st.bad += err > 0;
		} else {
			if (BIG_ARRAY_GROW(pd->recs, pd->recs_cap, pd->nrecs + 1))
				return -ENOMEM;
			prev = rec_time(pd, r, size, prev);
			pd->recs[pd->nrecs].time = prev;
			pd->recs[pd->nrecs++].off = at;
			if (type == REC_SAMPLE && pd->own_sc &&
			    sample_kaddrs(pd, r, size, rd16(r + 4)))
				return -ENOMEM;
		}
		at += size + extra;
	}
	return 0;
}

/* Starts reading the symbol tables of the user files perf found samples in (its build-id list)
 * on a thread of their own while the records are listed, the kernel's frames named and the
 * replay begins: on a busy machine's capture they are a fifth of the work (libLLVM's alone
 * 2.4 ms). Without the list (pipe mode, perf record -B) or the thread, the replay reads them as
 * it meets them. */
static void preload_files(struct pd *pd)
{
	struct sym_preload *v = pd->nbids ? calloc(pd->nbids, sizeof(*v)) : NULL;
	size_t n = 0;

	if (!v)
		return;
	for (size_t i = 0; i < pd->nbids; i++)
		if (pd->bids[i].user && pd->bids[i].path[0] == '/')
			v[n++] = (struct sym_preload){ pd->bids[i].path, pd->bids[i].id,
						       pd->bids[i].len };
	if (n)
		sym_cache__preload(pd->sc, v, n);
	free(v);
}

/* Names the kernel frames of the samples ahead of the replay, by one pass over perf's copy of
 * kallsyms, or starts reading the running kernel's on a thread; kallsyms is not read at all
 * when no sample has a kernel frame. 0 or -ENOMEM; any other failure leaves the naming to
 * lookups. */
static int kernel_names(struct pd *pd)
{
	uint64_t *addrs;
	size_t n = 0;
	int err;

	if (!pd->nkset)
		return 0;
	if (!pd->kprefetch) {
		err = sym_cache__kernel_preload(pd->sc);
		return err == -ENOMEM ? err : 0;
	}
	addrs = malloc(pd->nkset * sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	for (size_t i = 0; i < pd->kset_cap; i++)
		if (pd->kset[i].hash)
			addrs[n++] = pd->kset[i].addr;
	err = sym_cache__kernel_prefetch(pd->sc, addrs, n);
	free(addrs);
	return err == -ENOMEM ? err : 0;
}

static int replay(struct pd *pd)
{
	uint64_t good = 0;
	int err = 0;

	if (recs_sort(pd->recs, pd->nrecs))
		return -ENOMEM;
	for (size_t i = 0; i < pd->nrecs && !err; i++) {
		const unsigned char *r = pd->buf + pd->recs[i].off;
		size_t size = rd16(r + 6);
		uint16_t misc = rd16(r + 4);

		switch (rd32(r)) {
		case REC_SAMPLE: err = on_sample(pd, r, size, misc); break;
		case REC_COMM: err = pd_on_comm(pd, r, size, misc); break;
		case REC_FORK: err = pd_on_fork(pd, r, size); break;
		case REC_MMAP: err = pd_on_mmap(pd, r, size, misc, false); break;
		case REC_MMAP2: err = pd_on_mmap(pd, r, size, misc, true); break;
		case REC_LOST:
			if (size >= 24)
				pd->st.lost += rd64(r + 16);
			break;
		case REC_KSYMBOL: err = pd_on_ksymbol(pd, r, size); break;
		case REC_EXIT: break;
		default: pd->st.unknown++; break;
		}
		if (err > 0) {
			pd->st.bad++;
			err = 0;
		} else if (!err) {
			good++;
		}
	}
	if (!err)
		err = pd_flush_text(pd);
	if (!err && pd->st.bad > good)
		return fail(pd, "corrupt perf.data: %" PRIu64 " of %" PRIu64 " records overrun "
			    "themselves", pd->st.bad, pd->st.bad + good);
	return err;
}

static int read_file_header(struct pd *pd, size_t *data_at, size_t *data_end)
{
	const unsigned char *b = pd->buf;
	uint64_t attr_size, attrs_off, attrs_size, data_off, data_size;

	if (pd->len < FILE_HEADER_SIZE)
		return fail(pd, "truncated perf.data: %zu bytes, less than its header", pd->len);
	attr_size = rd64(b + 16);
	attrs_off = rd64(b + 24);
	attrs_size = rd64(b + 32);
	data_off = rd64(b + 40);
	data_size = rd64(b + 48);
	if (attr_size >= 64 + 16 && attr_size <= 4096 && !(attrs_size % attr_size) &&
	    attrs_off <= UINT64_MAX - attrs_size && attrs_off + attrs_size > pd->len)
		return fail(pd, "truncated perf.data: its event attributes end at %" PRIu64 " but "
			    "the file has %zu bytes", attrs_off + attrs_size, pd->len);
	if (attr_size < 64 + 16 || attr_size > 4096 || attrs_off > pd->len ||
	    attrs_size > pd->len - attrs_off || attrs_size % attr_size)
		return fail(pd, "corrupt perf.data: bad attribute section (%" PRIu64 " bytes at "
			    "%" PRIu64 ", %" PRIu64 " each)", attrs_size, attrs_off, attr_size);
	if (data_off > pd->len || data_size > pd->len - data_off)
		return fail(pd, "truncated perf.data: its data section ends at %" PRIu64 " but the "
			    "file has %zu bytes", data_off + data_size, pd->len);
	if (!data_size)
		return fail(pd, "perf.data without data: perf record did not finish (its data "
			    "size is 0)");
	for (uint64_t at = attrs_off; at < attrs_off + attrs_size; at += attr_size) {
		const unsigned char *a = b + at;
		uint64_t ids_off = rd64(a + attr_size - 16), ids_size = rd64(a + attr_size - 8);
		size_t used;
		int err = attr_add(pd, a, attr_size - 16, &used);

		if (err)
			return err == -EINVAL ? fail(pd, "corrupt perf.data: bad attribute") : err;
		if (ids_off > pd->len || ids_size > pd->len - ids_off)
			return fail(pd, "corrupt perf.data: the ids of event %zu are outside the file",
				    pd->nattrs - 1);
		for (uint64_t i = 0; i + 8 <= ids_size; i += 8)
			if (id_add(pd, rd64(b + ids_off + i), pd->nattrs - 1))
				return -ENOMEM;
	}
	if (!pd->nattrs)
		return fail(pd, "corrupt perf.data: no events");
	*data_at = data_off;
	*data_end = data_off + data_size;
	return read_features(pd, b + 72, data_off + data_size);
}

static void free_comm(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

int perfdata_collapse(const void *buf, size_t len, const char *label, struct sym_cache *sc,
		      const struct perfscript_opts *o, perfscript_stack_fn fn, void *ctx,
		      struct perfdata_stats *st, char *err, size_t errlen)
{
	struct pd pd = { .buf = buf, .len = len, .label = label, .err = err, .errlen = errlen,
			 .sc = sc, .o = o, .fn = fn, .ctx = ctx };
	size_t at = 0, end = 0;
	int ret;

	err[0] = '\0';
	if (!perfdata_sniff(buf, len))
		return fail(&pd, "not a perf.data file");
	if (len < 16)
		return fail(&pd, "truncated perf.data: %zu bytes", len);
	pd.pipe = rd64(pd.buf + 8) == PIPE_HEADER_SIZE;
	pd.comms = hmap__new();
	pd.procs = hmap__new();
	pd.files = hmap__new();
	pd.unknowns = hmap__new();
	pd.ps = perfscript__new(o, pass_stack, &pd);
	if (!sc) {
		pd.sc = pd.own_sc = sym_cache__new();
		if (pd.sc) {
			/* names only: perf script prints no source lines, and its inline frames
			 * are not made here (docs/perfdata.md); DWARF is then never read */
			sym_cache__set_lines(pd.sc, 0);
			sym_cache__set_inlines(pd.sc, 0);
			sym_cache__set_lazy_names(pd.sc, 1);
			sym_cache__set_plain_unknowns(pd.sc, 1);
			sym_cache__set_perf_names(pd.sc, 1);
		}
	}
	if (!pd.comms || !pd.procs || !pd.files || !pd.unknowns || !pd.sc || !pd.ps) {
		ret = -ENOMEM;
		goto out;
	}
	if (pd.pipe) {
		at = PIPE_HEADER_SIZE;
		end = len;
		ret = 0;
	} else {
		ret = read_file_header(&pd, &at, &end);
		/* the build-id list is in the header's sections: read on while the records are */
		if (!ret && pd.own_sc)
			preload_files(&pd);
	}
	if (!ret)
		ret = list_records(&pd, at, end);
	if (!ret && !pd.nattrs)
		ret = fail(&pd, "truncated perf.data: the stream ends before its event attributes");
	/* once the records are listed: the build-ids (pipe mode: records among them) and the
	 * samples' kernel addresses are known */
	if (!ret && pd.own_sc)
		ret = pd_choose_kallsyms(&pd);
	if (!ret && pd.own_sc)
		ret = kernel_names(&pd);
	if (!ret)
		ret = replay(&pd);
	if (!ret)
		ret = perfscript__end_file(pd.ps);
	if (ret == -EBADMSG) /* the text made here is perf script, unless a bug says otherwise */
		ret = fail(&pd, "internal error: samples not read back");
out:
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s: %s", label, strerror(ENOMEM));
	if (st)
		*st = pd.st;
	if (pd.comms)
		hmap__each(pd.comms, free_comm, NULL);
	if (pd.procs)
		hmap__each(pd.procs, free_comm, NULL);
	if (pd.files)
		hmap__each(pd.files, free_comm, NULL);
	hmap__free(pd.comms);
	hmap__free(pd.procs);
	hmap__free(pd.files);
	hmap__free(pd.unknowns);
	for (size_t i = 0; i < pd.nbids; i++)
		free(pd.bids[i].path);
	for (size_t i = 0; i < pd.nksyms; i++)
		free(pd.ksyms[i].name);
	free(pd.ksyms);
	free(pd.bids);
	free(pd.attrs);
	free(pd.ids);
	BIG_ARRAY_FREE(pd.recs, pd.recs_cap);
	BIG_ARRAY_FREE(pd.syms, pd.syms_cap);
	BIG_ARRAY_FREE(pd.sym_slots, pd.sym_slots_cap);
	BIG_ARRAY_FREE(pd.file_slots, pd.file_slots_cap);
	free(pd.text);
	BIG_ARRAY_FREE(pd.seen, pd.seen_cap);
	BIG_ARRAY_FREE(pd.arena, pd.acap);
	free(pd.key);
	free(pd.upcs);
	BIG_ARRAY_FREE(pd.kset, pd.kset_cap);
	perfscript__free(pd.ps);
	unwinder__free(pd.uw);
	sym_cache__free(pd.own_sc);
	return ret;
}

int perfdata_collapse_file(FILE *f, const void *head, size_t n, const char *label,
			   const struct perfscript_opts *o, perfscript_stack_fn fn, void *ctx,
			   struct perfdata_stats *st, char *err, size_t errlen)
{
	struct stat sb;
	int fd = fileno(f), ret;
	char *buf = NULL;
	size_t len = n, cap = 0;
	void *map;

	if (fd >= 0 && !fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size >= (off_t)n &&
	    sb.st_size > 0) {
		map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (map != MAP_FAILED) {
			ret = perfdata_collapse(map, (size_t)sb.st_size, label, NULL, o, fn, ctx,
						st, err, errlen);
			munmap(map, (size_t)sb.st_size);
			return ret;
		}
	}
	/* a pipe: the rest of the stream, in growing blocks */
	if (ARRAY_GROW(buf, cap, n + (1u << 20)))
		return -ENOMEM;
	memcpy(buf, head, n);
	for (;;) {
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (got == 0)
			break;
		if (len == cap && ARRAY_GROW(buf, cap, len + 1)) {
			free(buf);
			return -ENOMEM;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read %s: %s", label, strerror(errno ? errno : EIO));
		free(buf);
		return -EIO;
	}
	ret = perfdata_collapse(buf, len, label, NULL, o, fn, ctx, st, err, errlen);
	free(buf);
	return ret;
}
