/* Unit tests for export/pyroscope_post against a small HTTP server on loopback (a kernel-chosen
 * port): what arrives (path, query, body, Basic or bearer auth, X-Scope-OrgID), retries of 5xx
 * with backoff, refusals not retried and reported, a server down or hung costing no more than
 * the retries or the deadline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "http_server.h"
#include "export/pyroscope_post.h"
#include "util/clock.h"

/* 10 s from now. */
static int64_t soon(void)
{
	return clock_mono_ms() + 10000;
}

static char url[64], tmpdir[64];

static const char *auth_file(const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/auth", tmpdir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* Starts sv and a client of it: url is pre, the port, post (o->url points at url). */
static struct pyro_post *client(struct server *sv, const struct pyro_post_opts *o,
				const char *pre, const char *post)
{
	struct pyro_post *pp = NULL;
	char err[256];

	server_start(sv);
	snprintf(url, sizeof(url), "%s%d%s", pre, sv->port, post);
	CHECK(pyro_post__new(o, &pp, err, sizeof(err)) == 0);
	return pp;
}

TEST_CASE(post_basic_auth_tenant_and_body)
{
	static struct server sv;
	struct pyro_post *pp;
	struct pyro_post_opts o = { url, auth_file("alice:s3cr:et\n"), "team-a", 0, 0, 0 };
	struct pyro_post_stats st;

	pp = client(&sv, &o, "127.0.0.1:", "/"); /* gala-gopher's form */
	CHECK(pyro_post__send(pp, "name=a.cpu%7B%7D&from=1&until=2", "main;work 5\n", 12,
			      soon()) == 0);
	pyro_post__stats(pp, &st);
	CHECK(st.sent == 1 && st.failed == 0 && st.bytes == 12);
	CHECK_STR(sv.line[0], "POST /ingest?name=a.cpu%7B%7D&from=1&until=2 HTTP/1.1");
	CHECK_STR(sv.auth[0], "Basic YWxpY2U6czNjcjpldA=="); /* alice:s3cr:et */
	CHECK_STR(sv.org[0], "team-a");
	CHECK_STR(sv.body[0], "main;work 5\n");
	pyro_post__free(pp);
	server_stop(&sv);
}

TEST_CASE(post_bearer_token)
{
	static struct server sv;
	struct pyro_post *pp;
	struct pyro_post_opts o = { url, auth_file("  tok.en-123  \n"), NULL, 0, 0, 0 };

	pp = client(&sv, &o, "http://127.0.0.1:", "/ingest");
	CHECK(pyro_post__send(pp, "name=a.cpu%7B%7D", "x 1\n", 4, soon()) == 0);
	CHECK_STR(sv.line[0], "POST /ingest?name=a.cpu%7B%7D HTTP/1.1");
	CHECK_STR(sv.auth[0], "Bearer tok.en-123");
	CHECK_STR(sv.org[0], "");
	pyro_post__free(pp);
	server_stop(&sv);
}

TEST_CASE(post_retries_5xx_not_4xx)
{
	static struct server sv = { .codes = { 503, 502, 200, 400 }, .ncodes = 4,
				    .reply = "invalid service name\n" };
	struct pyro_post *pp;
	struct pyro_post_opts o = { url, NULL, NULL, 3, 50, 2000 };
	struct pyro_post_stats st;
	int64_t t0;

	pp = client(&sv, &o, "http://127.0.0.1:", "");
	t0 = clock_mono_ms();
	CHECK(pyro_post__send(pp, "name=a.cpu%7B%7D", "x 1\n", 4, soon()) == 0);
	pyro_post__stats(pp, &st);
	/* Two failures, waits of 50 then 100 ms, then sent. */
	CHECK(st.sent == 1 && st.retried == 2 && st.failed == 0);
	CHECK(clock_mono_ms() - t0 >= 150);
	CHECK(atomic_load(&sv.nreq) == 3);
	/* A refusal is final, and says why. */
	CHECK(pyro_post__send(pp, "name=bad%7B%7D", "x 1\n", 4, soon()) == -EINVAL);
	pyro_post__stats(pp, &st);
	CHECK(st.failed == 1 && st.retried == 2 && atomic_load(&sv.nreq) == 4);
	CHECK(strstr(st.last_error, "(name=bad%7B%7D): HTTP 400: invalid service name") != NULL);
	pyro_post__free(pp);
	server_stop(&sv);
}

TEST_CASE(post_server_down_fails_after_retries)
{
	static struct server sv;
	struct pyro_post *pp;
	struct pyro_post_opts o = { url, NULL, NULL, 2, 20, 500 };
	struct pyro_post_stats st;
	char err[256];
	int64_t t0;

	/* A port nobody listens on: a server started and stopped. */
	server_start(&sv);
	server_stop(&sv);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", sv.port);
	CHECK(pyro_post__new(&o, &pp, err, sizeof(err)) == 0);
	t0 = clock_mono_ms();
	CHECK(pyro_post__send(pp, "name=a.cpu%7B%7D", "x 1\n", 4, soon()) == -EIO);
	CHECK(clock_mono_ms() - t0 >= 60 && clock_mono_ms() - t0 < 2000);
	pyro_post__stats(pp, &st);
	CHECK(st.sent == 0 && st.failed == 1 && st.retried == 2);
	CHECK(strstr(st.last_error, "Couldn't connect") != NULL);
	pyro_post__free(pp);
}

TEST_CASE(post_hung_server_bounded_by_the_deadline)
{
	static struct server sv = { .codes = { -1 }, .ncodes = 1 };
	struct pyro_post *pp;
	struct pyro_post_opts o = { url, NULL, NULL, 3, 0, 20000 };
	struct pyro_post_stats st;
	int64_t t0;

	pp = client(&sv, &o, "http://127.0.0.1:", "");
	/* The server never answers: 300 ms, not the 20 s timeout (nor 4 of them). */
	t0 = clock_mono_ms();
	CHECK(pyro_post__send(pp, "name=a.cpu%7B%7D", "x 1\n", 4, t0 + 300) == -ETIMEDOUT);
	CHECK(clock_mono_ms() - t0 < 1500);
	pyro_post__stats(pp, &st);
	CHECK(st.sent == 0 && st.failed == 1);
	CHECK(strstr(st.last_error, "out of time") != NULL);
	pyro_post__free(pp);
	server_stop(&sv);
}

TEST_CASE(post_bad_inputs_one_line)
{
	struct pyro_post *pp;
	struct pyro_post_opts o = { "ftp://x", NULL, NULL, 0, 0, 0 };
	char err[256];

	CHECK(pyro_post__new(&o, &pp, err, sizeof(err)) == -EINVAL && pp == NULL);
	CHECK_STR(err, "--pyroscope ftp://x: not an http:// or https:// URL");
	o.url = "http://h:1";
	o.auth_file = auth_file("a\nb\n");
	CHECK(pyro_post__new(&o, &pp, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, ": more than one line, or control characters") != NULL);
	o.auth_file = "/nonexistent/auth";
	CHECK(pyro_post__new(&o, &pp, err, sizeof(err)) == -ENOENT);
	CHECK_STR(err, "--pyroscope-auth /nonexistent/auth: No such file or directory");
	o.auth_file = NULL;
	o.tenant = "a\r\nX: y";
	CHECK(pyro_post__new(&o, &pp, err, sizeof(err)) == -EINVAL);
	pyro_post__free(NULL);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gt-pyropost.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(post_basic_auth_tenant_and_body);
	RUN(post_bearer_token);
	RUN(post_retries_5xx_not_4xx);
	RUN(post_server_down_fails_after_retries);
	RUN(post_hung_server_bounded_by_the_deadline);
	RUN(post_bad_inputs_one_line);
	char path[128];

	snprintf(path, sizeof(path), "%s/auth", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	HARNESS_EXIT();
}
