/* libFuzzer target: the folded reader and writer on arbitrary bytes. */
#include <stdint.h>
#include <stdio.h>

#include "export/folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded_opts o = { .quiet = 1 };
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *p = profile__new(ft, VALUE_SAMPLES, size & 1);
	FILE *in = fmemopen((void *)data, size, "r");
	FILE *out = fopen("/dev/null", "w");

	if (in && p) {
		o.reverse = size % 3 == 0;
		folded_read_profile(in, "fuzz", &o, p, NULL);
		folded_write(out, p);
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
	return 0;
}
