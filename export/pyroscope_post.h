/* Sending Pyroscope requests (export/pyroscope.h formats them) to a server's /ingest with libcurl, from a
 * thread of its own behind a bounded queue: the caller never waits for the network. Basic or
 * bearer auth read from a file, X-Scope-OrgID for a tenant, retries with a doubling backoff on
 * transport errors, 408, 429 and 5xx; the oldest request dropped when the queue is full.
 * Everything that went wrong is counted, the last error kept as one line. */
#ifndef GALATOP_EXPORT_PYROSCOPE_POST_H
#define GALATOP_EXPORT_PYROSCOPE_POST_H

#include <stddef.h>
#include <stdint.h>

/* One request: what goes after "/ingest?" (export/pyroscope.h's pyro_query_str) and the body. */
struct pyro_request {
	char *query;
	char *body;
	size_t len;
};

struct pyro_post_opts {
	const char *url;       /* the server: "http://host:4040", "https://h/prefix", "host:4040" */
	const char *auth_file; /* NULL, or a file holding "user:password" (Basic auth) or a token
				* (Bearer; "Bearer TOKEN" too); blanks at the ends ignored */
	const char *tenant;    /* X-Scope-OrgID, NULL for none */
	size_t queue_max;      /* requests waiting at most; 0 = 256 */
	unsigned retries;      /* tries after the first */
	unsigned backoff_ms;   /* wait before the first retry, doubled each time (at most 30 s);
				* 0 = 500 */
	unsigned timeout_ms;   /* one request's time limit; 0 = 10000 */
};

struct pyro_post_stats {
	uint64_t queued;  /* requests handed to pyro_post__push */
	uint64_t sent;	  /* answered with 2xx */
	uint64_t failed;  /* given up on: refused (4xx) or still failing after the retries */
	uint64_t dropped; /* pushed out of a full queue, or left unsent at the end */
	uint64_t retried; /* tries after a failure */
	uint64_t bytes;	  /* body bytes sent */
	char last_error[512]; /* the latest failure, one line, "" when none */
};

struct pyro_post;

/* Reads the auth file, checks the URL and starts the sending thread. 0, or -errno with one
 * line in err naming the input (-EINVAL: a bad URL, tenant or auth file contents; the auth
 * file's -errno). */
int pyro_post__new(const struct pyro_post_opts *o, struct pyro_post **out, char *err,
		   size_t errlen);
/* Queues r for sending, taking its strings (r's pointers are cleared); never blocks on the
 * network. */
void pyro_post__push(struct pyro_post *pp, struct pyro_request *r);
/* Copies the counters. */
void pyro_post__stats(struct pyro_post *pp, struct pyro_post_stats *st);
/* Sends what is queued for at most flush_ms, drops the rest (counted), stops the thread and
 * frees; NULL is a no-op. st, if not NULL, gets the final counters. */
void pyro_post__free(struct pyro_post *pp, unsigned flush_ms, struct pyro_post_stats *st);

#endif
