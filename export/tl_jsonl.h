/* gala-gopher tprofiling event lines (JSON lines) of a thread timeline: one line per thread,
 * event name and aggregation window, with the seed's Resource and Attributes.values fields.
 * docs/formats.md. */
#ifndef GALATOP_EXPORT_TL_JSONL_H
#define GALATOP_EXPORT_TL_JSONL_H

#include <stdint.h>
#include <stdio.h>

#include "../model/timeline.h"

struct tl_jsonl_opts {
	const char *host_id, *host_name; /* NULL = "" */
	uint64_t aggr_ns;		  /* aggregation window; 0 = 100 ms */
};

/* Writes tl to f; 0 or -errno (-ENOMEM, -EIO). */
int tl_jsonl_write(FILE *f, const struct timeline *tl, const struct tl_jsonl_opts *o);

#endif
