/* Unit tests of the perf script parser and the stack aggregator (export/perfscript.h). */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "../export/perfscript.h"

struct out {
	char buf[1 << 16];
	size_t len;
	unsigned long calls;
};

/* Appends "stack count\n" per sample, in arrival order. */
static int collect(void *ctx, const char *stack, size_t len, uint64_t count)
{
	struct out *o = ctx;
	int n;

	o->calls++;
	if (o->len + len + 32 > sizeof(o->buf))
		return -ENOSPC;
	memcpy(o->buf + o->len, stack, len);
	o->len += len;
	n = snprintf(o->buf + o->len, sizeof(o->buf) - o->len, " %llu\n", (unsigned long long)count);
	o->len += n;
	o->buf[o->len] = 0;
	return 0;
}

/* Parses text in one piece with options o into out; returns the parser's result. */
static int run(const struct perfscript_opts *o, const char *text, size_t len, struct out *out)
{
	struct perfscript *ps = perfscript__new(o, collect, out);
	int err;

	memset(out, 0, sizeof(*out));
	if (!ps)
		return -ENOMEM;
	err = perfscript__feed(ps, text, len);
	if (!err)
		err = perfscript__end_file(ps);
	perfscript__free(ps);
	return err;
}

static const char sample[] =
	"# comment line\n"
	"java 4/5 [001] 1.000: 250 cycles: \n"
	"\t7f Lorg/x/Foo;.call(Lorg/x/Bar;)V (/tmp/perf-4.map)\n"
	"\t7e [unknown] (/usr/lib/libjvm.so)\n"
	"\tffffffff81 do_sys+0x1f ([kernel.kallsyms])\n"
	"\n";

TEST_CASE(header_pid_tid_and_period)
{
	struct perfscript_opts o = { 0 };
	struct out out;

	CHECK(run(&o, sample, sizeof(sample) - 1, &out) == 0);
	CHECK_STR(out.buf, "java;do_sys;[libjvm.so];org/x/Foo:.call 250\n");
	o.include_pid = true;
	CHECK(run(&o, sample, sizeof(sample) - 1, &out) == 0);
	CHECK_STR(out.buf, "java-4;do_sys;[libjvm.so];org/x/Foo:.call 250\n");
	o.include_tid = true;
	CHECK(run(&o, sample, sizeof(sample) - 1, &out) == 0);
	CHECK_STR(out.buf, "java-4/5;do_sys;[libjvm.so];org/x/Foo:.call 250\n");
	o.count_samples = true;
	CHECK(run(&o, sample, sizeof(sample) - 1, &out) == 0);
	CHECK_STR(out.buf, "java-4/5;do_sys;[libjvm.so];org/x/Foo:.call 1\n");
}

TEST_CASE(annotations_and_addrs)
{
	struct perfscript_opts o = { .annotate_kernel = true, .annotate_jit = true,
				     .include_addrs = true };
	struct out out;

	CHECK(run(&o, sample, sizeof(sample) - 1, &out) == 0);
	CHECK_STR(out.buf, "java;do_sys_[k];[libjvm.so <7e>];org/x/Foo:.call_[j] 250\n");
}

TEST_CASE(lone_number_is_tid)
{
	static const char old[] = "dd 29776 1.5:   100 cpu-clock: \n\t1 f (x)\n\n";
	static const char modern[] = "burn  9717   4.5:   100 cpu-clock:pppH: \n\t1 f (x)\n\n";
	struct perfscript_opts o = { .include_tid = true };
	struct out out;

	CHECK(run(&o, old, sizeof(old) - 1, &out) == 0);
	CHECK_STR(out.buf, "dd-?/29776;f 100\n");
	CHECK(run(&o, modern, sizeof(modern) - 1, &out) == 0);
	CHECK_STR(out.buf, "burn-?/9717;f 100\n"); /* as stackcollapse-perf.pl */
}

TEST_CASE(event_filter)
{
	static const char two[] = "ab 1 1.0: 5 cycles: \n\t1 f (x)\n\n"
				  "ab 1 1.0: 7 instructions: \n\t1 g (x)\n\n"
				  "ab 1 1.0: 9 cycles: \n\t1 h (x)\n\n";
	struct perfscript_opts o = { 0 };
	struct out out;

	CHECK(run(&o, two, sizeof(two) - 1, &out) == 0);
	CHECK_STR(out.buf, "ab;f 5\nab;h 9\n");
	o.event_filter = "instructions";
	CHECK(run(&o, two, sizeof(two) - 1, &out) == 0);
	CHECK_STR(out.buf, "ab;g 7\n");
}

TEST_CASE(frame_tidying)
{
	static const char t[] =
		"go 1 1.0: 1 c: \n"
		"\t1 net/http.(*Client).Do (x)\n"
		"\t2 ns::(anonymous namespace)::f(int) (x)\n"
		"\t3 RegExp:[&<>\"'] (x)\n"
		"\t4 a;b+0xff (x)\n"
		"\t5 outer->inner->leaf (x)\n"
		"\t6 (skipped) (x)\n"
		"\t7 [unknown] ([unknown])\n"
		"\n";
	struct perfscript_opts o = { 0 };
	struct out out;

	CHECK(run(&o, t, sizeof(t) - 1, &out) == 0);
	CHECK_STR(out.buf, "go;[unknown];outer;inner_[i];leaf_[i];a:b;RegExp:[&<>];"
			   "ns::(anonymous namespace)::f;net/http.(*Client).Do 1\n");
}

TEST_CASE(chunked_feed_matches_whole)
{
	struct perfscript_opts o = { .include_tid = true };
	struct out whole, part;
	size_t cut;

	CHECK(run(&o, sample, sizeof(sample) - 1, &whole) == 0);
	for (cut = 0; cut < sizeof(sample) - 1; cut++) {
		struct perfscript *ps = perfscript__new(&o, collect, &part);

		memset(&part, 0, sizeof(part));
		CHECK(ps != NULL);
		if (!ps)
			return;
		CHECK(perfscript__feed(ps, sample, cut) == 0);
		CHECK(perfscript__feed(ps, sample + cut, 1) == 0);
		CHECK(perfscript__feed(ps, sample + cut + 1, sizeof(sample) - 2 - cut) == 0);
		CHECK(perfscript__end_file(ps) == 0);
		perfscript__free(ps);
		CHECK_STR(part.buf, whole.buf);
	}
}

TEST_CASE(truncated_sample_is_dropped)
{
	static const char t[] = "ab 1 1.0: 3 c: \n\t1 f (x)\n\nab 1 1.0: 4 c: \n\t1 g (x)";
	struct perfscript_opts o = { 0 };
	struct out out;

	CHECK(run(&o, t, sizeof(t) - 1, &out) == 0);
	CHECK_STR(out.buf, "ab;f 3\n");
	CHECK(out.calls == 1);
}

TEST_CASE(nul_bytes_and_huge_line)
{
	static const char t[] = "a\0b 1 1.0: 3 c: \n\t1 f\0g (x)\n\n";
	struct perfscript_opts o = { 0 };
	size_t big = 1 << 20, n;
	struct out out;
	char *s;

	CHECK(run(&o, t, sizeof(t) - 1, &out) == 0);
	CHECK(out.len == 10 && !memcmp(out.buf, "a\0b;f\0g 3\n", 10));

	s = malloc(big + 64);
	CHECK(s != NULL);
	if (!s)
		return;
	n = sprintf(s, "ab 1 1.0: 3 c: \n\t1 ");
	memset(s + n, 'x', big);
	n += big;
	n += sprintf(s + n, " (m)\n\t2 g (m)\n\n");
	{
		struct perfscript *ps = perfscript__new(&o, collect, &out);
		const struct perfscript_stats *st;

		memset(&out, 0, sizeof(out));
		CHECK(perfscript__feed(ps, s, n) == -ENOSPC); /* the callback's error comes back */
		st = perfscript__stats(ps);
		CHECK(st->samples == 1 && st->lines == 4);
		perfscript__free(ps);
	}
	free(s);
}

TEST_CASE(aggregator_sorts_and_sums)
{
	struct stack_agg *sa = stack_agg__new();
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	int i;

	CHECK(sa && f);
	if (!sa || !f)
		return;
	for (i = 0; i < 5000; i++) {
		char k[32];
		int n = snprintf(k, sizeof(k), "s;%d", i % 1000);

		CHECK(stack_agg__add(sa, k, n, 2) == 0);
	}
	CHECK(stack_agg__add(sa, "a;b", 3, 1) == 0);
	CHECK(stack_agg__add(sa, "a", 1, 1) == 0);
	CHECK(stack_agg__add(sa, "big", 3, UINT64_MAX) == 0);
	CHECK(stack_agg__add(sa, "big", 3, 1) == 0);
	CHECK(stack_agg__count(sa) == 1003);
	CHECK(stack_agg__write(sa, f) == 0);
	fclose(f);
	CHECK(!strncmp(text, "a 1\na;b 1\nbig 1.84467440737096e+19\ns;0 10\ns;1 10\ns;10 10\n", 54));
	free(text);
	stack_agg__free(sa);
	stack_agg__free(NULL);
	perfscript__free(NULL);
}

/* A reader that parses each distinct frame line once (perfscript__frame_parse, per
 * perfscript__frame_mode) and pushes the result every time the line comes, as the perf.data
 * reader does, against feeding the same text: the same stacks and counters, with every
 * option. The same lines come in java samples and others, in a sample the event filter drops
 * and after a header the script cannot split. */
TEST_CASE(frame_parse_push_matches_feed)
{
	static const char t[] =
		"java 4/5 [001] 1.000: 250 cycles: \n"
		"\t7f Lorg/x/Foo;.call(Lorg/x/Bar;)V (/tmp/perf-4.map)\n"
		"\t7e [unknown] (/usr/lib/libjvm.so)\n"
		"\tffffffff81 do_sys+0x1f ([kernel.kallsyms])\n"
		"\n"
		"jav 4/6 [001] 1.000: 25 cycles: \n"
		"\t7f Lorg/x/Foo;.call(Lorg/x/Bar;)V (/tmp/perf-4.map)\n"
		"\t7e [unknown] (/usr/lib/libjvm.so)\n"
		"\t5 outer->inner->leaf (x)\n"
		"\t6 (skipped) (x)\n"
		"\t7 [unknown] ([unknown])\n"
		"\tnot a frame line\n"
		"\t4 a;b+0xff (x)\n"
		"\n"
		"ab 1 1.0: 7 instructions: \n"
		"\t5 outer->inner->leaf (x)\n"
		"\tffffffff81 do_sys+0x1f ([kernel.kallsyms])\n"
		"\n"
		"g 1 1.0: 9 cycles: \n"
		"\tffffffff81 do_sys+0x1f ([kernel.kallsyms])\n"
		"\t2 ns::(anonymous namespace)::f(int) (/usr/lib/x.so (deleted))\n"
		"\n";
	static const char *const lines_of_t = t;
	struct {
		char line[96];
		bool mode, adds;
		char frame[96];
		size_t len;
	} seen[32];
	size_t nseen = 0, parsed = 0;

	for (unsigned opt = 0; opt < 16; opt++) {
		struct perfscript_opts o = { .annotate_kernel = opt & 1, .annotate_jit = opt & 2,
					     .include_addrs = opt & 4, .include_tid = opt & 8 };
		struct out whole, part;
		struct perfscript *ps;
		const char *l = lines_of_t;

		CHECK(run(&o, t, sizeof(t) - 1, &whole) == 0);
		ps = perfscript__new(&o, collect, &part);
		memset(&part, 0, sizeof(part));
		CHECK(ps != NULL);
		if (!ps)
			return;
		nseen = 0;
		while (*l) {
			const char *nl = strchr(l, '\n'), *frame;
			size_t n = (size_t)(nl - l), i, len;
			bool mode = perfscript__frame_mode(ps);
			int r = 0;

			for (i = 0; i < nseen; i++)
				if (seen[i].mode == mode && strlen(seen[i].line) == n &&
				    !memcmp(seen[i].line, l, n))
					break;
			if (i < nseen) {
				r = perfscript__frame_push(ps, seen[i].adds ? seen[i].frame : NULL,
							   seen[i].len);
				CHECK(r == 0);
			} else if (n && (l[0] == '\t' || l[0] == ' ') &&
				   (r = perfscript__frame_parse(ps, l, n, &frame, &len)) == 1) {
				parsed++;
				CHECK(nseen < 32 && n < 96 && len < 96);
				memcpy(seen[nseen].line, l, n);
				seen[nseen].line[n] = '\0';
				seen[nseen].mode = mode;
				seen[nseen].adds = frame != NULL;
				seen[nseen].len = len;
				if (frame)
					memcpy(seen[nseen].frame, frame, len);
				CHECK(perfscript__frame_push(ps, frame, len) == 0);
				nseen++;
			} else {
				CHECK(r == 0);
				CHECK(perfscript__feed(ps, l, n + 1) == 0);
			}
			l = nl + 1;
		}
		CHECK(perfscript__end_file(ps) == 0);
		CHECK_STR(part.buf, whole.buf);
		CHECK(part.calls == whole.calls);
		{
			struct perfscript *ref = perfscript__new(&o, collect, &whole);
			const struct perfscript_stats *a = perfscript__stats(ps), *b;

			memset(&whole, 0, sizeof(whole));
			CHECK(ref && perfscript__feed(ref, t, sizeof(t) - 1) == 0);
			b = ref ? perfscript__stats(ref) : a;
			CHECK(a->lines == b->lines && a->valid == b->valid &&
			      a->unrecognized == b->unrecognized && a->samples == b->samples &&
			      a->filtered == b->filtered);
			perfscript__free(ref);
		}
		perfscript__free(ps);
	}
	/* 11 distinct (line, mode): the java sample's lines again in the others' mode */
	CHECK(parsed == 16 * 11);
}

int main(void)
{
	RUN(header_pid_tid_and_period);
	RUN(annotations_and_addrs);
	RUN(lone_number_is_tid);
	RUN(event_filter);
	RUN(frame_tidying);
	RUN(chunked_feed_matches_whole);
	RUN(truncated_sample_is_dropped);
	RUN(nul_bytes_and_huge_line);
	RUN(aggregator_sorts_and_sums);
	RUN(frame_parse_push_matches_feed);
	HARNESS_EXIT();
}
