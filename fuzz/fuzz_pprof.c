/* libFuzzer target for pprof_read_mem and pprof_sniff: plain protobuf as the fuzzer mutates it
 * (gzip input, from the seeds, is read as is). Every column is read; what is accepted is a
 * well-formed tree, and every failure explains itself in one line naming the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/pprof.h"

static void check(const uint8_t *data, size_t size, const char *type)
{
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct profile *p = NULL;
	char err[256];

	if (pprof_read_mem(data, size, "fuzz", type, ft, &p, err, sizeof(err)) == 0) {
		for (uint32_t id = 1; id < profile__node_count(p); id++)
			if (profile__node(p, id)->parent >= id)
				abort();
		if (!(profile__total(p) >= 0))
			abort();
	} else if (p || !memchr(err, '\0', sizeof(err)) || strncmp(err, "fuzz: ", 6) ||
		   strchr(err, '\n')) {
		abort();
	}
	profile__free(p);
	frames__free(ft);
	strtab__free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pprof_sniff(data, size);
	check(data, size, NULL);
	check(data, size, "cpu");
	return 0;
}
