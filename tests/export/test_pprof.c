/* Unit tests for export/pprof and export/speedscope: the bytes written for a fixed profile, the
 * reader on them (round trips of every stack type, inlined frames, columns), its errors on bad
 * and truncated input, and the speedscope file's structure. */
#include <errno.h>
#include <jansson.h>
#include <math.h>

#include "harness.h"
#include "profile_fixture.h"
#include "export/folded.h"
#include "export/pprof.h"
#include "export/speedscope.h"

/* The folded text of p. */
static char *folded_of(const struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(folded_write(out, p) == 0);
	fclose(out);
	return text;
}

/* Encodes fx's profile as type t, reads it back with column type and compares the folded
 * text with want (NULL: the original's). */
static void round_trip(struct fixture *fx, enum stack_type t, double hz, const char *col,
		       const char *want, enum value_kind kind)
{
	struct typed_profile tp = { t, fx->p };
	struct pprof_meta m = { .hz = hz };
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *q = NULL;
	unsigned char *pb;
	size_t len;
	char err[256], *a, *b;

	CHECK(pprof_encode(&tp, 1, &m, &pb, &len) == 0);
	CHECK(pprof_sniff(pb, len));
	CHECK(pprof_read_mem(pb, len, "x.pb", col, ft, &q, err, sizeof(err)) == 0);
	if (!q) {
		printf("  %s\n", err);
	} else {
		a = folded_of(q);
		b = want ? strdup(want) : folded_of(fx->p);
		CHECK_STR(a, b);
		CHECK(profile__kind(q) == kind);
		free(a);
		free(b);
	}
	profile__free(q);
	frames__free(ft);
	strtab__free(st);
	free(pb);
}

static void small(struct fixture *fx, enum value_kind kind)
{
	fx->st = strtab__new();
	fx->ft = frames__new(fx->st);
	fx->p = profile__new(fx->ft, kind, false);
	fx_add_stack(fx->ft, fx->p, "[7]app;main;a", 13, 3, -1);
	fx_add_stack(fx->ft, fx->p, "[7]app;main;b_[k]", 17, 1, -1);
}

/* Golden bytes: checked once with `go tool pprof -raw` (tests/cli/test_pprof.sh checks every
 * written file with it). */
TEST_CASE(encode_golden_bytes)
{
	static const unsigned char want[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,			/* samples/count */
		0x0a, 0x04, 0x08, 0x03, 0x10, 0x04,			/* cpu/nanoseconds */
		0x12, 0x0c, 0x0a, 0x03, 0x03, 0x02, 0x01,		/* a: 3, 30 ms */
		0x12, 0x05, 0x03, 0x80, 0x87, 0xa7, 0x0e,
		0x12, 0x0c, 0x0a, 0x03, 0x04, 0x02, 0x01,		/* b_[k]: 1, 10 ms */
		0x12, 0x05, 0x01, 0x80, 0xad, 0xe2, 0x04,
		0x2a, 0x06, 0x08, 0x01, 0x10, 0x05, 0x18, 0x05,		/* functions */
		0x2a, 0x06, 0x08, 0x02, 0x10, 0x06, 0x18, 0x06,
		0x2a, 0x06, 0x08, 0x03, 0x10, 0x07, 0x18, 0x07,
		0x2a, 0x06, 0x08, 0x04, 0x10, 0x08, 0x18, 0x08,
		0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01,		/* locations */
		0x22, 0x06, 0x08, 0x02, 0x22, 0x02, 0x08, 0x02,
		0x22, 0x06, 0x08, 0x03, 0x22, 0x02, 0x08, 0x03,
		0x22, 0x06, 0x08, 0x04, 0x22, 0x02, 0x08, 0x04,
		0x48, 0x80, 0x94, 0xeb, 0xdc, 0x03,			/* time_nanos: 1 s */
		0x50, 0x80, 0xa8, 0xd6, 0xb9, 0x07,			/* duration: 2 s */
		0x5a, 0x04, 0x08, 0x03, 0x10, 0x04,			/* period: cpu ns */
		0x60, 0x80, 0xad, 0xe2, 0x04,				/* 10 ms */
		0x32, 0x00, 0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',	/* strings */
		0x32, 0x05, 'c', 'o', 'u', 'n', 't', 0x32, 0x03, 'c', 'p', 'u',
		0x32, 0x0b, 'n', 'a', 'n', 'o', 's', 'e', 'c', 'o', 'n', 'd', 's',
		0x32, 0x06, '[', '7', ']', 'a', 'p', 'p', 0x32, 0x04, 'm', 'a', 'i', 'n',
		0x32, 0x01, 'a', 0x32, 0x05, 'b', '_', '[', 'k', ']',
	};
	struct fixture fx;
	struct typed_profile tp;
	struct pprof_meta m = { .start = 1, .duration = 2, .hz = 100 };
	unsigned char *pb;
	size_t len;

	small(&fx, VALUE_SAMPLES);
	tp = (struct typed_profile){ STACK_ONCPU, fx.p };
	CHECK(pprof_encode(&tp, 1, &m, &pb, &len) == 0);
	CHECK(len == sizeof(want));
	if (getenv("PPROF_GOLDEN_DUMP"))
		for (size_t i = 0; i < len; i++)
			printf("0x%02x,%s", pb[i], i % 12 == 11 ? "\n" : " ");
	for (size_t i = 0; i < len && i < sizeof(want); i++)
		if (pb[i] != want[i]) {
			printf("  byte %zu: %#x, expected %#x\n", i, pb[i], want[i]);
			CHECK(pb[i] == want[i]);
			break;
		}
	free(pb);
	fx_free(&fx);
}

TEST_CASE(round_trip_every_stack_type)
{
	struct fixture fx;

	small(&fx, VALUE_SAMPLES);
	round_trip(&fx, STACK_ONCPU, 99, NULL, NULL, VALUE_SAMPLES);
	round_trip(&fx, STACK_ONCPU, 99, "oncpu", NULL, VALUE_SAMPLES);
	round_trip(&fx, STACK_ONCPU, 100, "cpu", "[7]app;main;a 30000000\n"
		   "[7]app;main;b_[k] 10000000\n", VALUE_NANOSECONDS);
	fx_free(&fx);
	/* Off-CPU microseconds travel as nanoseconds and come back as microseconds. */
	small(&fx, VALUE_MICROSECONDS);
	fx_add_stack(fx.ft, fx.p, "[7]app;main;poll", 16, 1234567, -1);
	round_trip(&fx, STACK_OFFCPU, 99, NULL, NULL, VALUE_MICROSECONDS);
	round_trip(&fx, STACK_OFFCPU, 99, "offcpu", NULL, VALUE_MICROSECONDS);
	fx_free(&fx);
	small(&fx, VALUE_FAULTS);
	round_trip(&fx, STACK_MEM, 0, NULL, NULL, VALUE_FAULTS);
	fx_free(&fx);
	small(&fx, VALUE_BYTES);
	round_trip(&fx, STACK_MEM, 0, "mem", NULL, VALUE_BYTES);
	fx_free(&fx);
}

/* Inlined frames share their caller's location (lines innermost first) and come back marked. */
TEST_CASE(inlined_frames_one_location)
{
	static const char stack[] = "[7]app;main;helper_[i];leaf_[i];work";
	struct fixture fx;
	struct typed_profile tp;
	unsigned char *pb;
	size_t len, locs = 0;

	fx_init(&fx, false);
	fx_add_stack(fx.ft, fx.p, stack, sizeof(stack) - 1, 5, -1);
	round_trip(&fx, STACK_ONCPU, 0, NULL, NULL, VALUE_SAMPLES);
	tp = (struct typed_profile){ STACK_ONCPU, fx.p };
	CHECK(pprof_encode(&tp, 1, NULL, &pb, &len) == 0);
	/* The sample's location ids: work, main+helper+leaf, [7]app: three, not five. */
	for (size_t i = 0; i + 2 < len; i++)
		if (pb[i] == 0x12 && pb[i + 2] == 0x0a) {
			locs = pb[i + 3];
			break;
		}
	CHECK(locs == 3);
	free(pb);
	fx_free(&fx);
}

TEST_CASE(unknown_sample_type_names_the_ones_there)
{
	struct fixture fx;
	struct typed_profile tp;
	struct profile *q = NULL;
	unsigned char *pb;
	size_t len;
	char err[256];

	small(&fx, VALUE_SAMPLES);
	tp = (struct typed_profile){ STACK_ONCPU, fx.p };
	CHECK(pprof_encode(&tp, 1, &(struct pprof_meta){ .hz = 99 }, &pb, &len) == 0);
	CHECK(pprof_read_mem(pb, len, "x.pb", "alloc_space", fx.ft, &q, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(!q);
	CHECK_STR(err, "x.pb: no sample type alloc_space (it has samples cpu)");
	free(pb);
	fx_free(&fx);
}

/* Every cut of a file fails in one line naming it: never a profile of part of it. */
TEST_CASE(truncated_files_fail_in_one_line)
{
	struct fixture fx;
	struct typed_profile tp;
	unsigned char *pb;
	char err[256], *gz = NULL;
	size_t len, glen = 0;
	FILE *f = open_memstream(&gz, &glen);
	int bad = 0;

	small(&fx, VALUE_SAMPLES);
	tp = (struct typed_profile){ STACK_ONCPU, fx.p };
	CHECK(pprof_encode(&tp, 1, &(struct pprof_meta){ .hz = 99 }, &pb, &len) == 0);
	CHECK(pprof_write(f, &tp, 1, &(struct pprof_meta){ .hz = 99 }) == 0);
	fclose(f);
	for (size_t cut = 1; cut < len; cut++) {
		struct profile *q = NULL;
		int r = pprof_read_mem(pb, cut, "x.pb", NULL, fx.ft, &q, err, sizeof(err));

		if (r != -EINVAL || q || strncmp(err, "x.pb: ", 6) || strchr(err, '\n'))
			bad++;
		profile__free(q);
	}
	CHECK(bad == 0);
	for (size_t cut = 2; cut < glen; cut++) {
		struct profile *q = NULL;
		int r = pprof_read_mem(gz, cut, "x.pb.gz", NULL, fx.ft, &q, err, sizeof(err));

		if (r != -EINVAL || q || strncmp(err, "x.pb.gz: ", 9))
			bad++;
		profile__free(q);
	}
	CHECK(bad == 0);
	CHECK(pprof_read_mem(gz, glen - 9, "x.pb.gz", NULL, fx.ft, &(struct profile *){ NULL },
			     err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "x.pb.gz: not a valid pprof profile: truncated gzip data");
	free(gz);
	free(pb);
	fx_free(&fx);
}

TEST_CASE(bad_references_fail)
{
	/* One sample type, a sample naming location 9, which is not there. */
	static const unsigned char bad_loc[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x05, 0x0a, 0x01, 0x09, 0x10,
		0x05, 0x32, 0x00, 0x32, 0x01, 's', 0x32, 0x01, 'c',
	};
	/* A function name past the string table. */
	static const unsigned char bad_str[] = {
		0x0a, 0x04, 0x08, 0x01, 0x10, 0x01, 0x12, 0x05, 0x0a, 0x01, 0x01, 0x10,
		0x01, 0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01, 0x2a, 0x04, 0x08,
		0x01, 0x10, 0x63, 0x32, 0x00, 0x32, 0x01, 's',
	};
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *q = NULL;
	char err[256];

	CHECK(pprof_sniff(bad_loc, sizeof(bad_loc)));
	CHECK(pprof_read_mem(bad_loc, sizeof(bad_loc), "b", NULL, ft, &q, err, sizeof(err)) ==
	      -EINVAL);
	CHECK_STR(err, "b: not a valid pprof profile: a sample names location 9, which is not "
		       "there");
	CHECK(pprof_read_mem(bad_str, sizeof(bad_str), "b", NULL, ft, &q, err, sizeof(err)) ==
	      -EINVAL);
	CHECK_STR(err, "b: not a valid pprof profile: a function names string 99 of 2");
	CHECK(!q);
	frames__free(ft);
	strtab__free(st);
}

TEST_CASE(sniff_tells_pprof_from_text)
{
	static const char folded[] = "main;a 3\n";
	static const char text[] = "\n2to3;main 4\n";

	CHECK(!pprof_sniff(folded, sizeof(folded) - 1));
	CHECK(!pprof_sniff(text, sizeof(text) - 1));
	CHECK(!pprof_sniff("", 0));
}

TEST_CASE(speedscope_structure)
{
	struct fixture fx;
	struct typed_profile tp;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	json_error_t je;
	json_t *doc, *frames, *prof, *samples, *weights;
	double sum = 0;

	small(&fx, VALUE_MICROSECONDS);
	tp = (struct typed_profile){ STACK_OFFCPU, fx.p };
	CHECK(speedscope_write(out, &tp, 1, "t\"1") == 0);
	fclose(out);
	doc = json_loads(text, 0, &je);
	CHECK(doc != NULL);
	if (!doc) {
		printf("  %s\n", je.text);
		free(text);
		fx_free(&fx);
		return;
	}
	CHECK_STR(json_string_value(json_object_get(doc, "$schema")),
		  "https://www.speedscope.app/file-format-schema.json");
	CHECK_STR(json_string_value(json_object_get(doc, "name")), "t\"1");
	frames = json_object_get(json_object_get(doc, "shared"), "frames");
	CHECK(json_array_size(frames) == 4);
	prof = json_array_get(json_object_get(doc, "profiles"), 0);
	CHECK_STR(json_string_value(json_object_get(prof, "type")), "sampled");
	CHECK_STR(json_string_value(json_object_get(prof, "unit")), "microseconds");
	CHECK_STR(json_string_value(json_object_get(prof, "name")), "offcpu");
	samples = json_object_get(prof, "samples");
	weights = json_object_get(prof, "weights");
	CHECK(json_array_size(samples) == 2 && json_array_size(weights) == 2);
	for (size_t i = 0; i < json_array_size(weights); i++)
		sum += json_number_value(json_array_get(weights, i));
	CHECK_NUM(sum, 4);
	CHECK_NUM(json_number_value(json_object_get(prof, "endValue")), 4);
	/* The first sample is [7]app;main;a, root first. */
	{
		json_t *s0 = json_array_get(samples, 0);
		const char *names[3] = { "[7]app", "main", "a" };

		CHECK(json_array_size(s0) == 3);
		for (size_t i = 0; i < 3 && i < json_array_size(s0); i++) {
			size_t k = (size_t)json_integer_value(json_array_get(s0, i));

			CHECK(k < json_array_size(frames));
			CHECK_STR(json_string_value(json_object_get(json_array_get(frames, k),
								    "name")), names[i]);
		}
	}
	json_decref(doc);
	free(text);
	fx_free(&fx);
}

int main(void)
{
	RUN(encode_golden_bytes);
	RUN(round_trip_every_stack_type);
	RUN(inlined_frames_one_location);
	RUN(unknown_sample_type_names_the_ones_there);
	RUN(truncated_files_fail_in_one_line);
	RUN(bad_references_fail);
	RUN(sniff_tells_pprof_from_text);
	RUN(speedscope_structure);
	HARNESS_EXIT();
}
