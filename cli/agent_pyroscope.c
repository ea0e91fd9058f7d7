/* The agent's Pyroscope sink (--pyroscope URL): every period's profiles posted to /ingest, one
 * series per container (its processes together) or per process outside containers, at most
 * --pyroscope-max-series per stack type (the lightest merged into APP-other), named and
 * formatted by export/pyroscope.h, posted by export/pyroscope_post.h within the period. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_sink.h"
#include "export/pyroscope.h"
#include "export/pyroscope_post.h"
#include "util/clock.h"

struct pyro_sink {
	const char *url, *auth, *tenant;
	char app[201];
	long max_series, retries, timeout_s;
	struct pyro_post *pp;
	uint64_t merged; /* series merged into APP-other so far */
	bool down;	 /* the last batch found the server down or hung */
};

/* A series: the profiles of one container, or one process. */
struct series {
	const struct agent_ident *who;
	size_t first, n; /* its profiles in the sorted index */
	double total;
	bool other;	 /* the merge of the lightest */
};

static const struct option options[] = {
	{ "pyroscope", required_argument, NULL, 0 },
	{ "pyroscope-app", required_argument, NULL, 0 },
	{ "pyroscope-auth", required_argument, NULL, 0 },
	{ "pyroscope-tenant", required_argument, NULL, 0 },
	{ "pyroscope-max-series", required_argument, NULL, 0 },
	{ "pyroscope-retries", required_argument, NULL, 0 },
	{ "pyroscope-timeout", required_argument, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};

static void *create(void)
{
	struct pyro_sink *s = calloc(1, sizeof(*s));

	if (s) {
		snprintf(s->app, sizeof(s->app), "galatop");
		s->max_series = 64;
		s->retries = 3;
		s->timeout_s = 10;
	}
	return s;
}

static int number(const char *arg, long min, long max, long *out, char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		snprintf(err, errlen, "bad value '%s' (%ld to %ld)", arg, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int option(void *st, const char *name, const char *arg, char *err, size_t errlen)
{
	struct pyro_sink *s = st;

	if (!strcmp(name, "pyroscope")) {
		s->url = arg;
	} else if (!strcmp(name, "pyroscope-app")) {
		if (!pyro_app_valid(arg)) {
			snprintf(err, errlen, "bad name '%s' (1 to 200 of A-Z a-z 0-9 _ . - /, "
				 "not ending in '.')", arg);
			return -EINVAL;
		}
		snprintf(s->app, sizeof(s->app), "%s", arg);
	} else if (!strcmp(name, "pyroscope-auth")) {
		s->auth = arg;
	} else if (!strcmp(name, "pyroscope-tenant")) {
		s->tenant = arg;
	} else if (!strcmp(name, "pyroscope-max-series")) {
		return number(arg, 1, 100000, &s->max_series, err, errlen);
	} else if (!strcmp(name, "pyroscope-retries")) {
		return number(arg, 0, 100, &s->retries, err, errlen);
	} else if (!strcmp(name, "pyroscope-timeout")) {
		return number(arg, 1, 3600, &s->timeout_s, err, errlen);
	}
	return 0;
}

static bool enabled(const void *st)
{
	return ((const struct pyro_sink *)st)->url != NULL;
}

static unsigned wants(const void *st)
{
	return AGENT_WANTS_PROFILES;
}

static int start(void *st, char *err, size_t errlen)
{
	struct pyro_sink *s = st;
	struct pyro_post_opts o = { s->url, s->auth, s->tenant, (unsigned)s->retries, 0,
				    (unsigned)s->timeout_s * 1000 };

	return pyro_post__new(&o, &s->pp, err, errlen);
}

/* Profiles in series order: by type, then container (id), then process. */
static int by_series(const void *x, const void *y, void *batch)
{
	const struct agent_batch *bt = batch;
	const struct agent_profile *a = &bt->profiles[*(const size_t *)x];
	const struct agent_profile *b = &bt->profiles[*(const size_t *)y];
	int c;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	c = strcmp(a->who.container_id, b->who.container_id);
	if (c || a->who.container_id[0])
		return c;
	if (a->who.pid != b->who.pid)
		return a->who.pid < b->who.pid ? -1 : 1;
	return strcmp(a->who.comm, b->who.comm);
}

static bool same_series(const struct agent_ident *a, const struct agent_ident *b)
{
	if (a->container_id[0] || b->container_id[0])
		return !strcmp(a->container_id, b->container_id);
	return a->pid == b->pid && !strcmp(a->comm, b->comm);
}

static int by_total(const void *x, const void *y)
{
	const struct series *a = x, *b = y;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The series' service name: the container's name (or id), the command, or the app. */
static void service_name(const struct pyro_sink *s, const struct series *r, char *buf, size_t cap)
{
	const struct agent_ident *w = r->who;

	if (r->other)
		snprintf(buf, cap, "%s-other", s->app);
	else if (w->container_id[0])
		snprintf(buf, cap, "%s", w->container[0] ? w->container : w->container_id);
	else
		snprintf(buf, cap, "%s", w->comm[0] ? w->comm : s->app);
}

/* Posts one series: 0, or the client's -errno. */
static int post_series(struct pyro_sink *s, const struct agent_batch *b, const size_t *idx,
		       const struct series *r, const struct series *rest, size_t nrest,
		       int64_t deadline)
{
	const struct agent_profile *p0 = &b->profiles[idx[r->first]];
	const struct pyro_type *type = pyro_type_of(p0->kind, stack_types[p0->type].can_go_down);
	const struct agent_ident *w = r->who;
	char service[256], name[4096], query[16384];
	struct pyro_labels l = { service, b->hostname, NULL, NULL, 0 };
	struct pyro_query q = { name, (uint64_t)floor(b->from), (uint64_t)ceil(b->until),
				b->sample_rate, NULL, type };
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int ret = 0;

	if (!type)
		return 0;
	service_name(s, r, service, sizeof(service));
	if (!r->other) {
		l.container_id = w->container_id;
		l.pod = w->pod;
		l.pid = w->container_id[0] ? 0 : w->pid;
	}
	if (pyro_name(name, sizeof(name), s->app, type->name, &l) < 0 ||
	    pyro_query_str(query, sizeof(query), &q) < 0 || !(f = open_memstream(&body, &len)))
		return -ENOMEM;
	/* The merged series holds its own and the rest's profiles. */
	for (size_t k = 0; k <= nrest && !ret; k++) {
		const struct series *m = k ? &rest[k - 1] : r;

		for (size_t i = m->first; i < m->first + m->n && !ret; i++) {
			const struct agent_profile *p = &b->profiles[idx[i]];

			ret = pyro_body_write(f, p->folded, p->len, type->scale);
		}
	}
	if (fclose(f) || ret) {
		free(body);
		return -ENOMEM;
	}
	if (len)
		ret = pyro_post__send(s->pp, query, body, len, deadline);
	free(body);
	return ret;
}

/* The series of type t (idx[from, to)) posted, heaviest first; returns series not sent. */
static size_t send_type(struct pyro_sink *s, const struct agent_batch *b, const size_t *idx,
			size_t from, size_t to, int64_t deadline, bool *down)
{
	struct series *r = calloc(to - from, sizeof(*r));
	size_t n = 0, max = (size_t)s->max_series, failed = 0, total;

	if (!r)
		return to - from;
	for (size_t i = from; i < to; i++) {
		const struct agent_profile *p = &b->profiles[idx[i]];

		if (n && same_series(r[n - 1].who, &p->who)) {
			r[n - 1].n++;
			r[n - 1].total += p->total;
		} else {
			r[n++] = (struct series){ &p->who, i, 1, p->total, false };
		}
	}
	qsort(r, n, sizeof(*r), by_total);
	total = n;
	if (n > max) {
		agent_log(AGENT_LOG_WARNING, "pyroscope: %zu %s series this period, over "
			  "--pyroscope-max-series %zu: the %zu lightest go into %s-other", n,
			  stack_type_name(b->profiles[idx[from]].type), max, n - max + 1, s->app);
		s->merged += n - max + 1;
		r[max - 1].other = true;
		n = max;
	}
	for (size_t i = 0; i < n; i++) {
		int ret = *down ? -EIO
				: post_series(s, b, idx, &r[i], r[i].other ? &r[i + 1] : NULL,
					      r[i].other ? total - max : 0, deadline);

		/* A server down or out of time is not asked again this period. */
		if (ret == -EIO || ret == -ETIMEDOUT)
			*down = true;
		else if (!ret)
			s->down = false;
		failed += ret != 0;
	}
	free(r);
	return failed;
}

static int send_batch(void *st, const struct agent_batch *b, char *err, size_t errlen)
{
	struct pyro_sink *s = st;
	double period = b->until - b->from;
	/* Within a period (5 to 30 s): by then the next batch is due. A server that was down or
	 * hung gets 2 s: batches queued behind a dead server drain quickly at the end. */
	int64_t deadline = clock_mono_ms() + (s->down	     ? 2000
					      : period < 5  ? 5000
					      : period > 30 ? 30000
							    : (int64_t)(1000 * period));
	size_t *idx = malloc((b->nprofiles ? b->nprofiles : 1) * sizeof(*idx)), failed = 0;
	bool down = false;

	if (!idx) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->nprofiles; i++)
		idx[i] = i;
	qsort_r(idx, b->nprofiles, sizeof(*idx), by_series, (void *)b);
	for (size_t i = 0; i < b->nprofiles;) {
		size_t j = i + 1;

		while (j < b->nprofiles && b->profiles[idx[j]].type == b->profiles[idx[i]].type)
			j++;
		failed += send_type(s, b, idx, i, j, deadline, &down);
		i = j;
	}
	free(idx);
	if (down)
		s->down = true;
	if (failed) {
		struct pyro_post_stats ps;

		pyro_post__stats(s->pp, &ps);
		snprintf(err, errlen, "%zu series not sent this period; %s", failed,
			 ps.last_error);
		return -EIO;
	}
	return 0;
}

static void stats(void *st, struct agent_sink_stats *out)
{
	struct pyro_sink *s = st;
	struct pyro_post_stats ps;

	if (!s->pp)
		return;
	pyro_post__stats(s->pp, &ps);
	out->sent = ps.sent;
	out->failed = ps.failed;
}

static void destroy(void *st)
{
	struct pyro_sink *s = st;
	struct pyro_post_stats ps;

	if (!s)
		return;
	if (s->pp) {
		pyro_post__stats(s->pp, &ps);
		agent_log(AGENT_LOG_INFO, "pyroscope: %llu series sent (%llu bytes), %llu failed, "
			  "%llu tries again, %llu merged into %s-other",
			  (unsigned long long)ps.sent, (unsigned long long)ps.bytes,
			  (unsigned long long)ps.failed, (unsigned long long)ps.retried,
			  (unsigned long long)s->merged, s->app);
	}
	pyro_post__free(s->pp);
	free(s);
}

const struct agent_sink_ops agent_pyroscope_sink = {
	.name = "pyroscope",
	.help = "Pyroscope (docs/agent.md):\n"
		"  --pyroscope URL   post each period's profiles to URL/ingest (http[s]://host:port)\n"
		"  --pyroscope-app NAME  the names' start (default galatop): NAME.cpu{...}\n"
		"  --pyroscope-auth FILE  \"user:password\" (Basic) or a token (Bearer) in FILE\n"
		"  --pyroscope-tenant ID  X-Scope-OrgID header (multi-tenant Pyroscope)\n"
		"  --pyroscope-max-series N  series per stack type and period (default 64)\n"
		"  --pyroscope-retries N  tries again after errors (default 3)\n"
		"  --pyroscope-timeout S  one try's limit in seconds (default 10)\n",
	.options = options,
	.create = create,
	.option = option,
	.enabled = enabled,
	.wants = wants,
	.start = start,
	.send = send_batch,
	.stats = stats,
	.destroy = destroy,
};
