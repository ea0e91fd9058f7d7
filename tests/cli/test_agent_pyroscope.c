/* Unit tests for cli/agent_pyroscope (the agent's Pyroscope sink) against a loopback HTTP
 * server: a batch's profiles become one series per container (its processes together) or per
 * process, each stack type under its own Pyroscope type, at most --pyroscope-max-series of
 * them (the lightest merged into APP-other); a refusing server fails the batch with its
 * reason. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "http_server.h"
#include "cli/agent_sink.h"

extern const struct agent_sink_ops agent_pyroscope_sink;

static const struct agent_sink_ops *ops = &agent_pyroscope_sink;

static void profile(struct agent_batch *b, enum stack_type t, enum value_kind k, uint32_t pid,
		    const char *comm, const char *cid, const char *con, const char *pod,
		    const char *folded, double total)
{
	struct agent_profile *p = &b->profiles[b->nprofiles++];

	memset(p, 0, sizeof(*p));
	p->type = t;
	p->kind = k;
	p->who.pid = pid;
	snprintf(p->who.comm, sizeof(p->who.comm), "%s", comm);
	snprintf(p->who.container_id, sizeof(p->who.container_id), "%s", cid);
	snprintf(p->who.container, sizeof(p->who.container), "%s", con);
	snprintf(p->who.pod, sizeof(p->who.pod), "%s", pod);
	p->folded = strdup(folded);
	p->len = strlen(folded);
	p->total = total;
}

/* nginx and redis on the host, two php processes of container web (pod shop); nginx's off-CPU
 * time too. */
static struct agent_batch *batch(void)
{
	struct agent_batch *b = agent_batch__new();

	b->profiles = calloc(8, sizeof(*b->profiles));
	b->from = 100.5;
	b->until = 102.2;
	b->hostname = "box";
	b->sample_rate = 99;
	profile(b, STACK_ONCPU, VALUE_SAMPLES, 10, "nginx", "", "", "", "main;work 5\n", 5);
	profile(b, STACK_ONCPU, VALUE_SAMPLES, 30, "php", "c0ffee", "web", "shop", "run;a 4\n", 4);
	profile(b, STACK_OFFCPU, VALUE_MICROSECONDS, 10, "nginx", "", "", "", "main;nap 2\n", 2);
	profile(b, STACK_ONCPU, VALUE_SAMPLES, 11, "redis", "", "", "", "loop 1\n", 1);
	profile(b, STACK_ONCPU, VALUE_SAMPLES, 31, "php", "c0ffee", "web", "shop", "run;b 3\n", 3);
	return b;
}

/* The sink of the server's URL with the options given as name, value pairs (NULL ends). */
static void *sink(struct server *sv, ...)
{
	static char url[64]; /* the sink keeps the option's pointer, as it keeps argv's */
	char err[256];
	void *st = ops->create();
	va_list ap;
	const char *k;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", sv->port);
	CHECK(ops->option(st, "pyroscope", url, err, sizeof(err)) == 0);
	va_start(ap, sv);
	while ((k = va_arg(ap, const char *)))
		CHECK(ops->option(st, k, va_arg(ap, const char *), err, sizeof(err)) == 0);
	va_end(ap);
	CHECK(ops->enabled(st) && ops->wants(st) == AGENT_WANTS_PROFILES);
	CHECK(ops->start(st, err, sizeof(err)) == 0);
	return st;
}

/* The request whose line holds s, or NULL. */
static int req_with(struct server *sv, const char *s)
{
	for (int i = 0; i < atomic_load(&sv->nreq); i++)
		if (strstr(sv->line[i], s))
			return i;
	return -1;
}

TEST_CASE(pyroscope_sink_series_per_container_and_process)
{
	static struct server sv;
	struct agent_batch *b = batch();
	char err[256] = "";
	void *st;
	int web, ngx, red, off;

	server_start(&sv);
	st = sink(&sv, (const char *)NULL);
	CHECK(ops->send(st, b, err, sizeof(err)) == 0);
	CHECK(atomic_load(&sv.nreq) == 4);
	web = req_with(&sv, "galatop.cpu%7Bservice_name%3Dweb%2Chostname%3Dbox%2C"
			    "container_id%3Dc0ffee%2Cpod%3Dshop%7D&from=100&until=103&sampleRate=99&");
	ngx = req_with(&sv, "galatop.cpu%7Bservice_name%3Dnginx%2Chostname%3Dbox%2Cpid%3D10%7D");
	red = req_with(&sv, "galatop.cpu%7Bservice_name%3Dredis%2Chostname%3Dbox%2Cpid%3D11%7D");
	off = req_with(&sv, "galatop.block_duration%7Bservice_name%3Dnginx%2Chostname%3Dbox%2C"
			    "pid%3D10%7D&from=100&until=103&spyName");
	CHECK(web >= 0 && ngx >= 0 && red >= 0 && off >= 0);
	if (web >= 0 && ngx >= 0 && off >= 0) {
		/* The container's two processes in one body; the heaviest series first. */
		CHECK_STR(sv.body[web], "run;a 4\nrun;b 3\n");
		CHECK(web < ngx && ngx < red);
		CHECK_STR(sv.body[off], "main;nap 2000\n");
	}
	ops->destroy(st);
	server_stop(&sv);
	agent_batch__put(b);
}

TEST_CASE(pyroscope_sink_bounded_series)
{
	static struct server sv;
	struct agent_batch *b = batch();
	char err[256] = "";
	void *st;
	int web, other;

	server_start(&sv);
	st = sink(&sv, "pyroscope-max-series", "2", "pyroscope-app", "shop/web", (const char *)NULL);
	CHECK(ops->send(st, b, err, sizeof(err)) == 0);
	/* cpu: web, and nginx with redis merged; off-CPU: nginx. */
	CHECK(atomic_load(&sv.nreq) == 3);
	web = req_with(&sv, "name=shop%2Fweb.cpu%7Bservice_name%3Dweb%2C");
	other = req_with(&sv, "name=shop%2Fweb.cpu%7Bservice_name%3Dshop%2Fweb-other%2C"
			      "hostname%3Dbox%7D&");
	CHECK(web >= 0 && other >= 0);
	if (other >= 0)
		CHECK_STR(sv.body[other], "main;work 5\nloop 1\n");
	ops->destroy(st);
	server_stop(&sv);
	agent_batch__put(b);
}

TEST_CASE(pyroscope_sink_refused_batch_fails_with_reason)
{
	static struct server sv = { .codes = { 400, 400, 400, 400 }, .ncodes = 4,
				    .reply = "invalid labels" };
	struct agent_batch *b = batch();
	struct agent_sink_stats own = { 0 };
	char err[256] = "";
	void *st;

	server_start(&sv);
	st = sink(&sv, (const char *)NULL);
	CHECK(ops->send(st, b, err, sizeof(err)) == -EIO);
	CHECK(strstr(err, "4 series not sent this period; pyroscope: ") == err);
	CHECK(strstr(err, ": HTTP 400: invalid labels") != NULL);
	ops->stats(st, &own);
	CHECK(own.sent == 0 && own.failed == 4);
	ops->destroy(st);
	server_stop(&sv);
	agent_batch__put(b);
}

TEST_CASE(pyroscope_sink_options)
{
	char err[256];
	void *st = ops->create();

	CHECK(!ops->enabled(st));
	CHECK(ops->option(st, "pyroscope-app", "gala gopher", err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "bad name 'gala gopher'") == err);
	CHECK(ops->option(st, "pyroscope-max-series", "0", err, sizeof(err)) == -EINVAL);
	CHECK(ops->option(st, "pyroscope-retries", "x", err, sizeof(err)) == -EINVAL);
	ops->destroy(st);
	ops->destroy(NULL);
}

int main(void)
{
	RUN(pyroscope_sink_series_per_container_and_process);
	RUN(pyroscope_sink_bounded_series);
	RUN(pyroscope_sink_refused_batch_fails_with_reason);
	RUN(pyroscope_sink_options);
	HARNESS_EXIT();
}
