/* Posting Pyroscope requests (export/pyroscope.h formats them) to a server's /ingest with
 * libcurl: Basic or bearer auth read from a file, X-Scope-OrgID for a tenant, retries with a
 * doubling backoff on transport errors, 408, 429 and 5xx, every try bounded by a deadline the
 * caller gives (the agent's sink thread calls it: a dead or hung server costs that thread the
 * deadline, never the probes). Counted, the last error kept as one line. */
#ifndef GALATOP_EXPORT_PYROSCOPE_POST_H
#define GALATOP_EXPORT_PYROSCOPE_POST_H

#include <stddef.h>
#include <stdint.h>

struct pyro_post_opts {
	const char *url;       /* the server: "http://host:4040", "https://h/prefix", "host:4040" */
	const char *auth_file; /* NULL, or a file holding "user:password" (Basic auth) or a token
				* (Bearer; "Bearer TOKEN" too); blanks at the ends ignored */
	const char *tenant;    /* X-Scope-OrgID, NULL for none */
	unsigned retries;      /* tries after the first */
	unsigned backoff_ms;   /* wait before the first retry, doubled each time (at most 30 s);
				* 0 = 500 */
	unsigned timeout_ms;   /* one try's time limit; 0 = 10000 */
};

struct pyro_post_stats {
	uint64_t sent;	  /* requests answered with 2xx */
	uint64_t failed;  /* given up on: refused (4xx), failing after the retries, or out of time */
	uint64_t retried; /* tries after a failure */
	uint64_t bytes;	  /* body bytes sent */
	char last_error[512]; /* the latest failure, one line, "" when none */
};

struct pyro_post;

/* Reads the auth file and checks the URL. 0, or -errno with one line in err naming the input
 * (-EINVAL: a bad URL, tenant or auth file contents; the auth file's -errno; -ENOMEM). */
int pyro_post__new(const struct pyro_post_opts *o, struct pyro_post **out, char *err,
		   size_t errlen);
/* POSTs body[0..len) to /ingest?query, trying again after failures worth it until the
 * retries or the time run out (deadline_ms: CLOCK_MONOTONIC ms; no try starts after it and
 * none lasts past it). 0 when sent; -EIO (transport error or 5xx after every try), -ETIMEDOUT
 * (out of time) or -EINVAL (refused: 4xx) with the reason in the stats' last_error. */
int pyro_post__send(struct pyro_post *pp, const char *query, const char *body, size_t len,
		    int64_t deadline_ms);
/* Copies the counters; callable from any thread. */
void pyro_post__stats(struct pyro_post *pp, struct pyro_post_stats *st);
/* Frees; NULL is a no-op. */
void pyro_post__free(struct pyro_post *pp);

#endif
