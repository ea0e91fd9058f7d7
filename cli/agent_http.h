/* The agent's HTTP servers (GET /metrics, the REST control) on libmicrohttpd: requests are
 * read on the server's thread, bodies capped, then answered on the agent's own thread (the
 * engine is not thread-safe), which picks them up between two polls of the probes. */
#ifndef GALATOP_CLI_AGENT_HTTP_H
#define GALATOP_CLI_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* One request, and the answer the agent's thread writes into it. */
struct agent_request {
	const char *method;	   /* "GET", "PUT", ... */
	const char *path;	   /* "/metrics" (no query string) */
	const char *body;	   /* NUL-terminated; "" when none */
	size_t len;
	bool too_large;		   /* the body passed the server's cap (body is then "") */
	const char *authorization; /* the Authorization header, NULL when none */
	/* The answer: */
	int status;		   /* HTTP status (0: 500) */
	const char *content_type;  /* static text; NULL: none */
	char *reply;		   /* malloc'ed body (taken), NULL: empty */
	size_t reply_len;
};

/* Answers r on the agent's thread. */
typedef void (*agent_http_fn)(void *ctx, struct agent_request *r);

struct agent_http;

/* Parses ADDR ("127.0.0.1:8888", "[::1]:9999", "localhost:8888", ":8888" for every address;
 * port 0: any free one)
 * into *ss; also says whether it is a loopback address. 0, or -EINVAL with one line in err. */
struct sockaddr_storage;
int agent_http_addr(const char *addr, struct sockaddr_storage *ss, bool *loopback, char *err,
		    size_t errlen);
/* Listens on addr; bodies past body_max bytes are not kept (too_large). NULL with one line in
 * err (naming addr). */
struct agent_http *agent_http__start(const char *name, const char *addr, size_t body_max,
				     char *err, size_t errlen);
/* The port it listens on (the kernel's pick for port 0), -1 if unknown. */
int agent_http__port(const struct agent_http *h);
/* Answers every request waiting, through fn (on the caller's thread, the agent's). */
void agent_http__serve(struct agent_http *h, agent_http_fn fn, void *ctx);
/* Stops listening; waiting requests get 503. NULL is a no-op. */
void agent_http__stop(struct agent_http *h);
/* Sets r's answer: status, content type, a copy of text. */
void agent_request_reply(struct agent_request *r, int status, const char *content_type,
			 const char *text);

#endif
