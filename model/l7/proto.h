/* L7 protocols and their parsers: the bytes one traced process sends and receives on one
 * connection go in, request/response records come out. Pure functions over bytes (no I/O, no
 * globals), shared by the live capture (bpf/l7_probe.c), snapshots and tests. Every protocol
 * is one line of the registry (model/l7/proto.c: name, label, kernel guess, parser) plus its
 * parser file in model/l7/; everything that lists protocols (--protocols, --config, the JSON
 * and Prometheus outputs, the pane) reads the registry. */
#ifndef GALATOP_MODEL_L7_PROTO_H
#define GALATOP_MODEL_L7_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Protocol ids: stable (snapshots store names, the capture's guesses these numbers, mirrored by
 * bpf/l7_event.h's L7_KPROTO_* and checked there), dense, fewer than 32 (masks are unsigned). */
enum l7_proto {
	L7_UNKNOWN = 0,
	L7_HTTP,  /* HTTP/1.0 and 1.1 */
	L7_REDIS, /* RESP2 and RESP3 */
	L7_PGSQL, /* PostgreSQL frontend/backend protocol v3 */
	L7_MYSQL, /* MySQL / MariaDB client/server protocol */
	L7_DNS,	  /* DNS over UDP (one message per datagram) and TCP (length-prefixed) */
	L7_HTTP2, /* HTTP/2, cleartext (prior knowledge) and over TLS (ALPN h2) */
	L7_GRPC,  /* gRPC: HTTP/2 whose requests are content-type application/grpc */
	L7_PROTO_MAX
};

struct l7_ops;

/* One line of the protocol registry. */
struct l7_proto_info {
	enum l7_proto id;
	/* "http": the --protocols and --config l7_protocol name, the "protocol" of the JSON,
	 * Prometheus and snapshot outputs, the pane's protocol column. */
	const char *name;
	const char *label; /* "HTTP/1.x": what the pane and help texts call it */
	/* The capture's kernel guess that leads to this protocol (an enum l7_proto value that
	 * bpf/l7_probe.bpf.c infers, usually id itself), L7_UNKNOWN when the kernel has no guess
	 * for it: then user space infers it from connections the kernel guessed otherwise. */
	enum l7_proto kernel_guess;
	bool http_status; /* errors are counted apart as 4xx and 5xx */
	const struct l7_ops *ops; /* the parser (model/l7/parser.h) */
};

/* The registry line of protocol p, NULL for L7_UNKNOWN and out-of-range values. */
const struct l7_proto_info *l7_proto_info(enum l7_proto p);
/* Which side of the connection the traced process is: the one that connected (client) or the
 * one that accepted (server). */
enum l7_role { L7_ROLE_UNKNOWN = 0, L7_ROLE_CLIENT, L7_ROLE_SERVER };

/* Direction of bytes as the traced process sees them. */
enum l7_dir { L7_DIR_SEND = 0, L7_DIR_RECV = 1 };

/* The registry's name of p ("http"); "unknown" for L7_UNKNOWN and out-of-range values. */
const char *l7_proto_str(enum l7_proto p);
/* The protocol named s (as l7_proto_str prints it), or -1. */
int l7_proto_parse(const char *s);
/* Whether s names a protocol galatop does not parse yet but gala-gopher's configurations name
 * (kafka, mongo, ...): callers say so instead of "unknown". */
bool l7_proto_planned(const char *s);
/* Writes the protocol names as "http, redis, ..." into buf (cut to cap); returns buf. */
const char *l7_proto_names(char *buf, size_t cap);
/* Parses a comma-separated list of protocol names into *mask (bit 1 << p per protocol). 0, or
 * -EINVAL with one line in err naming the bad name and listing the valid ones. */
int l7_proto_parse_list(const char *list, unsigned *mask, char *err, size_t errlen);
/* The protocols parsed by p's parser (bit 1 << q each): p itself, and gRPC for HTTP/2, whose
 * parser names the connection's protocol once it has seen a request. */
unsigned l7_proto_family(enum l7_proto p);
/* The kernel guesses (bit 1 << kernel_guess) that lead to the protocols of mask (0 = all):
 * the filter the capture applies before copying bytes. */
unsigned l7_proto_kernel_mask(unsigned mask);

/* Guesses the protocol from the first bytes of a connection's first message (cap bytes at buf)
 * in direction dir, with the server's port as a tie-breaker (0 when unknown). L7_UNKNOWN when
 * nothing matches well enough; never guesses from the port alone. */
enum l7_proto l7_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, enum l7_role role,
		       uint16_t server_port);

/* Longest endpoint key and detail text, including the NUL. */
#define L7_ENDPOINT_MAX 128
#define L7_DETAIL_MAX 256
#define L7_ERRMSG_MAX 128

/* One request paired with its response. Times are those passed to l7_parser__feed with the
 * chunks that carried the bytes (the capture passes each system call's exit time), so latency
 * is resp_end_ns - req_start_ns: from the request's first byte to the response's last byte. */
struct l7_record {
	enum l7_proto proto;
	uint64_t req_start_ns, req_end_ns;   /* first and last chunk of the request */
	uint64_t resp_start_ns, resp_end_ns; /* first and last chunk of the response */
	uint64_t req_bytes, resp_bytes;	     /* whole message sizes, captured or not */
	int status;	/* HTTP status, DNS RCODE, MySQL/PostgreSQL error code; 0 if none */
	bool error;	/* HTTP 4xx/5xx, Redis error reply, PostgreSQL ErrorResponse, MySQL ERR,
			 * DNS RCODE != 0 */
	bool no_response; /* the connection ended (or the parser gave up) before a response */
	/* The L7 key rows are grouped by, sanitized: HTTP "GET /users/{id}" (numbers and ids
	 * become {id}, no query string), SQL "SELECT users" (verb + first table), Redis "GET"
	 * (command), DNS "example.com A" (qname + qtype). */
	char endpoint[L7_ENDPOINT_MAX];
	/* Sanitized start of the request: request line, SQL text, command with its arguments,
	 * question. */
	char detail[L7_DETAIL_MAX];
	/* Sanitized error text (Redis -ERR line, PostgreSQL message, MySQL message, HTTP reason
	 * phrase of an error status), or "". */
	char errmsg[L7_ERRMSG_MAX];
};

/* Called for every completed record; r is valid only during the call. */
typedef void (*l7_record_fn)(void *ctx, const struct l7_record *r);

struct l7_parser;

/* A parser for one connection of protocol p seen from role (L7_ROLE_UNKNOWN: the parser
 * decides from the first message which direction carries requests); udp for DNS datagrams.
 * NULL on ENOMEM. Caller frees with l7_parser__free. */
struct l7_parser *l7_parser__new(enum l7_proto p, enum l7_role role, bool udp);

/* Feeds one chunk of the stream in direction dir: the bytes one system call (or one datagram)
 * moved. buf holds the first cap bytes of the chunk's len bytes (cap < len when the capture
 * copied only the start; the parser skips what it did not see, e.g. the rest of a body);
 * ts_ns is the chunk's time. Requests are paired with responses in order (pipelining) or by
 * id (DNS); each completed pair is passed to fn. Returns 0, or -EPROTO when the bytes do not
 * follow the protocol: the parser then drops what it had pending (passing those requests to fn
 * with no_response set) and resynchronizes on a later message start where it can. */
int l7_parser__feed(struct l7_parser *p, enum l7_dir dir, const uint8_t *buf, size_t cap,
		    size_t len, uint64_t ts_ns, l7_record_fn fn, void *ctx);

/* The connection ended: requests still waiting are passed to fn with no_response set. */
void l7_parser__close(struct l7_parser *p, l7_record_fn fn, void *ctx);

/* Requests waiting for their response, and chunks rejected with -EPROTO so far. */
size_t l7_parser__pending(const struct l7_parser *p);
uint64_t l7_parser__errors(const struct l7_parser *p);

/* The protocol of the parser's connection as far as it knows: an HTTP/2 parser says gRPC once
 * a header block says so. *settled (may be NULL) tells whether that can still change. */
enum l7_proto l7_parser__proto(const struct l7_parser *p, bool *settled);
/* Header blocks the parser could not decode: HTTP/2 blocks referring to HPACK table entries
 * sent before the capture began, or whose bytes were not captured. */
uint64_t l7_parser__undecoded(const struct l7_parser *p);

/* Frees the parser and what it buffers; NULL is a no-op. */
void l7_parser__free(struct l7_parser *p);

#endif
