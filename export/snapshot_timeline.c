#include "snapshot_timeline.h"
#include "util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The columns of an interval, in the order written. */
enum { E_START, E_END, E_KIND, E_NAME, E_ATTR, E_STACK, E_COUNT, E_ADDR, E_OWNER, E_OP, E_FLAGS,
       E_MAX };
#define TL_MAX_STRINGS (1u << 24)

static void out_event(struct json_out *o, const struct tl_event *e, bool with_tid)
{
	const uint64_t v[E_MAX] = { e->start, e->end, e->kind,	e->name,  e->attr, e->stack,
				    e->count, e->addr, e->owner, e->op, e->flags };

	json_out__raw(o, "[", 1);
	if (with_tid) {
		json_out__u64(o, e->tid);
		json_out__raw(o, ",", 1);
	}
	for (int i = 0; i < E_MAX; i++) {
		if (i)
			json_out__raw(o, ",", 1);
		json_out__u64(o, v[i]);
	}
	json_out__raw(o, "]", 1);
}

void snapshot_timeline_write(struct json_out *o, const struct timeline *tl)
{
	const struct strtab *st = timeline__strtab_c(tl);
	struct timeline_stats ts;

	timeline__stats(tl, &ts);
	json_out__lit(o, "{\"now\":");
	json_out__u64(o, timeline__now(tl));
	json_out__lit(o, ",\"wall_offset\":");
	json_out__num(o, timeline__wall_offset(tl) > 0 ? timeline__wall_offset(tl) : 0);
	json_out__lit(o, ",\"min_dur\":");
	json_out__u64(o, timeline__min_dur(tl));
	json_out__lit(o, ",\"syscalls\":");
	json_out__u64(o, timeline__syscall_mode(tl));
	json_out__lit(o, ",\"dropped\":");
	json_out__u64(o, ts.dropped);
	json_out__lit(o, ",\"strings\":[");
	for (uint32_t i = 0; i < strtab__count(st); i++) {
		if (i)
			json_out__raw(o, ",", 1);
		json_out__str(o, strtab__str(st, i), strtab__len(st, i));
	}
	json_out__lit(o, "],\"processes\":[");
	for (size_t i = 0; i < timeline__nprocesses(tl); i++) {
		const struct tl_process *p = timeline__process(tl, i);

		json_out__lit(o, i ? ",[" : "[");
		json_out__u64(o, p->pid);
		json_out__raw(o, ",", 1);
		json_out__u64(o, p->name);
		json_out__raw(o, ",", 1);
		json_out__u64(o, p->container);
		json_out__raw(o, ",", 1);
		json_out__u64(o, p->container_id);
		json_out__raw(o, "]", 1);
	}
	json_out__lit(o, "],\"threads\":[");
	for (size_t i = 0; i < timeline__nthreads(tl); i++) {
		const struct tl_thread *t = timeline__thread(tl, i);
		const struct tl_event *ev;
		size_t n;

		json_out__lit(o, i ? ",{\"tid\":" : "{\"tid\":");
		json_out__u64(o, t->tid);
		json_out__lit(o, ",\"pid\":");
		json_out__u64(o, t->pid);
		json_out__lit(o, ",\"comm\":");
		json_out__u64(o, t->comm);
		if (t->ended) {
			json_out__lit(o, ",\"ended\":");
			json_out__u64(o, t->ended);
		}
		json_out__lit(o, ",\"short\":[");
		for (int k = 0; k < TL_KIND_MAX; k++) {
			json_out__lit(o, k ? ",[" : "[");
			json_out__u64(o, t->short_count[k]);
			json_out__raw(o, ",", 1);
			json_out__u64(o, t->short_ns[k]);
			json_out__raw(o, "]", 1);
		}
		json_out__lit(o, "],\"events\":[");
		ev = timeline__lane(tl, i, &n);
		for (size_t k = 0; k < n; k++) {
			if (k)
				json_out__raw(o, ",", 1);
			out_event(o, &ev[k], false);
		}
		json_out__lit(o, "]}");
	}
	json_out__lit(o, "],\"open\":[");
	for (size_t j = 0; j < timeline__nopen(tl); j++) {
		struct tl_event e = timeline__open(tl, j);

		if (j)
			json_out__raw(o, ",", 1);
		out_event(o, &e, true);
	}
	json_out__lit(o, "]}");
}

struct tl_reader {
	struct json_in *s;
	struct timeline *tl;
	uint32_t *smap; /* file string index -> timeline string id */
	size_t nstr;
};

static int read_strings(struct tl_reader *r)
{
	bool first = true;
	size_t cap = 0;
	int more;

	while ((more = json_in__arr_next(r->s, &first)) == 1) {
		const char *str;
		size_t len;
		uint32_t id;

		if (r->nstr == TL_MAX_STRINGS)
			return json_in__fail(r->s, "more than %u strings", TL_MAX_STRINGS);
		if (json_in__str(r->s, &str, &len))
			return -EINVAL;
		id = timeline__intern(r->tl, str, len);
		if (id == UINT32_MAX)
			return -ENOMEM;
		if (ARRAY_GROW(r->smap, cap, r->nstr + 1))
			return -ENOMEM;
		r->smap[r->nstr++] = id;
	}
	return more < 0 ? -EINVAL : 0;
}

/* Reads one string index and maps it. */
static int read_sid(struct tl_reader *r, uint32_t *id)
{
	uint64_t v;

	if (!r->nstr)
		return json_in__fail(r->s, "a string index before \"strings\"");
	if (json_in__uint(r->s, r->nstr - 1, &v))
		return -EINVAL;
	*id = r->smap[v];
	return 0;
}

/* [values...] of an interval, with a leading tid when with_tid. */
static int read_event(struct tl_reader *r, struct tl_event *e, bool with_tid)
{
	static const uint64_t max[E_MAX] = { UINT64_MAX, UINT64_MAX, TL_KIND_MAX - 1, 0, 0, 0,
					     UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, TL_EV_ALL };
	uint64_t v[E_MAX];
	uint32_t ids[3];

	memset(e, 0, sizeof(*e));
	if (json_in__expect(r->s, '['))
		return -EINVAL;
	if (with_tid) {
		if (json_in__uint(r->s, UINT32_MAX, &v[0]) || json_in__expect(r->s, ','))
			return -EINVAL;
		e->tid = (uint32_t)v[0];
	}
	for (int i = 0; i < E_MAX; i++) {
		if (i && json_in__expect(r->s, ','))
			return -EINVAL;
		if (i >= E_NAME && i <= E_STACK) {
			if (read_sid(r, &ids[i - E_NAME]))
				return -EINVAL;
			continue;
		}
		if (json_in__uint(r->s, max[i], &v[i]))
			return -EINVAL;
	}
	if (json_in__expect(r->s, ']'))
		return -EINVAL;
	if (v[E_START] > v[E_END])
		return json_in__fail(r->s, "an interval ends before it starts");
	e->start = v[E_START];
	e->end = v[E_END];
	e->kind = (uint8_t)v[E_KIND];
	e->name = ids[0];
	e->attr = ids[1];
	e->stack = ids[2];
	e->count = (uint32_t)v[E_COUNT];
	e->addr = v[E_ADDR];
	e->owner = (uint32_t)v[E_OWNER];
	e->op = (uint32_t)v[E_OP];
	e->flags = (uint8_t)v[E_FLAGS];
	return 0;
}

static int read_processes(struct tl_reader *r)
{
	bool first = true;
	int more;

	while ((more = json_in__arr_next(r->s, &first)) == 1) {
		uint64_t pid;
		uint32_t ids[3];
		const struct strtab *st = timeline__strtab_c(r->tl);

		if (json_in__expect(r->s, '[') || json_in__uint(r->s, UINT32_MAX, &pid))
			return -EINVAL;
		for (int i = 0; i < 3; i++)
			if (json_in__expect(r->s, ',') || read_sid(r, &ids[i]))
				return -EINVAL;
		if (json_in__expect(r->s, ']'))
			return -EINVAL;
		if (timeline__process_set(r->tl, (uint32_t)pid, strtab__str(st, ids[0]),
					  strtab__str(st, ids[1]), strtab__str(st, ids[2])))
			return -ENOMEM;
	}
	return more < 0 ? -EINVAL : 0;
}

static int read_thread(struct tl_reader *r)
{
	bool first = true, have_tid = false;
	uint64_t tid = 0, pid = 0, ended = 0, sc[TL_KIND_MAX] = { 0 }, sn[TL_KIND_MAX] = { 0 };
	uint32_t comm = 0;
	long ti = -1;
	const char *key;
	size_t klen;
	int more, ret = 0;

	while (!ret && (more = json_in__obj_next(r->s, &first, &key, &klen)) == 1) {
		if (json_key_is(key, klen, "tid")) {
			ret = json_in__uint(r->s, UINT32_MAX, &tid);
			have_tid = !ret && tid;
			if (!ret && !tid)
				ret = json_in__fail(r->s, "tid 0");
		} else if (json_key_is(key, klen, "pid")) {
			ret = json_in__uint(r->s, UINT32_MAX, &pid);
		} else if (json_key_is(key, klen, "comm")) {
			ret = read_sid(r, &comm);
		} else if (json_key_is(key, klen, "ended")) {
			ret = json_in__uint(r->s, UINT64_MAX, &ended);
		} else if (json_key_is(key, klen, "short")) {
			bool f2 = true;
			int k = 0, m;

			while (!ret && (m = json_in__arr_next(r->s, &f2)) == 1) {
				if (k == TL_KIND_MAX)
					return json_in__fail(r->s, "more than %d kinds", TL_KIND_MAX);
				ret = json_in__expect(r->s, '[') ?: json_in__uint(r->s, UINT64_MAX, &sc[k]);
				ret = ret ?: json_in__expect(r->s, ',');
				ret = ret ?: json_in__uint(r->s, UINT64_MAX, &sn[k]);
				ret = ret ?: json_in__expect(r->s, ']');
				k++;
				if (m < 0)
					ret = -EINVAL;
			}
		} else if (json_key_is(key, klen, "events")) {
			bool f2 = true;
			int m;

			if (!have_tid)
				return json_in__fail(r->s, "\"events\" before \"tid\"");
			ti = timeline__thread_get(r->tl, (uint32_t)pid, (uint32_t)tid,
						  strtab__str(timeline__strtab_c(r->tl), comm),
						  strtab__len(timeline__strtab_c(r->tl), comm));
			if (ti < 0)
				return ti == -ENOMEM ? -ENOMEM : json_in__fail(r->s, "bad thread");
			while (!ret && (m = json_in__arr_next(r->s, &f2)) == 1) {
				struct tl_event e;

				ret = read_event(r, &e, false);
				if (!ret && timeline__add(r->tl, (size_t)ti, &e) == -ENOMEM)
					ret = -ENOMEM;
			}
			if (!ret && m < 0)
				ret = -EINVAL;
		} else {
			ret = json_in__skip(r->s);
		}
	}
	if (ret || more < 0)
		return ret ? ret : -EINVAL;
	if (!have_tid)
		return json_in__fail(r->s, "a thread without \"tid\"");
	if (ti < 0) {
		ti = timeline__thread_get(r->tl, (uint32_t)pid, (uint32_t)tid,
					  strtab__str(timeline__strtab_c(r->tl), comm),
					  strtab__len(timeline__strtab_c(r->tl), comm));
		if (ti < 0)
			return -ENOMEM;
	}
	for (int k = 0; k < TL_KIND_MAX; k++)
		timeline__set_short(r->tl, (size_t)ti, k, sc[k], sn[k]);
	timeline__thread_end(r->tl, (size_t)ti, ended);
	return 0;
}

static int read_open(struct tl_reader *r)
{
	bool first = true;
	int more;

	while ((more = json_in__arr_next(r->s, &first)) == 1) {
		struct tl_event e;
		long ti;

		if (read_event(r, &e, true))
			return -EINVAL;
		ti = timeline__thread_find(r->tl, e.tid);
		if (ti < 0)
			return json_in__fail(r->s, "a call in progress of unknown thread %u", e.tid);
		if (timeline__open_add(r->tl, (size_t)ti, &e) == -ENOMEM)
			return -ENOMEM;
	}
	return more < 0 ? -EINVAL : 0;
}

int snapshot_timeline_read(struct json_in *s, struct timeline **out)
{
	struct tl_reader r = { .s = s };
	bool first = true;
	const char *key;
	size_t klen;
	uint64_t now = 0, min_dur = 0, dropped = 0, mode = 0;
	double wall = 0;
	int more, ret = 0;

	*out = NULL;
	r.tl = timeline__new(0);
	if (!r.tl)
		return json_err_set(s->e, -ENOMEM, "out of memory");
	while (!ret && (more = json_in__obj_next(s, &first, &key, &klen)) == 1) {
		if (json_key_is(key, klen, "now"))
			ret = json_in__uint(s, UINT64_MAX, &now);
		else if (json_key_is(key, klen, "wall_offset"))
			ret = json_in__value(s, &wall);
		else if (json_key_is(key, klen, "min_dur"))
			ret = json_in__uint(s, UINT64_MAX, &min_dur);
		else if (json_key_is(key, klen, "syscalls"))
			ret = json_in__uint(s, TL_SYSCALLS_ALL, &mode);
		else if (json_key_is(key, klen, "dropped"))
			ret = json_in__uint(s, UINT64_MAX, &dropped);
		else if (json_key_is(key, klen, "strings"))
			ret = r.nstr ? json_in__fail(s, "duplicate \"strings\"") : read_strings(&r);
		else if (json_key_is(key, klen, "processes"))
			ret = read_processes(&r);
		else if (json_key_is(key, klen, "threads")) {
			bool f2 = true;
			int m;

			while (!ret && (m = json_in__arr_next(s, &f2)) == 1)
				ret = read_thread(&r);
			if (!ret && m < 0)
				ret = -EINVAL;
		} else if (json_key_is(key, klen, "open"))
			ret = read_open(&r);
		else
			ret = json_in__skip(s);
	}
	free(r.smap);
	if (!ret && more < 0)
		ret = -EINVAL;
	if (ret == -ENOMEM)
		json_err_set(s->e, -ENOMEM, "out of memory");
	if (ret) {
		timeline__free(r.tl);
		return ret;
	}
	timeline__set_now(r.tl, now);
	timeline__set_wall_offset(r.tl, wall);
	timeline__set_min_dur(r.tl, min_dur);
	timeline__set_syscall_mode(r.tl, (enum tl_syscall_mode)mode);
	timeline__add_dropped(r.tl, dropped);
	*out = r.tl;
	return 0;
}
