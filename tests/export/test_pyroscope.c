/* Unit tests for export/pyroscope: names Pyroscope's /ingest parses back to the series'
 * labels with a profile type it knows, percent-encoded queries, folded bodies with integer
 * values in the type's unit, one series per container or process, bounded. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "profile_fixture.h"
#include "export/pyroscope.h"
#include "model/frames.h"
#include "model/strtab.h"

TEST_CASE(pyro_types_are_ones_ingest_knows)
{
	/* Pyroscope's ingest adapter (convertMetadata) refuses other suffixes. */
	CHECK_STR(pyro_type_of(VALUE_SAMPLES)->name, "cpu");
	CHECK(pyro_type_of(VALUE_SAMPLES)->sampled);
	CHECK_STR(pyro_type_of(VALUE_MICROSECONDS)->name, "block_duration");
	CHECK_NUM(pyro_type_of(VALUE_MICROSECONDS)->scale, 1000);
	CHECK_STR(pyro_type_of(VALUE_FAULTS)->name, "alloc_objects");
	CHECK_STR(pyro_type_of(VALUE_BYTES)->name, "alloc_space");
	CHECK(pyro_type_of(VALUE_KIND_MAX) == NULL);
}

TEST_CASE(pyro_app_names)
{
	CHECK(pyro_app_valid("galatop"));
	CHECK(pyro_app_valid("team/web-1.prod"));
	CHECK(!pyro_app_valid(""));
	CHECK(!pyro_app_valid(NULL));
	CHECK(!pyro_app_valid("a b"));
	CHECK(!pyro_app_valid("app{x=1}"));
	CHECK(!pyro_app_valid("app."));
}

TEST_CASE(pyro_name_labels_cleaned)
{
	char buf[512];
	struct pyro_labels l = { "web,1", "host}a", "abc", " shop ", 42 };

	CHECK(pyro_name(buf, sizeof(buf), "galatop", "cpu", &l) > 0);
	CHECK_STR(buf, "galatop.cpu{service_name=web_1,hostname=host_a,pid=42,container_id=abc,"
		       "pod=shop}");
	l = (struct pyro_labels){ "nginx", "h", NULL, "", 0 };
	CHECK(pyro_name(buf, sizeof(buf), "galatop", "block_duration", &l) > 0);
	CHECK_STR(buf, "galatop.block_duration{service_name=nginx,hostname=h}");
	/* Control bytes and invalid UTF-8 become U+FFFD; too small a buffer is an error. */
	l = (struct pyro_labels){ "a\nb\xff", NULL, NULL, NULL, 0 };
	CHECK(pyro_name(buf, sizeof(buf), "x", "cpu", &l) > 0);
	CHECK_STR(buf, "x.cpu{service_name=a\xef\xbf\xbd" "b\xef\xbf\xbd}");
	CHECK(pyro_name(buf, 12, "galatop", "cpu", &l) == -ENOSPC);
}

TEST_CASE(pyro_query_encoded)
{
	char buf[1024];
	struct pyro_query q = { "galatop.cpu{service_name=a b,pid=1}", 1700000000, 1700000030, 99,
				NULL, pyro_type_of(VALUE_SAMPLES) };

	CHECK(pyro_query_str(buf, sizeof(buf), &q) > 0);
	CHECK_STR(buf, "name=galatop.cpu%7Bservice_name%3Da%20b%2Cpid%3D1%7D&from=1700000000"
		       "&until=1700000030&sampleRate=99&spyName=ebpfspy&units=samples"
		       "&aggregationType=sum");
	/* Off-CPU: no sampleRate (not a sampled type). */
	q.type = pyro_type_of(VALUE_MICROSECONDS);
	q.name = "g.block_duration{}";
	CHECK(pyro_query_str(buf, sizeof(buf), &q) > 0);
	CHECK_STR(buf, "name=g.block_duration%7B%7D&from=1700000000&until=1700000030"
		       "&spyName=ebpfspy&units=lock_nanoseconds&aggregationType=sum");
	CHECK(pyro_query_str(buf, 40, &q) == -ENOSPC);
}

TEST_CASE(pyro_body_scaled_and_cut)
{
	struct fixture fx;
	char *text;
	size_t len;

	fx_init(&fx, false);
	fx_add_stack(fx.ft, fx.p, "main;work", 9, 3, -1);
	fx_add_stack(fx.ft, fx.p, "main;sleep", 10, 2.5, -1);
	CHECK(pyro_body(fx.p, 1000, &text, &len) == 0);
	CHECK_STR(text, "main;sleep 2500\nmain;work 3000\n");
	CHECK(len == strlen(text));
	free(text);
	/* A stack deeper than a line may be: cut at a frame, marked, its count kept. */
	profile__clear(fx.p);
	{
		/* 20 frames of 4000 bytes: an 80 kB line. */
		size_t n = 20, at = 0;
		char *deep = malloc(n * 4001);

		for (size_t i = 0; i < n; i++) {
			if (i)
				deep[at++] = ';';
			at += (size_t)sprintf(deep + at, "f%02zu", i);
			memset(deep + at, 'x', 3997);
			at += 3997;
		}
		fx_add_stack(fx.ft, fx.p, deep, at, 7, -1);
		free(deep);
	}
	CHECK(pyro_body(fx.p, 1, &text, &len) == 0);
	CHECK(len <= PYRO_LINE_MAX + 1);
	CHECK(strstr(text, ";[truncated] 7\n") != NULL);
	CHECK(!strncmp(text, "f00xxx", 6) && strstr(text, ";f13x") && !strstr(text, ";f14x"));
	free(text);
	fx_free(&fx);
}

static void ident(void *ctx, uint32_t pid, char *buf, size_t cap)
{
	(void)ctx;
	snprintf(buf, cap, "%s", pid == 30 || pid == 31 ? "c0ffee" : "");
}

static const struct pyro_request *req_with(const struct pyro_request *r, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(r[i].query, s))
			return &r[i];
	return NULL;
}

TEST_CASE(pyro_requests_per_container_and_process)
{
	struct fixture fx;
	struct pyro_request *r;
	struct pyro_opts o = { "galatop", "box", 0, 99, ident, NULL };
	size_t n, merged;

	fx_init(&fx, false);
	fx_add_stack(fx.ft, fx.p, "[10]nginx;main;work", 19, 5, -1);
	fx_add_stack(fx.ft, fx.p, "[11]redis;main;loop", 19, 2, -1);
	fx_add_stack(fx.ft, fx.p, "[Pod]shop;[Con]web;[30]php;run", 30, 4, -1);
	fx_add_stack(fx.ft, fx.p, "[Pod]shop;[Con]web;[31]php;run", 30, 1, -1);
	CHECK(pyro_requests(fx.p, &o, 100, 130, &r, &n, &merged) == 0);
	CHECK(n == 3 && merged == 0);
	if (n == 3) {
		const struct pyro_request *a = req_with(r, n, "service_name%3Dnginx");
		const struct pyro_request *c = req_with(r, n, "service_name%3Dweb");

		/* Heaviest first (ties by name); identity frames are labels, not frames. */
		CHECK(a == &r[0] && c == &r[1]);
		CHECK(a && strstr(a->query, "pid%3D10%7D") && !strcmp(a->body, "main;work 5\n"));
		CHECK(c && strstr(c->query, "container_id%3Dc0ffee%2Cpod%3Dshop%7D") &&
		      !strstr(c->query, "pid%3D") && !strcmp(c->body, "run 5\n"));
		CHECK(strstr(r[0].query, "name=galatop.cpu%7B") == r[0].query);
		CHECK(strstr(r[0].query, "&from=100&until=130&sampleRate=99&"));
	}
	pyro_requests_free(r, n);

	/* Bounded: two series kept, the heaviest and the rest merged under APP-other. */
	o.max_series = 2;
	CHECK(pyro_requests(fx.p, &o, 100, 130, &r, &n, &merged) == 0);
	CHECK(n == 2 && merged == 2);
	if (n == 2) {
		CHECK(strstr(r[1].query, "service_name%3Dgalatop-other%2Chostname%3Dbox%7D"));
		CHECK_STR(r[1].body, "main;loop 2\nrun 5\n");
		CHECK_NUM(r[1].total, 7);
	}
	pyro_requests_free(r, n);
	fx_free(&fx);
}

TEST_CASE(pyro_requests_without_identity)
{
	struct fixture fx;
	struct pyro_request *r;
	struct pyro_opts o = { "galatop", "box", 0, 99, NULL, NULL };
	size_t n;

	/* --group none: no identity roots, one series named after the app. */
	fx_init(&fx, false);
	fx_add_stack(fx.ft, fx.p, "main;work", 9, 5, -1);
	fx_add_stack(fx.ft, fx.p, "start;loop", 10, 2, -1);
	CHECK(pyro_requests(fx.p, &o, 1, 2, &r, &n, NULL) == 0);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(strstr(r[0].query, "service_name%3Dgalatop%2Chostname%3Dbox%7D"));
		CHECK_STR(r[0].body, "main;work 5\nstart;loop 2\n");
	}
	pyro_requests_free(r, n);
	pyro_requests_free(NULL, 0);
	fx_free(&fx);
}

int main(void)
{
	RUN(pyro_types_are_ones_ingest_knows);
	RUN(pyro_app_names);
	RUN(pyro_name_labels_cleaned);
	RUN(pyro_query_encoded);
	RUN(pyro_body_scaled_and_cut);
	RUN(pyro_requests_per_container_and_process);
	RUN(pyro_requests_without_identity);
	HARNESS_EXIT();
}
