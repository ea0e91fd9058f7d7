/* Unit tests for export/pyroscope: names Pyroscope's /ingest parses back to the series'
 * labels with a profile type it knows, percent-encoded queries, folded bodies with integer
 * values in the type's unit and lines Pyroscope can read. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "export/pyroscope.h"
#include "model/stack_type.h"

TEST_CASE(pyro_types_are_ones_ingest_knows)
{
	/* Pyroscope's ingest adapter (convertMetadata) refuses other suffixes. */
	CHECK_STR(pyro_type_of(VALUE_SAMPLES, false)->name, "cpu");
	CHECK(pyro_type_of(VALUE_SAMPLES, false)->sampled);
	CHECK_STR(pyro_type_of(VALUE_MICROSECONDS, false)->name, "block_duration");
	CHECK_NUM(pyro_type_of(VALUE_MICROSECONDS, false)->scale, 1000);
	CHECK_STR(pyro_type_of(VALUE_FAULTS, false)->name, "alloc_objects");
	CHECK_STR(pyro_type_of(VALUE_BYTES, false)->name, "alloc_space");
	CHECK_STR(pyro_type_of(VALUE_BYTES, true)->name, "inuse_space");
	CHECK_STR(pyro_type_of(VALUE_BYTES, true)->aggregation, "average");
	CHECK(pyro_type_of(VALUE_KIND_MAX, false) == NULL);
	/* Every stack type has one. */
	for_each_stack_type(t)
		CHECK(pyro_type_of(stack_types[t].kind, stack_types[t].can_go_down) != NULL);
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
				NULL, pyro_type_of(VALUE_SAMPLES, false) };

	CHECK(pyro_query_str(buf, sizeof(buf), &q) > 0);
	CHECK_STR(buf, "name=galatop.cpu%7Bservice_name%3Da%20b%2Cpid%3D1%7D&from=1700000000"
		       "&until=1700000030&sampleRate=99&spyName=ebpfspy&units=samples"
		       "&aggregationType=sum");
	/* Off-CPU: no sampleRate (not a sampled type). */
	q.type = pyro_type_of(VALUE_MICROSECONDS, false);
	q.name = "g.block_duration{}";
	CHECK(pyro_query_str(buf, sizeof(buf), &q) > 0);
	CHECK_STR(buf, "name=g.block_duration%7B%7D&from=1700000000&until=1700000030"
		       "&spyName=ebpfspy&units=lock_nanoseconds&aggregationType=sum");
	CHECK(pyro_query_str(buf, 40, &q) == -ENOSPC);
}

static char *body(const char *text, size_t len, double scale)
{
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);

	CHECK(pyro_body_write(f, text, len, scale) == 0);
	fclose(f);
	return out;
}

TEST_CASE(pyro_body_scaled_and_cut)
{
	char *text;

	/* Microseconds to nanoseconds; rounded; lines without a count, comments left out. */
	text = body("main;sleep 2\nmain;work 3\n# x 1\nnocount\nx 0.5\nlast 1", 51, 1000);
	CHECK_STR(text, "main;sleep 2000\nmain;work 3000\nx 500\nlast 1000\n");
	free(text);
	text = body("a;b 3\n", 6, 1);
	CHECK_STR(text, "a;b 3\n");
	free(text);
	/* A stack deeper than a line may be (20 frames of 4000 bytes): cut at a frame, marked,
	 * its count kept. */
	{
		size_t at = 0;
		char *deep = malloc(20 * 4001 + 8);

		for (size_t i = 0; i < 20; i++) {
			if (i)
				deep[at++] = ';';
			at += (size_t)sprintf(deep + at, "f%02zu", i);
			memset(deep + at, 'x', 3997);
			at += 3997;
		}
		at += (size_t)sprintf(deep + at, " 7\n");
		text = body(deep, at, 1);
		free(deep);
	}
	CHECK(strlen(text) <= PYRO_LINE_MAX + 1);
	CHECK(strstr(text, ";[truncated] 7\n") != NULL);
	CHECK(!strncmp(text, "f00xxx", 6) && strstr(text, ";f13x") && !strstr(text, ";f14x"));
	free(text);
}

int main(void)
{
	RUN(pyro_types_are_ones_ingest_knows);
	RUN(pyro_app_names);
	RUN(pyro_name_labels_cleaned);
	RUN(pyro_query_encoded);
	RUN(pyro_body_scaled_and_cut);
	HARNESS_EXIT();
}
