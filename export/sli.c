/* SLI series to JSON, Prometheus text and snapshot sections; see sli.h. */
#include "sli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* jsonio first: jansson defines a json_is_number macro that would clash with its prototype. */
#include "jsonio.h"
#include "model/sanitize.h"
#include "prom.h"

#include <jansson.h>

#define TOP_THREADS 16	     /* threads written per group */
#define MAX_GROUPS 100000    /* a snapshot section with more is refused */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *u64(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* [[upper bound ns, count], ...] over the non-empty buckets. */
static json_t *hist_json(const struct hist *h)
{
	json_t *a = json_array();
	unsigned idx = 0, b;
	uint64_t n;

	while (a && hist_next(h, &idx, &b, &n)) {
		uint64_t lo, hi;

		hist_bucket_range(b, &lo, &hi);
		json_array_append_new(a, json_pack("[oo]", u64(hi), u64(n)));
	}
	return a;
}

/* The SLI members of one set of figures (totals or an interval) into o. */
static void put_slis(json_t *o, const struct sli *s, const uint64_t *ns, const uint64_t *count,
		     const struct hist *h)
{
	char key[64];

	for (int k = 0; k < SLI_MAX; k++) {
		bool have = s->have & 1u << k;

		snprintf(key, sizeof(key), "%s_ns", sli_name(k));
		json_object_set_new(o, key, have ? u64(ns[k]) : json_null());
		snprintf(key, sizeof(key), "%s_count", sli_name(k));
		json_object_set_new(o, key, have ? u64(count[k]) : json_null());
		snprintf(key, sizeof(key), "%s_hist", sli_name(k));
		json_object_set_new(o, key, have ? hist_json(&h[k]) : json_null());
	}
}

static json_t *threads_json(const struct sli *s, const struct sli_group *g, bool interval)
{
	json_t *a = json_array();
	char key[64];

	for (size_t i = 0; a && i < g->nthreads && i < TOP_THREADS; i++) {
		const struct sli_thread *t = &g->threads[i];
		json_t *o = json_pack("{sIsIss}", "tid", (json_int_t)t->tid, "tgid",
				      (json_int_t)t->tgid, "comm", t->comm);

		for (int k = 0; o && k < SLI_MAX; k++) {
			snprintf(key, sizeof(key), "%s_ns", sli_name(k));
			json_object_set_new(o, key, s->have & 1u << k
							    ? u64(interval ? t->d_ns[k] : t->ns[k])
							    : json_null());
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *group_json(const struct sli *s, const struct sli_group *g, bool interval)
{
	json_t *o = json_pack("{ssssss}", "id", g->id, "name", g->name, "kind",
			      sli_gkind_str(g->kind));
	json_t *psi = json_object();

	if (!o || !psi) {
		json_decref(o);
		json_decref(psi);
		return NULL;
	}
	if (interval)
		put_slis(o, s, g->d_ns, g->d_count, g->d_hist);
	else
		put_slis(o, s, g->ns, g->count, g->hist);
	for (int p = 0; p < SLI_PSI_MAX; p++)
		json_object_set_new(psi, sli_psi_name(p), num(g->psi[p]));
	json_object_set_new(o, "psi_pct", psi);
	json_object_set_new(o, "psi_source", g->psi_src ? json_string(g->psi_src) : json_null());
	json_object_set_new(o, "throttled_pct", num(g->throttled_pct));
	json_object_set_new(o, "nr_throttled", num(g->nr_throttled));
	json_object_set_new(o, "throttle_source",
			    g->thr_src ? json_string(g->thr_src) : json_null());
	json_object_set_new(o, "threads", threads_json(s, g, interval));
	return o;
}

static json_t *groups_json(const struct sli *s, bool interval)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < s->n; i++)
		if (json_array_append_new(a, group_json(s, s->groups[i], interval))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *have_json(const struct sli *s)
{
	json_t *a = json_array();

	for (int k = 0; a && k < SLI_MAX; k++)
		if (s->have & 1u << k)
			json_array_append_new(a, json_string(sli_name(k)));
	return a;
}

struct sli_json_periods {
	json_t *a;
};

struct sli_json_periods *sli_json_periods__new(void)
{
	struct sli_json_periods *p = calloc(1, sizeof(*p));

	if (p && !(p->a = json_array())) {
		free(p);
		return NULL;
	}
	return p;
}

int sli_json_periods__add(struct sli_json_periods *p, const struct sli *s)
{
	json_t *o = json_pack("{sfsfso}", "start", s->end - s->dt, "end", s->end, "groups",
			      groups_json(s, true));

	return o && !json_array_append_new(p->a, o) ? 0 : -ENOMEM;
}

void sli_json_periods__free(struct sli_json_periods *p)
{
	if (!p)
		return;
	json_decref(p->a);
	free(p);
}

static int dump(FILE *f, json_t *root, size_t flags)
{
	locale_t old, c = json_c_locale_begin(&old);
	int r = json_dumpf(root, f, flags | JSON_REAL_PRECISION(10));

	json_c_locale_end(c, old);
	if (r || fputc('\n', f) == EOF || fflush(f))
		return errno ? -errno : -EIO;
	return 0;
}

int sli_json_write(FILE *f, const struct sli *s, const char *host,
		   const struct sli_json_periods *p)
{
	json_t *root = json_pack("{sssisfsfsssIsososs?}", "format", SLI_JSON_FORMAT, "version",
				 SLI_JSON_VERSION, "start", s->start, "end", s->end, "host",
				 host ? host : "", "longsys_ns", (json_int_t)s->longsys_ns,
				 "measured", have_json(s), "groups", groups_json(s, false),
				 "notes", s->notes);
	int r;

	if (!root)
		return -ENOMEM;
	if (p)
		json_object_set(root, "periods", p->a);
	r = dump(f, root, JSON_INDENT(1));
	json_decref(root);
	return r;
}

/* Prometheus: counters of the totals, a histogram per SLI, gauges for PSI and throttling. */
static const double le_s[] = { 1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
			       0.1,  0.25, 0.5,	 1,    2.5,  5,	   10 };

int sli_prom_write(FILE *f, const struct sli *s)
{
	return sli_prom_write_style(f, s, NULL);
}

int sli_prom_write_style(FILE *f, const struct sli *s, const struct prom_style *style)
{
	struct prom_label all[PROM_MAX_LABELS];
	char name[96], help[256];

	for (int k = 0; k < SLI_MAX; k++) {
		if (!(s->have & 1u << k))
			continue;
		snprintf(name, sizeof(name), "galatop_sli_%s_seconds", sli_name(k));
		snprintf(help, sizeof(help), "%s delays in seconds (%s)", sli_name(k), sli__hook(s, k));
		prom_family(f, name, "histogram", help);
		for (size_t i = 0; i < s->n; i++) {
			const struct sli_group *g = s->groups[i];
			struct prom_label l[] = { { "group", g->name },
						  { "kind", sli_gkind_str(g->kind) } };
			struct hist h = g->hist[k];

			h.sum = g->ns[k]; /* the exact total, not the buckets' middles */
			prom_histogram(f, name, all, prom_labels(style, l, 2, all), &h, le_s,
				       sizeof(le_s) / sizeof(le_s[0]), 1e-9);
		}
	}
	prom_family(f, "galatop_sli_psi_ratio", "gauge",
		    "share of the last interval stalled (PSI some/full), from the pressure files");
	for (size_t i = 0; i < s->n; i++) {
		const struct sli_group *g = s->groups[i];

		for (int p = 0; p < SLI_PSI_MAX; p++) {
			char res[32];
			const char *pn = sli_psi_name(p), *us = strchr(pn, '_');
			struct prom_label l[] = { { "group", g->name },
						  { "kind", sli_gkind_str(g->kind) },
						  { "resource", res },
						  { "type", us ? us + 1 : "" } };

			if (isnan(g->psi[p]))
				continue;
			snprintf(res, sizeof(res), "%.*s", (int)(us ? us - pn : 0), pn);
			prom_sample(f, "galatop_sli_psi_ratio", all, prom_labels(style, l, 4, all),
				    g->psi[p] / 100);
		}
	}
	prom_family(f, "galatop_sli_cpu_throttled_ratio", "gauge",
		    "share of the last interval the group's CPU quota was exhausted (cpu.stat)");
	for (size_t i = 0; i < s->n; i++) {
		const struct sli_group *g = s->groups[i];
		struct prom_label l[] = { { "group", g->name }, { "kind", sli_gkind_str(g->kind) } };

		if (!isnan(g->throttled_pct))
			prom_sample(f, "galatop_sli_cpu_throttled_ratio", all,
				    prom_labels(style, l, 2, all), g->throttled_pct / 100);
	}
	return fflush(f) || ferror(f) ? -EIO : 0;
}

/* Snapshot section. */

char *sli_snapshot_text(const struct sli *s)
{
	json_t *root = json_pack("{sosIsfsfsfsIsIss?so}", "measured", have_json(s), "longsys_ns",
				 (json_int_t)s->longsys_ns, "start", s->start, "end", s->end, "dt",
				 s->dt, "nspark", (json_int_t)s->nspark, "intervals",
				 (json_int_t)s->intervals, "notes", s->notes, "groups", json_array());
	json_t *groups = root ? json_object_get(root, "groups") : NULL;
	locale_t old, c;
	char *text;

	for (size_t i = 0; groups && i < s->n; i++) {
		const struct sli_group *g = s->groups[i];
		json_t *o = group_json(s, g, false), *last = group_json(s, g, true);
		json_t *spark = json_object();

		for (unsigned k = 0; spark && k < SLI_SERIES_MAX; k++) {
			json_t *a = json_array();

			for (unsigned j = 0; a && j < s->nspark; j++)
				json_array_append_new(a, num(sli_group__spark(s, g, k, j)));
			json_object_set_new(spark, sli_series_name(k), a);
		}
		if (!o || !last || !spark) {
			json_decref(o);
			json_decref(last);
			json_decref(spark);
			json_decref(root);
			return NULL;
		}
		json_object_set_new(o, "last", last);
		json_object_set_new(o, "spark", spark);
		json_array_append_new(groups, o);
	}
	if (!root)
		return NULL;
	c = json_c_locale_begin(&old);
	text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_c_locale_end(c, old);
	json_decref(root);
	return text;
}

struct parse {
	char *err;
	size_t errlen;
	int ret;
};

static int bad(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->ret) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
		p->ret = -EINVAL;
	}
	return p->ret;
}

/* A non-negative integer member, or null (missing) when nullable. */
static int get_u64(struct parse *p, const json_t *o, const char *key, const char *where,
		   uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(p, "%s.%s: not a non-negative integer", where, key);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static double get_num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int get_hist(struct parse *p, const json_t *a, const char *where, struct hist *h,
		    uint64_t sum)
{
	size_t i;
	json_t *e;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return bad(p, "%s: not an array", where);
	json_array_foreach(a, i, e) {
		json_t *le = json_array_get(e, 0), *n = json_array_get(e, 1);
		uint64_t lo, hi;
		unsigned idx;

		if (json_array_size(e) != 2 || !json_is_integer(le) || !json_is_integer(n) ||
		    json_integer_value(le) < 0 || json_integer_value(n) < 0)
			return bad(p, "%s[%zu]: not a [bound, count] pair", where, i);
		idx = hist_index((uint64_t)json_integer_value(le));
		hist_bucket_range(idx, &lo, &hi);
		if (hi != (uint64_t)json_integer_value(le))
			return bad(p, "%s[%zu]: %lld is not a bucket bound", where, i,
				   (long long)json_integer_value(le));
		if (hist_add_bucket(h, idx, (uint64_t)json_integer_value(n), 0))
			return p->ret = -ENOMEM;
	}
	h->sum = sum;
	return 0;
}

static int get_slis(struct parse *p, const json_t *o, const char *where, uint64_t *ns,
		    uint64_t *count, struct hist *h)
{
	char key[64], at[128];

	for (int k = 0; k < SLI_MAX && !p->ret; k++) {
		snprintf(key, sizeof(key), "%s_ns", sli_name(k));
		get_u64(p, o, key, where, &ns[k]);
		snprintf(key, sizeof(key), "%s_count", sli_name(k));
		get_u64(p, o, key, where, &count[k]);
		snprintf(key, sizeof(key), "%s_hist", sli_name(k));
		snprintf(at, sizeof(at), "%s.%s", where, key);
		get_hist(p, json_object_get(o, key), at, &h[k], ns[k]);
	}
	return p->ret;
}

static int get_group(struct parse *p, struct sli *s, const json_t *o, size_t gi)
{
	const char *id = json_string_value(json_object_get(o, "id"));
	const char *name = json_string_value(json_object_get(o, "name"));
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const json_t *last = json_object_get(o, "last"), *spark = json_object_get(o, "spark");
	const json_t *psi = json_object_get(o, "psi_pct"), *th = json_object_get(o, "threads");
	char where[64];
	struct sli_group *g;
	int gk = kind ? sli_parse_gkind(kind) : -1;
	size_t i;
	json_t *e;

	snprintf(where, sizeof(where), "sli.groups[%zu]", gi);
	if (!id || !name || gk < 0)
		return bad(p, "%s: needs string id, name and a known kind", where);
	if (sli__find(s, id))
		return bad(p, "%s: duplicate id", where);
	g = sli__group(s, id, name, (enum sli_gkind)gk);
	if (!g)
		return p->ret = -ENOMEM;
	if (get_slis(p, o, where, g->ns, g->count, g->hist))
		return p->ret;
	if (json_is_object(last) && get_slis(p, last, where, g->d_ns, g->d_count, g->d_hist))
		return p->ret;
	for (unsigned k = 0; k < SLI_SERIES_MAX; k++) {
		const json_t *a = json_is_object(spark) ? json_object_get(spark, sli_series_name(k))
							: NULL;

		for (unsigned j = 0; j < s->nspark; j++) {
			const json_t *v = json_array_get(a, j);

			g->spark[k][SLI_SPARK - s->nspark + j] =
				json_is_number(v) ? (float)json_number_value(v) : NAN;
		}
	}
	for (int q = 0; q < SLI_PSI_MAX; q++)
		g->psi[q] = get_num(psi, sli_psi_name(q));
	g->throttled_pct = get_num(o, "throttled_pct");
	g->nr_throttled = get_num(o, "nr_throttled");
	if (json_is_string(json_object_get(o, "psi_source")))
		g->psi_src = strdup(json_string_value(json_object_get(o, "psi_source")));
	if (json_is_string(json_object_get(o, "throttle_source")))
		g->thr_src = strdup(json_string_value(json_object_get(o, "throttle_source")));
	json_array_foreach(th, i, e) {
		const char *comm = json_string_value(json_object_get(e, "comm"));
		uint64_t tid, tgid, ns[SLI_MAX] = { 0 }, d[SLI_MAX] = { 0 };
		const json_t *tl = last ? json_object_get(last, "threads") : NULL;
		char key[64];

		get_u64(p, e, "tid", where, &tid);
		get_u64(p, e, "tgid", where, &tgid);
		for (int k = 0; k < SLI_MAX; k++) {
			snprintf(key, sizeof(key), "%s_ns", sli_name(k));
			get_u64(p, e, key, where, &ns[k]);
		}
		/* The same thread's interval figures, when the section has them. */
		for (size_t j = 0; tl && j < json_array_size(tl); j++) {
			uint64_t t2;
			const json_t *e2 = json_array_get(tl, j);

			get_u64(p, e2, "tid", where, &t2);
			for (int k = 0; t2 == tid && k < SLI_MAX; k++) {
				snprintf(key, sizeof(key), "%s_ns", sli_name(k));
				get_u64(p, e2, key, where, &d[k]);
			}
		}
		if (p->ret)
			return p->ret;
		if (tid > UINT32_MAX || tgid > UINT32_MAX)
			return bad(p, "%s.threads[%zu]: tid out of range", where, i);
		if (sli_group__add_thread(g, (uint32_t)tid, (uint32_t)tgid, comm ? comm : "", d))
			return p->ret = -ENOMEM;
		for (size_t j = 0; j < g->nthreads; j++)
			if (g->threads[j].tid == tid)
				memcpy(g->threads[j].ns, ns, sizeof(ns));
	}
	return p->ret;
}

int sli_snapshot_parse(const char *text, size_t len, struct sli **out, char *err, size_t errlen)
{
	struct parse p = { err, errlen, 0 };
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je), *groups, *e;
	struct sli *s = NULL;
	uint64_t v;
	size_t i;

	*out = NULL;
	if (!root || !json_is_object(root)) {
		char shown[SANITIZE_MAX(JSON_ERROR_TEXT_LENGTH)];

		if (!root)
			sanitize_cstr(je.text, shown, sizeof(shown));
		bad(&p, "sli: %s", root ? "not an object" : shown);
		goto out;
	}
	s = sli__new();
	if (!s) {
		p.ret = -ENOMEM;
		goto out;
	}
	json_array_foreach(json_object_get(root, "measured"), i, e) {
		int k = json_is_string(e) ? sli_parse_name(json_string_value(e)) : -1;

		if (k >= 0)
			s->have |= 1u << k;
	}
	get_u64(&p, root, "longsys_ns", "sli", &s->longsys_ns);
	get_u64(&p, root, "nspark", "sli", &v);
	s->nspark = v > SLI_SPARK ? SLI_SPARK : (unsigned)v;
	get_u64(&p, root, "intervals", "sli", &v);
	s->intervals = (unsigned long)v;
	s->start = get_num(root, "start");
	s->end = get_num(root, "end");
	s->dt = get_num(root, "dt");
	if (!isfinite(s->start) || !isfinite(s->end) || !isfinite(s->dt) || s->dt < 0)
		bad(&p, "sli: start, end and dt must be numbers");
	if (json_is_string(json_object_get(root, "notes")))
		sli__set_notes(s, json_string_value(json_object_get(root, "notes")));
	groups = json_object_get(root, "groups");
	if (!p.ret && (!json_is_array(groups) || json_array_size(groups) > MAX_GROUPS))
		bad(&p, "sli.groups: not an array of at most %d groups", MAX_GROUPS);
	json_array_foreach(groups, i, e) {
		if (p.ret || get_group(&p, s, e, i))
			break;
	}
out:
	json_decref(root);
	if (p.ret) {
		if (p.ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		sli__free(s);
		return p.ret;
	}
	*out = s;
	return 0;
}
