/* libFuzzer target: the gala-gopher request parser on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record_opts *o = malloc(sizeof(*o));
	char err[256];

	if (!o)
		return 0;
	record_opts__init(o);
	/* A first byte 1..4 picks the request's kind as the agent's REST paths name it, the rest
	 * being the request; else the kind is guessed from the content, as --config does. The
	 * message is one line, and a refused request leaves no target beyond the limits. */
	if (size && data[0] >= RECORD_REQ_FLAMEGRAPH && data[0] <= RECORD_REQ_SLI) {
		int state = -1;

		if (record_config_parse_request((const char *)data + 1, size - 1, "fuzz",
						(enum record_request)data[0], o, &state, err,
						sizeof(err)) &&
		    (!err[0] || strchr(err, '\n')))
			abort();
		if (state < -1 || state > 1)
			abort();
	} else if (record_config_parse((const char *)data, size, "fuzz", o, err, sizeof(err)) &&
		   (!err[0] || strchr(err, '\n'))) {
		abort();
	}
	if (o->npids > RECORD_MAX_TARGETS || o->ncontainers > RECORD_MAX_TARGETS ||
	    o->npods > RECORD_MAX_TARGETS || strnlen(o->comm, sizeof(o->comm)) == sizeof(o->comm))
		abort();
	free(o);
	return 0;
}
