/* Internal to model/l7: the stream framework every protocol parser plugs into. The framework
 * (stream.c) keeps, per direction, the bytes seen but not yet parsed (bounded), the bytes a message
 * body still owns (skipped whether captured or not), and when each message began; a protocol
 * only says how long the next piece of a message is and what a finished message means. */
#ifndef GALATOP_MODEL_L7_PARSER_H
#define GALATOP_MODEL_L7_PARSER_H

#include "proto.h"

/* Longest message header (or line) a parser waits for; past it the stream is out of sync. */
#define L7_PEND_MAX 16384
/* Requests waiting for their responses; past it the oldest is given up (no_response). */
#define L7_FIFO_MAX 4096

/* What step() found at the start of the unparsed bytes. */
enum l7_step_rc { STEP_OK = 0, STEP_MORE, STEP_BAD };

struct l7_step {
	size_t used;   /* bytes parsed */
	uint64_t skip; /* then this many bytes skipped, seen or not (bodies, rows) */
	bool done;     /* the message ends after the skip */
};

/* A request waiting for its response. */
struct l7_req {
	uint64_t start_ns, end_ns, bytes;
	uint64_t id;  /* what its response names it by, when the protocol pairs by id */
	uint32_t tag; /* protocol's: HTTP HEAD, MySQL command */
	char endpoint[L7_ENDPOINT_MAX];
	char detail[L7_DETAIL_MAX];
};

struct l7_parser;

/* A protocol's parser; its id, names and kernel guess are its registry line (proto.c). */
struct l7_ops {
	/* Whether the first bytes of a connection's first message (cap bytes in direction
	 * dir; server_port 0 when unknown) look like this protocol. l7_infer asks the
	 * protocols in registry order; none may guess from the port alone. */
	bool (*infer)(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port);
	size_t state_size; /* protocol state, zeroed at creation */
	/* With an unknown role: 1 if buf starts a request, 0 a response, -1 can't tell (udp: buf
	 * is a datagram). */
	int (*is_request)(const uint8_t *buf, size_t n, bool udp);
	/* Parses the next piece of the current (or a new) message in direction dir from
	 * buf[0..n); req tells whether dir carries requests. */
	enum l7_step_rc (*step)(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				struct l7_step *out);
	/* The message of direction dir ended: its first byte came at start_ns, its last at
	 * end_ns, bytes long. Requests are queued, responses paired and emitted. */
	void (*end)(struct l7_parser *p, bool req, uint64_t start_ns, uint64_t end_ns,
		    uint64_t bytes);
	/* Bytes were not captured where the message at hand needs reading: true to take the
	 * message as ending here (the framework then ignores chunks until one starts a
	 * message). May be NULL (the stream is out of sync). */
	bool (*unseen)(struct l7_parser *p, bool req);
	/* Bytes were missed in that direction: forget the partial message. */
	void (*lost)(struct l7_parser *p, bool req);
	/* A whole message in one datagram (DNS over UDP); NULL for stream-only protocols.
	 * Returns 0 or -EPROTO. */
	int (*datagram)(struct l7_parser *p, bool req, const uint8_t *buf, size_t cap, size_t len,
			uint64_t ts_ns);
	/* The connection closed: a message delimited by the close (HTTP/1.0 bodies) ends. */
	void (*closing)(struct l7_parser *p, uint64_t ts_ns);
	/* Frees what the state points to. May be NULL. */
	void (*release)(struct l7_parser *p);
	/* Responses name their request (HTTP/2 stream ids, Kafka correlation ids, MongoDB
	 * requestIDs, RocketMQ opaques): requests keep waiting when the stream goes out of sync,
	 * their responses may still come. */
	bool pairs_by_id;
	/* The parser names its connection's protocol after the first messages (HTTP/2 that
	 * turns out to carry gRPC): it sets p->proto and then p->settled. */
	bool names_later;
};

struct l7_dirstate {
	uint8_t *pend; /* seen, not yet parsed */
	size_t npend, pend_cap;
	uint64_t pend_ns; /* when the oldest pending byte came */
	uint64_t skip;	  /* bytes a message still owns */
	bool done_after_skip;
	bool active; /* a message has begun */
	bool drain;  /* ignoring chunks until one starts a message */
	uint64_t start_ns, bytes, last_ns;
};

struct l7_parser {
	const struct l7_ops *ops;
	enum l7_proto proto;
	enum l7_role role;
	bool udp;
	int req_dir; /* direction carrying requests; -1 until known */
	struct l7_dirstate d[2];
	struct l7_req *fifo; /* ring of waiting requests */
	size_t fifo_head, fifo_len, fifo_cap;
	uint64_t errors;
	uint64_t undecoded; /* header blocks that could not be decoded (HTTP/2 HPACK) */
	bool settled;	    /* p->proto will not change any more */
	bool cut; /* the pending bytes end where a chunk's capture was cut short */
	bool resp_synced; /* pairs_by_id: a response paired since the start or the last loss */
	l7_record_fn fn; /* of the current feed */
	void *ctx;
	void *state; /* the protocol's */
};

/* Whether a step holding n bytes of a message of total bytes should wait for the rest: yes
 * while the rest can still come (the chunk was not cut short) and fits the buffer. */
static inline bool l7_wait(const struct l7_parser *p, size_t n, uint64_t total)
{
	return n < total && !p->cut && total <= L7_PEND_MAX;
}

/* Whether a step holding n bytes of a length-prefixed message of total bytes should wait for
 * more: yes until its first L7_PEND_MAX bytes (headers and what follows them) are there,
 * unless the chunk was cut short (what was not captured never comes). */
static inline bool l7_wait_head(const struct l7_parser *p, size_t n, uint64_t total)
{
	return n < (total < L7_PEND_MAX ? total : L7_PEND_MAX) && !p->cut;
}

/* A length-prefixed message of total bytes, n of them at hand, is parsed: the step takes what
 * is at hand and skips the rest. */
static inline enum l7_step_rc l7_step_whole(size_t n, uint64_t total, struct l7_step *out)
{
	out->used = n < total ? n : (size_t)total;
	out->skip = total - out->used;
	out->done = true;
	return STEP_OK;
}

/* The queue of waiting requests, oldest first. Responses pair with them in order (FIFO:
 * HTTP/1, Redis, the SQL protocols) or by the id both carry (DNS id; Kafka correlation id,
 * HTTP/2 stream id, MongoDB requestID ...): several may wait, answered in any order. push
 * returns a zeroed slot at the back (the oldest is given up with no_response when full), NULL
 * on ENOMEM. */
struct l7_req *l7_fifo_push(struct l7_parser *p);
struct l7_req *l7_fifo_front(struct l7_parser *p);
struct l7_req *l7_fifo_at(struct l7_parser *p, size_t i);
/* For protocols whose responses name their request (pairs_by_id): whether a response naming id is
 * taken as a message boundary. On a connection met mid-stream (at the start, and after a loss
 * in the responses' direction) a length prefix read from the middle of a message would send
 * the parser past real boundaries, so until a response names a request that waits only such
 * a response is; then any is (an unpaired one answers a request the capture missed). *waiting
 * tells whether its request waits. */
bool l7_resp_boundary(struct l7_parser *p, uint64_t id, bool *waiting);
/* The oldest waiting request of that id, or NULL. */
struct l7_req *l7_fifo_find(struct l7_parser *p, uint64_t id);
/* Passes rq on as a request without response (a request that expects none: Kafka acks=0,
 * MongoDB moreToCome, RocketMQ oneway; or one given up). */
void l7_give_up(struct l7_parser *p, const struct l7_req *rq);
/* Removes entry i (0 = front). */
void l7_fifo_remove(struct l7_parser *p, size_t i);
/* Gives up every waiting request (no_response). */
void l7_fifo_flush(struct l7_parser *p);

/* Queues a request that began at start_ns and ended at end_ns, bytes long; the caller fills
 * its key and detail (and id when the protocol pairs by id). NULL on ENOMEM. */
struct l7_req *l7_request(struct l7_parser *p, uint64_t start_ns, uint64_t end_ns,
			  uint64_t bytes);

/* A response as it builds up, over one message or several (the SQL protocols' rows). */
struct l7_resp {
	bool on; /* a response has begun */
	uint64_t start_ns, bytes;
	bool error;
	int status;
	char errmsg[L7_ERRMSG_MAX];
};
/* An empty response, begun (on) at start_ns with bytes so far: its numbers set, its text ""
 * (the bytes past the text's end are not cleared: this runs per message, and zeroing the
 * text was two thirds of redis_end's time). */
static inline void l7_resp_init(struct l7_resp *r, bool on, uint64_t start_ns, uint64_t bytes)
{
	r->on = on;
	r->start_ns = start_ns;
	r->bytes = bytes;
	r->error = false;
	r->status = 0;
	r->errmsg[0] = 0;
}
/* Counts one more message (began at start_ns, bytes long) into the response at hand. */
void l7_resp_add(struct l7_resp *r, uint64_t start_ns, uint64_t bytes);
/* The response ended at end_ns: pairs it with the oldest waiting request (if any), passes
 * the record on and empties r. */
void l7_resp_finish(struct l7_parser *p, struct l7_resp *r, uint64_t end_ns);
/* The same pairing by id: with the oldest waiting request of that id. Returns false (and
 * emits nothing) when none waits, as for a response to a request sent before the capture. */
bool l7_resp_finish_id(struct l7_parser *p, struct l7_resp *r, uint64_t end_ns, uint64_t id);

/* Pairs request rq with the response r describes (status, error, errmsg, response times and
 * bytes already set in r), passes the record to the feed's callback. */
void l7_emit(struct l7_parser *p, const struct l7_req *rq, struct l7_record *r);

/* Sanitized, NUL-terminated copy of src[0..n) into dst (cap bytes), cut on a character
 * boundary. Returns the length written. */
size_t l7_text(char *dst, size_t cap, const void *src, size_t n);
/* Copies the text src (already sanitized, NUL-terminated within cap bytes, else cut there)
 * into dst of cap bytes: only the text, not the whole array. */
void l7_text_copy(char *dst, const char *src, size_t cap);
/* l7_text of a printf-formatted string: formatting may cut a character, this mends it. */
size_t l7_textf(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "VERB table" of an SQL statement (comments skipped, verb upper-cased, quotes dropped). */
void l7_sql_key(char *dst, size_t cap, const char *sql, size_t n);
/* Finds the first "\r\n" in buf[0..n): its offset, or -1. */
long l7_find_crlf(const uint8_t *buf, size_t n);

/* The HTTP endpoint key "GET /users/{id}" of a method (ml bytes) and a request target (tl
 * bytes): numbers and ids become {id}, query and fragment dropped, sanitized into dst. */
void l7_http_endpoint(char *dst, size_t cap, const char *method, size_t ml, const char *t,
		      size_t tl);

/* Prepared statements a connection defined, by the name or id the protocol gives them
 * (PostgreSQL statement names, MySQL statement ids as text), mapped to their SQL: at most
 * L7_STMT_MAX, the oldest dropped first. Zeroed = empty. */
#define L7_STMT_MAX 256
struct l7_stmts {
	struct l7_stmt *v;
	size_t n;
};
/* The SQL of statement key, or NULL. */
const char *l7_stmts_get(const struct l7_stmts *c, const char *key);
/* Defines (or redefines) statement key as sql; ENOMEM forgets it silently (the parser then
 * keys its executions without the SQL). */
void l7_stmts_put(struct l7_stmts *c, const char *key, const char *sql);
/* Forgets statement key. */
void l7_stmts_drop(struct l7_stmts *c, const char *key);
/* Frees what c holds and empties it. */
void l7_stmts_free(struct l7_stmts *c);

/* The parsers, each named by its registry line. */
extern const struct l7_ops l7_http_ops, l7_redis_ops, l7_pgsql_ops, l7_mysql_ops, l7_dns_ops,
	l7_http2_ops, l7_kafka_ops, l7_mongo_ops, l7_rocketmq_ops;

#endif
