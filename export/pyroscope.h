/* Pyroscope's ingest API (POST /ingest): a profile as one request per series, each with the
 * name "APP.TYPE{service_name=...,hostname=...,pid=...,container_id=...,pod=...}" (TYPE from
 * the list Pyroscope's /ingest knows, chosen by the value kind), the query
 * (from/until/sampleRate/spyName/units/aggregationType) and a folded body. One series per
 * container, or per process outside containers; at most max_series, the lightest merged into
 * one. Pure formatting: the sending is export/pyroscope_post.h's. docs/agent.md. */
#ifndef GALATOP_EXPORT_PYROSCOPE_H
#define GALATOP_EXPORT_PYROSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The type values of kind are sent as (on-CPU samples: cpu; off-CPU microseconds:
 * block_duration in ns; page faults: alloc_objects; bytes: alloc_space), or NULL. */
const struct pyro_type *pyro_type_of(enum value_kind kind);

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

/* The folded body of p with every value times scale, rounded to an integer (Pyroscope reads
 * integers), lines longer than PYRO_LINE_MAX cut at a frame and ended with "[truncated]".
 * *text (NUL-terminated, *len bytes) is the caller's to free. 0 or -ENOMEM. */
int pyro_body(const struct profile *p, double scale, char **text, size_t *len);

/* One request: what goes after "/ingest?" and the body. */
struct pyro_request {
	char *query;
	char *body;
	size_t len;
	double total; /* the series' total, in the profile's unit */
};

/* Names the container id of process pid into buf ("" when none). */
typedef void (*pyro_ident_fn)(void *ctx, uint32_t pid, char *buf, size_t cap);

struct pyro_opts {
	const char *app;      /* the name's start, pyro_app_valid */
	const char *hostname; /* the hostname label */
	size_t max_series;    /* series per profile; 0 = 64 */
	unsigned freq;	      /* the on-CPU sampling frequency (sampleRate of cpu) */
	pyro_ident_fn ident;  /* container ids, may be NULL */
	void *ident_ctx;
};

/* The requests for profile p (stacks under identity roots: [Pod], [Con], [PID]comm) of the
 * period [from, until) (UNIX seconds): one per container, or per process outside containers
 * (stacks without identity roots form one series named after the app); when there are more
 * than max_series, the heaviest max_series - 1 keep theirs and the rest go into one series
 * whose service_name is "APP-other" (*merged counts the series merged, if not NULL).
 * Series with no value are left out. *reqs (*n of them) go to pyro_requests_free. 0, -EINVAL
 * (a kind without a Pyroscope type) or -ENOMEM. */
int pyro_requests(const struct profile *p, const struct pyro_opts *o, uint64_t from,
		  uint64_t until, struct pyro_request **reqs, size_t *n, size_t *merged);
/* Frees the requests' strings and the array; NULL is a no-op. */
void pyro_requests_free(struct pyro_request *reqs, size_t n);

#endif
