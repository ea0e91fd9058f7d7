/* Writing snapshots (see snapshot.h and docs/snapshot.md); reading is in snapshot.c. */
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
#include "jsonio.h"
#include "snapshot_timeline.h"
#include "snapshot_format.h"
#include "snapshot_l7.h"
#include "sli.h"
#include "util/grow.h"


/* A parameter value: a JSON number or boolean when its text is one, else a string. */
static void out_param(struct json_out *o, const char *v)
{
	size_t n = v ? strlen(v) : 0;

	if (n && (json_is_number(v, n) || !strcmp(v, "true") || !strcmp(v, "false")))
		json_out__raw(o, v, n);
	else
		json_out__cstr(o, v);
}

/* Writes the members of an object from kv pairs (a leading ',' when more is true). */
static void out_kvs(struct json_out *o, const struct snapshot_kv *kv, size_t n, bool more,
		    bool params)
{
	for (size_t i = 0; i < n; i++) {
		if (more || i)
			json_out__raw(o, ",", 1);
		json_out__cstr(o, kv[i].key);
		json_out__raw(o, ":", 1);
		if (params)
			out_param(o, kv[i].value);
		else
			json_out__cstr(o, kv[i].value);
	}
}

/* Keys must be set, unique and not reserved, lists short: what the reader would reject. */
static int check_kvs(struct json_err *e, const struct snapshot_kv *kv, size_t n, const char *what,
		     const char *reserved)
{
	if (n > SNAPSHOT_MAX_LIST)
		return json_err_set(e, -EINVAL, "more than %d %s", SNAPSHOT_MAX_LIST, what);
	for (size_t i = 0; i < n; i++) {
		if (!kv[i].key || !*kv[i].key || (reserved && !strcmp(kv[i].key, reserved)))
			return json_err_set(e, -EINVAL, "%s %zu has an empty or reserved name",
					    what, i);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(kv[i].key, kv[j].key))
				return json_err_set(e, -EINVAL, "duplicate %s \"%s\"", what,
						    kv[i].key);
	}
	return 0;
}

static int check_meta(struct json_err *e, const struct snapshot *s)
{
	const struct snapshot_meta *m = &s->meta;
	int ret;

	if (!isfinite(m->start) || !isfinite(m->end) || m->start < 0 || m->end < m->start)
		return json_err_set(e, -EINVAL, "invalid time range %g..%g", m->start, m->end);
	if (m->nprobes > SNAPSHOT_MAX_LIST || s->nprofiles > SNAPSHOT_MAX_LIST)
		return json_err_set(e, -EINVAL, "more than %d probes or profiles", SNAPSHOT_MAX_LIST);
	for (size_t i = 0; i < m->nprobes; i++) {
		if (!m->probes[i].type || !*m->probes[i].type)
			return json_err_set(e, -EINVAL, "probe %zu has no type", i);
		ret = check_kvs(e, m->probes[i].params, m->probes[i].nparams, "probe parameters",
				"type");
		if (ret)
			return ret;
	}
	return check_kvs(e, m->filters, m->nfilters, "filters", NULL);
}

static void out_meta(struct json_out *o, const struct snapshot_meta *m)
{
	json_out__lit(o, "\"meta\":{\"end\":");
	json_out__num(o, m->end);
	json_out__lit(o, ",\"filters\":{");
	out_kvs(o, m->filters, m->nfilters, false, false);
	json_out__lit(o, "},\"galatop_version\":");
	json_out__cstr(o, m->version);
	json_out__lit(o, ",\"host\":");
	json_out__cstr(o, m->host);
	json_out__lit(o, ",\"kernel\":");
	json_out__cstr(o, m->kernel);
	json_out__lit(o, ",\"notes\":");
	json_out__cstr(o, m->notes);
	json_out__lit(o, ",\"probes\":[");
	for (size_t i = 0; i < m->nprobes; i++) {
		json_out__lit(o, i ? ",{\"type\":" : "{\"type\":");
		json_out__cstr(o, m->probes[i].type);
		out_kvs(o, m->probes[i].params, m->probes[i].nparams, true, true);
		json_out__raw(o, "}", 1);
	}
	json_out__lit(o, "],\"start\":");
	json_out__num(o, m->start);
	json_out__raw(o, "}", 1);
}

/* The snapshot's frame table: frames of every profile in order of first use, each frame table
 * of the profiles mapped separately (tables[i] -> map[i][frame id] = file index + 1). */
struct frame_list {
	struct frames **tables;
	uint32_t **map;
	size_t ntables, tcap;
	uint32_t *table_of, *id_of; /* file index -> (table, frame id) */
	size_t n, cap;
};

static int frame_list_add(struct frame_list *fl, const struct profile *p, uint32_t *index_out)
{
	struct frames *ft = profile__frames(p);
	uint32_t nnodes = profile__node_count(p), t;

	for (t = 0; t < fl->ntables && fl->tables[t] != ft; t++)
		;
	if (t == fl->tcap) {
		size_t ncap = grow_cap(fl->tcap, t + 1, 4, SIZE_MAX / sizeof(*fl->map));

		if (!ncap || ARRAY_RESIZE(fl->tables, ncap) || ARRAY_RESIZE(fl->map, ncap))
			return -ENOMEM;
		fl->tcap = ncap;
	}
	if (t == fl->ntables) {
		fl->map[t] = calloc(frames__count(ft), sizeof(uint32_t));
		if (!fl->map[t])
			return -ENOMEM;
		fl->tables[t] = ft;
		fl->ntables++;
	}
	for (uint32_t id = 1; id < nnodes; id++) {
		uint32_t f = profile__node(p, id)->frame;

		if (!fl->map[t][f]) {
			if (fl->n == fl->cap) {
				size_t ncap = grow_cap(fl->cap, fl->n + 1, 1024, UINT32_MAX - 1);

				if (!ncap || ARRAY_RESIZE(fl->table_of, ncap) ||
				    ARRAY_RESIZE(fl->id_of, ncap))
					return -ENOMEM;
				fl->cap = ncap;
			}
			fl->table_of[fl->n] = t;
			fl->id_of[fl->n] = f;
			fl->map[t][f] = (uint32_t)++fl->n;
		}
		index_out[id] = fl->map[t][f] - 1;
	}
	return 0;
}

static void frame_list_free(struct frame_list *fl)
{
	for (size_t t = 0; t < fl->ntables; t++)
		free(fl->map[t]);
	free(fl->map);
	free(fl->tables);
	free(fl->table_of);
	free(fl->id_of);
}

static void out_frames(struct json_out *o, const struct frame_list *fl)
{
	json_out__lit(o, ",\"frames\":[");
	for (size_t i = 0; i < fl->n; i++) {
		const struct frames *ft = fl->tables[fl->table_of[i]];
		const struct strtab *st = frames__strtab(ft);
		const struct frame *f = frames__get(ft, fl->id_of[i]);

		json_out__lit(o, i ? ",[" : "[");
		json_out__str(o, strtab__str(st, f->name), strtab__len(st, f->name));
		json_out__raw(o, ",", 1);
		json_out__str(o, strtab__str(st, f->module), strtab__len(st, f->module));
		json_out__raw(o, ",\"", 2);
		json_out__lit(o, frame_kind_str(f->kind));
		json_out__raw(o, "\",", 2);
		json_out__str(o, strtab__str(st, f->file), strtab__len(st, f->file));
		json_out__raw(o, ",", 1);
		json_out__u64(o, f->line);
		json_out__raw(o, "]", 1);
	}
	json_out__raw(o, "]", 1);
}

/* The tree of p as "nodes", "root_self"[, "root_self2"] and the node columns, each member
 * preceded by a ','. */
static void out_tree(struct json_out *o, const struct profile *p, const uint32_t *findex)
{
	uint32_t n = profile__node_count(p);
	bool two = profile__two_column(p);

	json_out__lit(o, ",\"nodes\":");
	json_out__u64(o, n - 1);
	json_out__lit(o, ",\"root_self\":");
	json_out__num(o, profile__node(p, PROFILE_ROOT)->self);
	if (two) {
		json_out__lit(o, ",\"root_self2\":");
		json_out__num(o, profile__self2(p, PROFILE_ROOT));
	}
	for (int c = 0; c < (two ? COL_MAX : COL_SELF2); c++) {
		json_out__lit(o, ",\"");
		json_out__lit(o, column_names[c]);
		json_out__lit(o, "\":[");
		for (uint32_t id = 1; id < n; id++) {
			const struct profile_node *nd = profile__node(p, id);

			if (id > 1)
				json_out__raw(o, ",", 1);
			if (c == COL_PARENT)
				json_out__u64(o, id - nd->parent);
			else if (c == COL_FRAME)
				json_out__u64(o, findex[id]);
			else
				json_out__num(o, c == COL_SELF ? nd->self : profile__self2(p, id));
		}
		json_out__raw(o, "]", 1);
	}
}

/* The "history" member: heat map, then each slice as {"t0","t1", tree}; sindex[k] maps the
 * frames of slice k. */
static void out_history(struct json_out *o, const struct slices *h, uint32_t *const *sindex)
{
	int64_t first;
	size_t nheat;
	const double *heat = slices__heat(h, &first, &nheat);

	json_out__lit(o, ",\"history\":{\"bucket_s\":");
	json_out__num(o, SLICES_BUCKET_S);
	json_out__lit(o, ",\"heat_first\":");
	json_out__u64(o, nheat ? (uint64_t)first : 0);
	json_out__lit(o, ",\"heat\":[");
	for (size_t i = 0; i < nheat; i++) {
		if (i)
			json_out__raw(o, ",", 1);
		json_out__num(o, heat[i]);
	}
	json_out__lit(o, "]");
	if (slices__heat_base(h) != 0) {
		json_out__lit(o, ",\"heat_base\":");
		json_out__num(o, slices__heat_base(h));
	}
	json_out__lit(o, ",\"slices\":[");
	for (size_t k = 0; k < slices__count(h); k++) {
		const struct slice *sl = slices__get(h, k);

		json_out__lit(o, k ? ",{\"t0\":" : "{\"t0\":");
		json_out__num(o, sl->t0);
		json_out__lit(o, ",\"t1\":");
		json_out__num(o, sl->t1);
		out_tree(o, sl->p, sindex[k]);
		json_out__raw(o, "}", 1);
	}
	json_out__lit(o, "]}");
}

static void out_profile(struct json_out *o, const struct snapshot_profile *sp,
			const uint32_t *findex, uint32_t *const *sindex)
{
	const struct profile *p = sp->p;

	json_out__lit(o, "{\"name\":");
	json_out__cstr(o, sp->name);
	json_out__lit(o, ",\"type\":");
	json_out__cstr(o, sp->type);
	json_out__lit(o, ",\"value\":\"");
	json_out__lit(o, value_kind_str(profile__kind(p)));
	json_out__lit(o, profile__is_chart(p) ? "\",\"chart\":true" : "\",\"chart\":false");
	json_out__lit(o, profile__two_column(p) ? ",\"two_column\":true" : ",\"two_column\":false");
	out_tree(o, p, findex);
	if (sp->history)
		out_history(o, sp->history, sindex);
	json_out__raw(o, "}", 1);
}

/* Parents come before children and values are finite and non-negative (negative ones too
 * with neg: a slice of a type whose values go down), or the file could not be read back. */
static int check_tree(struct json_err *e, size_t i, const struct profile *p, bool neg)
{
	bool two;

	two = profile__two_column(p);
	for (uint32_t id = 0; id < profile__node_count(p); id++) {
		const struct profile_node *nd = profile__node(p, id);
		double s2 = two ? profile__self2(p, id) : 0;

		if (id && nd->parent >= id)
			return json_err_set(e, -EINVAL,
					    "profile %zu node %u comes before its parent", i, id);
		if (!isfinite(nd->self) || (!neg && nd->self < 0) || !isfinite(s2) || s2 < 0)
			return json_err_set(
			    e, -EINVAL, "profile %zu node %u has a negative or non-finite value", i,
			    id);
	}
	return 0;
}

static int check_profile(struct json_err *e, size_t i, const struct snapshot_profile *sp)
{
	const struct slices *h = sp->history;
	double prev = 0;
	int ret, t = sp->type ? stack_type_parse(sp->type) : -1;
	bool down = t >= 0 && stack_types[t].can_go_down;

	if (!sp->p || !sp->name || !sp->type || !*sp->type)
		return json_err_set(e, -EINVAL, "profile %zu has no name, type or tree", i);
	ret = check_tree(e, i, sp->p, false);
	if (ret || !h)
		return ret;
	if (slices__count(h) > SNAPSHOT_MAX_SLICES)
		return json_err_set(e, -EINVAL, "profile %zu: more than %d slices", i,
				    SNAPSHOT_MAX_SLICES);
	for (size_t k = 0; k < slices__count(h); k++) {
		const struct slice *sl = slices__get(h, k);

		if (!(sl->t0 >= prev) || !(sl->t1 > sl->t0) || !isfinite(sl->t1))
			return json_err_set(e, -EINVAL,
					    "profile %zu slice %zu: times %g..%g out of order", i,
					    k, sl->t0, sl->t1);
		if (profile__kind(sl->p) != profile__kind(sp->p) || profile__two_column(sl->p))
			return json_err_set(e, -EINVAL, "profile %zu slice %zu: another kind", i,
					    k);
		ret = check_tree(e, i, sl->p, down);
		if (ret)
			return ret;
		prev = sl->t1;
	}
	return 0;
}

/* Frame indexes of every slice of h, as frame_list_add; *out[k] for slice k (NULL entries
 * when memory ran out, then -ENOMEM). */
static int index_history(struct frame_list *fl, const struct slices *h, uint32_t ***out)
{
	size_t n = slices__count(h);

	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		const struct profile *p = slices__get(h, k)->p;
		int ret;

		(*out)[k] = malloc((size_t)profile__node_count(p) * sizeof(uint32_t));
		if (!(*out)[k])
			return -ENOMEM;
		ret = frame_list_add(fl, p, (*out)[k]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The "sli" section, written by export/sli. */
static int out_sli(struct json_out *o, const struct snapshot *s, struct json_err *e)
{
	char *text;

	if (!s->sli)
		return 0;
	text = sli_snapshot_text(s->sli);
	if (!text)
		return json_err_set(e, -ENOMEM, "%s", strerror(ENOMEM));
	json_out__lit(o, ",\"sli\":");
	json_out__raw(o, text, strlen(text));
	free(text);
	return 0;
}

static int write_stream(struct json_out *o, const struct snapshot *s, struct json_err *e)
{
	struct frame_list fl = {0};
	uint32_t **findex = calloc(s->nprofiles + 1, sizeof(*findex));
	uint32_t ***sindex = calloc(s->nprofiles + 1, sizeof(*sindex));
	int ret = 0;

	if (!findex || !sindex) {
		free(findex);
		free(sindex);
		return json_err_set(e, -ENOMEM, "%s", strerror(ENOMEM));
	}
	for (size_t i = 0; i < s->nprofiles && !ret; i++) {
		ret = check_profile(e, i, &s->profiles[i]);
		if (ret)
			break;
		findex[i] =
		    malloc((size_t)profile__node_count(s->profiles[i].p) * sizeof(uint32_t));
		ret = findex[i] ? frame_list_add(&fl, s->profiles[i].p, findex[i]) : -ENOMEM;
		if (!ret && s->profiles[i].history)
			ret = index_history(&fl, s->profiles[i].history, &sindex[i]);
		if (ret)
			json_err_set(e, ret, "%s", strerror(-ret));
	}
	if (!ret) {
		json_out__lit(o, "{\"format\":\"" SNAPSHOT_FORMAT "\",\"version\":");
		json_out__u64(o, SNAPSHOT_VERSION);
		json_out__raw(o, ",", 1);
		out_meta(o, &s->meta);
		out_frames(o, &fl);
		json_out__lit(o, ",\"profiles\":[");
		for (size_t i = 0; i < s->nprofiles; i++) {
			if (i)
				json_out__raw(o, ",", 1);
			out_profile(o, &s->profiles[i], findex[i], sindex[i]);
		}
		json_out__lit(o, "]");
		snapshot_l7_write(o, s);
		ret = out_sli(o, s, e);
		if (s->timeline) {
			json_out__lit(o, ",\"timeline\":");
			snapshot_timeline_write(o, s->timeline);
		}
		json_out__lit(o, "}\n");
		ret = ret ?: json_out__finish(o);
		if (ret)
			json_err_set(e, ret, "%s", strerror(-ret));
	}
	for (size_t i = 0; i < s->nprofiles; i++) {
		free(findex[i]);
		for (size_t k = 0; sindex[i] && k < slices__count(s->profiles[i].history); k++)
			free(sindex[i][k]);
		free(sindex[i]);
	}
	free(findex);
	free(sindex);
	frame_list_free(&fl);
	return ret;
}

int snapshot_write(const char *path, const struct snapshot *s, char *err, size_t errlen)
{
	struct json_err e = {err, errlen, path, false};
	struct json_out o = {0};
	FILE *f;
	char *tmp = NULL;
	locale_t old, c;
	int fd = -1, ret;

	ret = check_meta(&e, s);
	if (ret)
		return ret;
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return json_err_set(&e, -ENOMEM, "%s", strerror(ENOMEM));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		ret = json_err_set(&e, -errno, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	/* Level 3 writes a million nodes in a fifth of the time of level 6, 7% bigger. */
	ret = json_out__init(&o, f, 3);
	if (ret) {
		json_err_set(&e, ret, "%s", strerror(-ret));
	} else {
		c = json_c_locale_begin(&old);
		ret = write_stream(&o, s, &e);
		json_c_locale_end(c, old);
	}
	if (fclose(f) && !ret)
		ret = json_err_set(&e, -errno, "%s", strerror(errno));
	if (!ret && rename(tmp, path))
		ret = json_err_set(&e, -errno, "%s", strerror(errno));
	if (ret)
		unlink(tmp);
out:
	json_out__fini(&o);
	free(tmp);
	return ret;
}

