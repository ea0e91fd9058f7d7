/* Pyroscope ingest requests: see pyroscope.h. */
#include "pyroscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "model/group.h"
#include "model/sanitize.h"
#include "model/split.h"

/* Pyroscope's /ingest turns the name's last part into its profile type; an unknown one is
 * refused ("unknown profile type"). Off-CPU time is time blocked: the block profile's delay
 * (nanoseconds); a page fault is an allocation event (a page), counted as alloc_objects. */
static const struct pyro_type types[VALUE_KIND_MAX] = {
	[VALUE_SAMPLES] = { "cpu", "samples", "sum", 1, true },
	[VALUE_NANOSECONDS] = { "block_duration", "lock_nanoseconds", "sum", 1, false },
	[VALUE_MICROSECONDS] = { "block_duration", "lock_nanoseconds", "sum", 1000, false },
	[VALUE_BYTES] = { "alloc_space", "bytes", "sum", 1, false },
	[VALUE_FAULTS] = { "alloc_objects", "objects", "sum", 1, false },
};

const struct pyro_type *pyro_type_of(enum value_kind kind)
{
	return (unsigned)kind < VALUE_KIND_MAX && types[kind].name ? &types[kind] : NULL;
}

static bool app_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/';
}

bool pyro_app_valid(const char *app)
{
	size_t n = app ? strlen(app) : 0;

	if (!n || n > 200 || app[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!app_char(app[i]))
			return false;
	return true;
}

/* Appends label k=v to buf at *at (the grammar's separators and blanks at the ends cleaned
 * out of v); false when it does not fit. */
static bool put_label(char *buf, size_t cap, size_t *at, bool *first, const char *k, const char *v)
{
	size_t n = v ? strlen(v) : 0, a = 0, b, klen = strlen(k);
	char clean[SANITIZE_MAX(PYRO_VALUE_MAX) + 1];

	if (n > PYRO_VALUE_MAX)
		n = PYRO_VALUE_MAX;
	n = n ? sanitize_text(v, n, clean) : 0;
	while (n > PYRO_VALUE_MAX) /* cut at a character boundary */
		while ((clean[--n] & 0xc0) == 0x80)
			;
	for (size_t i = 0; i < n; i++)
		if (clean[i] == ',' || clean[i] == '{' || clean[i] == '}' || clean[i] == '=')
			clean[i] = '_';
	while (a < n && clean[a] == ' ')
		a++;
	b = n;
	while (b > a && clean[b - 1] == ' ')
		b--;
	if (a == b)
		return true;
	if (*at + klen + (b - a) + 3 > cap)
		return false;
	if (!*first)
		buf[(*at)++] = ',';
	*first = false;
	memcpy(buf + *at, k, klen);
	*at += klen;
	buf[(*at)++] = '=';
	memcpy(buf + *at, clean + a, b - a);
	*at += b - a;
	return true;
}

int pyro_name(char *buf, size_t cap, const char *app, const char *type,
	      const struct pyro_labels *l)
{
	char pid[16] = "";
	bool first = true;
	int n = snprintf(buf, cap, "%s.%s{", app, type);
	size_t at;

	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	at = (size_t)n;
	if (l->pid)
		snprintf(pid, sizeof(pid), "%" PRIu32, l->pid);
	if (!put_label(buf, cap, &at, &first, "service_name", l->service_name) ||
	    !put_label(buf, cap, &at, &first, "hostname", l->hostname) ||
	    !put_label(buf, cap, &at, &first, "pid", pid) ||
	    !put_label(buf, cap, &at, &first, "container_id", l->container_id) ||
	    !put_label(buf, cap, &at, &first, "pod", l->pod) || at + 2 > cap)
		return -ENOSPC;
	buf[at++] = '}';
	buf[at] = '\0';
	return (int)at;
}

/* Appends s percent-encoded (RFC 3986 unreserved characters kept). */
static bool put_escaped(char *buf, size_t cap, size_t *at, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';

		if (*at + (plain ? 1 : 3) >= cap)
			return false;
		if (plain) {
			buf[(*at)++] = (char)c;
		} else {
			buf[(*at)++] = '%';
			buf[(*at)++] = hex[c >> 4];
			buf[(*at)++] = hex[c & 15];
		}
	}
	buf[*at] = '\0';
	return true;
}

static bool put_param(char *buf, size_t cap, size_t *at, const char *k, const char *v)
{
	int n = snprintf(buf + *at, cap - *at, "%s%s=", *at ? "&" : "", k);

	if (n < 0 || (size_t)n >= cap - *at)
		return false;
	*at += (size_t)n;
	return put_escaped(buf, cap, at, v);
}

int pyro_query_str(char *buf, size_t cap, const struct pyro_query *q)
{
	char from[24], until[24], rate[16];
	size_t at = 0;

	if (!cap)
		return -ENOSPC;
	buf[0] = '\0';
	snprintf(from, sizeof(from), "%" PRIu64, q->from);
	snprintf(until, sizeof(until), "%" PRIu64, q->until);
	snprintf(rate, sizeof(rate), "%u", q->sample_rate);
	if (!put_param(buf, cap, &at, "name", q->name) ||
	    !put_param(buf, cap, &at, "from", from) || !put_param(buf, cap, &at, "until", until) ||
	    (q->type->sampled && q->sample_rate && !put_param(buf, cap, &at, "sampleRate", rate)) ||
	    !put_param(buf, cap, &at, "spyName", q->spy_name ? q->spy_name : "ebpfspy") ||
	    !put_param(buf, cap, &at, "units", q->type->units) ||
	    !put_param(buf, cap, &at, "aggregationType", q->type->aggregation))
		return -ENOSPC;
	return (int)at;
}

/* Moves line[0..len) (stack, ' ', count) to out (at or before line), cut to PYRO_LINE_MAX at a frame boundary
 * with "[truncated]" as its last frame; returns the bytes written. */
static size_t cut_line(const char *line, size_t len, char *out)
{
	static const char mark[] = ";[truncated]";
	const char *count = memrchr(line, ' ', len);
	size_t clen = count ? (size_t)(line + len - count) : 0, keep;

	if (len <= PYRO_LINE_MAX || !count || clen > 64) {
		memmove(out, line, len);
		return len;
	}
	keep = PYRO_LINE_MAX - clen - (sizeof(mark) - 1);
	while (keep && line[keep] != ';')
		keep--;
	memmove(out, line, keep);
	memcpy(out + keep, keep ? mark : mark + 1, sizeof(mark) - (keep ? 1 : 2));
	keep += sizeof(mark) - (keep ? 1 : 2);
	memmove(out + keep, count, clen);
	return keep + clen;
}

int pyro_body(const struct profile *p, double scale, char **text, size_t *len)
{
	struct profile *copy = NULL;
	char *raw = NULL, *out;
	size_t rlen = 0, at = 0;
	FILE *f;
	int err;

	*text = NULL;
	*len = 0;
	if (scale != 1) {
		copy = profile__new(profile__frames(p), profile__kind(p), false);
		if (!copy || profile__merge(copy, p)) {
			profile__free(copy);
			return -ENOMEM;
		}
		profile__scale(copy, scale);
		p = copy;
	}
	f = open_memstream(&raw, &rlen);
	if (!f) {
		profile__free(copy);
		return -ENOMEM;
	}
	err = folded_write(f, p);
	if (fclose(f) && !err)
		err = -ENOMEM;
	profile__free(copy);
	if (err) {
		free(raw);
		return err == -EIO ? -ENOMEM : err;
	}
	out = raw; /* lines only get shorter: cut in place */
	for (size_t i = 0; i < rlen;) {
		const char *nl = memchr(raw + i, '\n', rlen - i);
		size_t l;

		if (!nl) /* folded_write ends every line */
			break;
		l = (size_t)(nl - (raw + i));
		at += cut_line(raw + i, l, out + at);
		out[at++] = '\n';
		i += l + 1;
	}
	out[at] = '\0';
	*text = out;
	*len = at;
	return 0;
}

/* A series: its part of the profile and its labels. */
struct series {
	struct profile *p;
	double total;
	char service[256], pod[256], container_id[128];
	uint32_t pid;
};

/* Name of frame id without its "[Pod]"/"[Con]" prefix of plen bytes. */
static void frame_label(struct frames *ft, uint32_t id, size_t plen, char *buf, size_t cap)
{
	const char *name = frames__name(ft, id);
	size_t len = frames__name_len(ft, id);

	buf[0] = '\0';
	if (len > plen)
		snprintf(buf, cap, "%.*s", (int)(len - plen), name + plen);
}

static void series_labels(struct series *s, struct frames *ft, const struct profile_part *pt,
			  const struct pyro_opts *o)
{
	uint32_t pid = 0;

	s->service[0] = s->pod[0] = s->container_id[0] = '\0';
	if (pt->pod)
		frame_label(ft, pt->pod, 5, s->pod, sizeof(s->pod));
	if (pt->process) {
		const char *name = frames__name(ft, pt->process);
		size_t len = frames__name_len(ft, pt->process);
		size_t skip = group_process_parse(name, len, &pid);

		snprintf(s->service, sizeof(s->service), "%.*s", (int)(len - skip), name + skip);
	}
	if (pid && o->ident)
		o->ident(o->ident_ctx, pid, s->container_id, sizeof(s->container_id));
	if (pt->container) /* the container's processes share the series: no pid */
		frame_label(ft, pt->container, 5, s->service, sizeof(s->service));
	else
		s->pid = pid;
	if (!s->service[0])
		snprintf(s->service, sizeof(s->service), "%s", o->app);
}

static int by_total(const void *a, const void *b)
{
	const struct series *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->service, y->service);
}

static int make_request(const struct series *s, const struct pyro_opts *o,
			const struct pyro_type *type, uint64_t from, uint64_t until,
			struct pyro_request *r)
{
	struct pyro_labels l = { s->service, o->hostname, s->container_id, s->pod, s->pid };
	char name[4096], query[16384];
	struct pyro_query q = { name, from, until, o->freq, NULL, type };
	int err;

	if (pyro_name(name, sizeof(name), o->app, type->name, &l) < 0 ||
	    pyro_query_str(query, sizeof(query), &q) < 0)
		return -ENOMEM; /* bounded inputs: cannot happen */
	r->query = strdup(query);
	if (!r->query)
		return -ENOMEM;
	r->total = s->total;
	err = pyro_body(s->p, type->scale, &r->body, &r->len);
	if (err) {
		free(r->query);
		r->query = NULL;
	}
	return err;
}

int pyro_requests(const struct profile *p, const struct pyro_opts *o, uint64_t from,
		  uint64_t until, struct pyro_request **reqs, size_t *n, size_t *merged)
{
	const struct pyro_type *type = pyro_type_of(profile__kind(p));
	struct split_opts so = { .by_container = true, .strip_identity = true, .one_unkeyed = true };
	size_t max = o->max_series ? o->max_series : 64, np = 0, ns = 0, nr = 0, nmerged = 0;
	struct profile_part *parts = NULL;
	struct series *s = NULL;
	struct pyro_request *r = NULL;
	int err;

	*reqs = NULL;
	*n = 0;
	if (!type)
		return -EINVAL;
	err = profile_split(p, &so, &parts, &np);
	if (err)
		return err;
	s = calloc(np ? np : 1, sizeof(*s));
	if (!s) {
		profile_parts_free(parts, np);
		return -ENOMEM;
	}
	for (size_t i = 0; i < np; i++) {
		double t = profile__total(parts[i].p);

		if (t <= 0)
			continue;
		series_labels(&s[ns], profile__frames(p), &parts[i], o);
		s[ns].p = parts[i].p;
		s[ns++].total = t;
	}
	qsort(s, ns, sizeof(*s), by_total);
	if (ns > max) {
		/* The lightest into one: the last kept slot becomes the merge of the rest. */
		struct profile *rest = profile__new(profile__frames(p), profile__kind(p), false);

		err = rest ? 0 : -ENOMEM;
		for (size_t i = max - 1; i < ns && !err; i++)
			err = profile__merge(rest, s[i].p);
		if (err) {
			profile__free(rest);
			goto out;
		}
		nmerged = ns - (max - 1);
		s[max - 1] = (struct series){ .p = rest, .total = profile__total(rest) };
		snprintf(s[max - 1].service, sizeof(s[max - 1].service), "%s-other", o->app);
		ns = max;
	}
	r = calloc(ns ? ns : 1, sizeof(*r));
	err = r ? 0 : -ENOMEM;
	for (; nr < ns && !err; nr++)
		err = make_request(&s[nr], o, type, from, until, &r[nr]);
	if (nmerged)
		profile__free(s[max - 1].p);
	if (err) {
		pyro_requests_free(r, nr);
		r = NULL;
		nr = 0;
	}
out:
	free(s);
	profile_parts_free(parts, np);
	*reqs = r;
	*n = nr;
	if (merged)
		*merged = err ? 0 : nmerged;
	return err;
}

void pyro_requests_free(struct pyro_request *reqs, size_t n)
{
	if (!reqs)
		return;
	for (size_t i = 0; i < n; i++) {
		free(reqs[i].query);
		free(reqs[i].body);
	}
	free(reqs);
}
