/* Pyroscope's ingest API (POST /ingest): the name "APP.TYPE{service_name=...,hostname=...,
 * pid=...,container_id=...,pod=...}" (TYPE from the list Pyroscope's /ingest knows, chosen
 * by the value kind), the query (from/until/sampleRate/spyName/units/aggregationType) and the
 * folded body. Pure formatting: export/pyroscope_post.h sends. docs/agent.md. */
#ifndef GALATOP_EXPORT_PYROSCOPE_H
#define GALATOP_EXPORT_PYROSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

/* The longest body line Pyroscope reads (Go's bufio.Scanner stops at 64 KiB), with room. */
#define PYRO_LINE_MAX 60000
/* Longest label value written (Pyroscope refuses values past 2048 bytes). */
#define PYRO_VALUE_MAX 1024

/* How values of a kind are ingested. */
struct pyro_type {
	const char *name;	 /* the part after the name's last dot: "cpu", "block_duration" */
	const char *units;	 /* units= */
	const char *aggregation; /* aggregationType= */
	double scale;		 /* galatop's value times scale is the type's unit */
	bool sampled;		 /* sampleRate= is the sampling frequency (else left out) */
};

/* The type values of kind are sent as, or NULL: on-CPU samples cpu; off-CPU microseconds
 * block_duration in ns; page faults alloc_objects; bytes alloc_space, or inuse_space (averaged,
 * not summed) for values that can go down (bytes outstanding: leak). */
const struct pyro_type *pyro_type_of(enum value_kind kind, bool can_go_down);

/* True when app can start a Pyroscope name: 1 to 200 of [A-Za-z0-9_.-/], not ending in '.'. */
bool pyro_app_valid(const char *app);

/* A series' labels; NULL or "" and pid 0 are left out. */
struct pyro_labels {
	const char *service_name, *hostname, *container_id, *pod;
	uint32_t pid;
};

/* Writes "APP.TYPE{labels}" into buf (cap bytes, NUL-terminated): label values cleaned of
 * what the name's grammar cannot hold (',', '{', '}', '=', control characters, invalid UTF-8)
 * and cut to PYRO_VALUE_MAX. The length, or -ENOSPC when buf is too small. */
int pyro_name(char *buf, size_t cap, const char *app, const char *type,
	      const struct pyro_labels *l);

/* The query of one request. */
struct pyro_query {
	const char *name;	    /* pyro_name's */
	uint64_t from, until;	    /* UNIX seconds */
	unsigned sample_rate;	    /* samples per second, for sampled types */
	const char *spy_name;	    /* "ebpfspy" when NULL */
	const struct pyro_type *type;
};

/* Writes the percent-encoded query "name=...&from=...&until=...[&sampleRate=...]&spyName=...
 * &units=...&aggregationType=..." into buf. The length, or -ENOSPC. */
int pyro_query_str(char *buf, size_t cap, const struct pyro_query *q);

/* Writes folded text[0..len) ("frame;frame COUNT" lines) to out as a body Pyroscope reads:
 * each count times scale, rounded to an integer; a line longer than PYRO_LINE_MAX cut at a
 * frame and ended with "[truncated]"; lines without a count left out. Bodies of several
 * profiles may follow each other: Pyroscope adds up equal stacks. 0 or -EIO. */
int pyro_body_write(FILE *out, const char *text, size_t len, double scale);

#endif
