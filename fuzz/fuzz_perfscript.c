/* libFuzzer target for the perf script parser: every option set, the input fed whole and in two
 * pieces (which must agree), then aggregated and written. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../export/perfscript.h"

static int parse(const struct perfscript_opts *o, const uint8_t *data, size_t size, size_t cut,
		 struct stack_agg *sa)
{
	struct perfscript *ps = perfscript__new(o, stack_agg__add_cb, sa);
	int err;

	if (!ps)
		return -1;
	err = perfscript__feed(ps, (const char *)data, cut);
	if (!err)
		err = perfscript__feed(ps, (const char *)data + cut, size - cut);
	if (!err)
		err = perfscript__end_file(ps);
	perfscript__free(ps);
	return err;
}

static char *dump(struct stack_agg *sa, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		abort();
	if (stack_agg__write(sa, f))
		abort();
	fclose(f);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfscript_opts o = { 0 };
	struct stack_agg *whole, *split;
	uint8_t flags = size ? data[0] : 0;
	char *a, *b;
	size_t la, lb;

	o.include_pid = flags & 1;
	o.include_tid = flags & 2;
	o.annotate_kernel = flags & 4;
	o.annotate_jit = flags & 8;
	o.include_addrs = flags & 16;
	o.count_samples = flags & 32;
	o.event_filter = flags & 64 ? "cycles" : NULL;
	whole = stack_agg__new();
	split = stack_agg__new();
	if (!whole || !split)
		abort();
	int rw = parse(&o, data, size, size, whole), rs = parse(&o, data, size, size / 2, split);

	/* 0, or -EBADMSG for input that is mostly not perf script; both ways alike */
	if ((rw && rw != -EBADMSG) || rw != rs)
		abort();
	a = dump(whole, &la);
	b = dump(split, &lb);
	if (la != lb || memcmp(a, b, la))
		abort(); /* chunking must not change the result */
	free(a);
	free(b);
	stack_agg__free(whole);
	stack_agg__free(split);
	return 0;
}
