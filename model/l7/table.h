/* L7 session tables: what the parsers' request/response records add up to, per session (keyed
 * as gala-gopher's L7Probe: tgid, client_ip, server_ip, server_port, l4_role, l7_role,
 * protocol, ssl), per endpoint (protocol, role and L7 key such as "GET /users/{id}") and per
 * (session, endpoint) pair, each with counts, bytes, errors and a latency histogram; plus the
 * slowest requests of each endpoint with their details and the thread's user stack. */
#ifndef GALATOP_MODEL_L7_TABLE_H
#define GALATOP_MODEL_L7_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hist.h"
#include "model/l7/proto.h"

/* The transport: TCP, UDP, or a Unix-domain socket (stream or seqpacket; datagram). */
enum l7_l4 { L7_L4_TCP = 0, L7_L4_UDP = 1, L7_L4_UNIX = 2, L7_L4_UNIX_DGRAM = 3, L7_L4_MAX };

#define L7_PATH_MAX 128 /* a Unix-domain session's socket path, sanitized, NUL included */

/* Whether l4 is a Unix-domain transport (the peer is a path and a pid, not addresses). */
static inline bool l7_l4_unix(unsigned l4)
{
	return l4 == L7_L4_UNIX || l4 == L7_L4_UNIX_DGRAM;
}

struct l7_session_key {
	uint32_t tgid;
	uint8_t client_ip[16], server_ip[16]; /* IPv4 in the first 4 bytes unless v6 */
	uint16_t server_port;
	uint8_t v6;
	uint8_t l4_role; /* enum l7_l4 */
	uint8_t l7_role; /* enum l7_role of the traced process */
	uint8_t proto;	 /* enum l7_proto */
	uint8_t ssl;
	uint8_t pad;
	/* Unix-domain sessions: the socket path ("@name" for abstract ones) and the peer's pid
	 * (0 when the kernel does not know it); both zero for TCP and UDP. */
	uint32_t peer_pid;
	char path[L7_PATH_MAX];
};

struct l7_stats {
	uint64_t req_count, resp_count, err_count;
	uint64_t err_4xx, err_5xx;	 /* HTTP error statuses, counted apart */
	uint64_t bytes_sent, bytes_recv; /* as the traced process saw them */
	uint64_t segs_sent, segs_recv;	 /* TCP segments (sessions only) */
	uint64_t first_ns, last_ns;	 /* first and last activity */
	struct hist lat;		 /* latency of answered requests, ns */
};

struct l7_session {
	struct l7_session_key key;
	char comm[16];	     /* sanitized */
	char container[128]; /* container name (or short id), "" if none; sanitized */
	char pod[128];	     /* pod name (or uid), "" if none; sanitized */
	bool ident_done;     /* container and pod were looked up */
	uint64_t cgroup_id;
	struct l7_stats st;
	/* The endpoint and pair of the session's last record, + 1 (0: none): a connection
	 * mostly repeats its endpoint, which then costs a compare instead of two lookups. */
	uint32_t last_endpoint, last_pair;
};

/* One of the slowest requests of an endpoint. */
struct l7_slow {
	uint32_t session, tid;
	struct l7_record rec;
	char *stack; /* user stack, one sanitized frame per line, innermost first; NULL if none */
};

#define L7_SLOW_PER_ENDPOINT 8
#define L7_MAX_ENDPOINTS 4096 /* further endpoints are counted under "(other)" */

struct l7_endpoint {
	uint8_t proto, l7_role;
	char name[L7_ENDPOINT_MAX];
	struct l7_stats st;
	struct l7_slow slow[L7_SLOW_PER_ENDPOINT]; /* slowest first */
	size_t nslow;
};

struct l7_pair {
	uint32_t session, endpoint;
	struct l7_stats st;
};

struct l7_table;

/* A new empty table; NULL on ENOMEM. Caller frees with l7_table__free. */
struct l7_table *l7_table__new(void);
void l7_table__free(struct l7_table *t);
/* Empties every row (periodic output), keeping allocations. */
void l7_table__clear(struct l7_table *t);

/* The session of key k (made on first use, with comm sanitized); its index in *idx. 0 or
 * -ENOMEM. */
int l7_table__session(struct l7_table *t, const struct l7_session_key *k, const char *comm,
		      uint64_t cgroup_id, uint32_t *idx);
/* Sets the container and pod of session (sanitized, cut to fit) and marks it looked up. */
void l7_table__set_ident(struct l7_table *t, uint32_t session, const char *container,
			 const char *pod);
/* Counts bytes and TCP segments that session moved in direction dir at ts_ns. */
void l7_table__io(struct l7_table *t, uint32_t session, enum l7_dir dir, uint64_t bytes,
		  uint64_t segs, uint64_t ts_ns);
/* Adds one paired record of session (tid: the thread that sent or received the request).
 * When it is among its endpoint's slowest, *slow (if slow is not NULL) points at its entry so
 * that the caller can attach a stack with l7_slow__set_stack; else *slow is NULL. 0 or
 * -ENOMEM. */
int l7_table__record(struct l7_table *t, uint32_t session, const struct l7_record *r, uint32_t tid,
		     struct l7_slow **slow);
/* Adds requests of session counted elsewhere (in the kernel) to endpoint name (of the
 * session's protocol and role), its pair and the session: d holds their counts, bytes, first
 * and last activity and latencies (no slowest entries: those came as records). 0, -EINVAL for
 * a bad session, -ENOMEM. */
int l7_table__counted(struct l7_table *t, uint32_t session, const char *name,
		      const struct l7_stats *d);
/* The latency a request of endpoint (proto, role, name) must exceed to enter its slowest
 * list: 0 while the list has room or the endpoint is not known. */
uint64_t l7_table__slow_floor(const struct l7_table *t, uint8_t proto, uint8_t role,
			      const char *name);
/* Copies the stack text (sanitized line by line) into the slow entry. 0 or -ENOMEM. */
int l7_slow__set_stack(struct l7_slow *s, const char *text);

size_t l7_table__nsessions(const struct l7_table *t);
const struct l7_session *l7_table__get_session(const struct l7_table *t, size_t i);
size_t l7_table__nendpoints(const struct l7_table *t);
const struct l7_endpoint *l7_table__get_endpoint(const struct l7_table *t, size_t i);
size_t l7_table__npairs(const struct l7_table *t);
const struct l7_pair *l7_table__get_pair(const struct l7_table *t, size_t i);
/* Bumped by every change, so that views know when to rebuild their rows. */
uint64_t l7_table__gen(const struct l7_table *t);
/* Records the table took in so far. */
uint64_t l7_table__records(const struct l7_table *t);
/* Counts n more header blocks that could not be decoded (HTTP/2 and gRPC: HPACK entries sent
 * before the capture began, bytes not captured), and their total so far. */
void l7_table__add_undecoded(struct l7_table *t, uint64_t n);
uint64_t l7_table__undecoded(const struct l7_table *t);

/* Merges src's rows into dst (snapshots of several periods, tests). 0 or -ENOMEM. */
int l7_table__merge(struct l7_table *dst, const struct l7_table *src);
/* Restores a row as read from a file (export/): the stats are copied, lat merged. 0 or
 * -ENOMEM. */
int l7_table__load_session(struct l7_table *t, const struct l7_session *s);
int l7_table__load_endpoint(struct l7_table *t, const struct l7_endpoint *e);
int l7_table__load_pair(struct l7_table *t, uint32_t session, uint32_t endpoint,
			const struct l7_stats *st);

/* Adds src to dst (rows of a grouped view). 0 or -ENOMEM. */
int l7_stats_merge(struct l7_stats *dst, const struct l7_stats *src);
/* Frees the histogram of st. */
void l7_stats_reset(struct l7_stats *st);
/* Seconds between first and last activity (at least 1 ms when there was any). */
double l7_stats_span(const struct l7_stats *st);
/* err_count / req_count, 0 when no requests. */
double l7_stats_err_ratio(const struct l7_stats *st);

/* Names: "tcp"/"udp"/"unix"/"unix_dgram"; "client"/"server"/"unknown". */
const char *l7_l4_str(enum l7_l4 l4);
const char *l7_role_str(enum l7_role r);
/* Formats an address (IPv4 dotted, IPv6 per RFC 5952) into buf (at least 46 bytes). */
void l7_addr_str(const uint8_t a[16], bool v6, char *buf, size_t cap);

#endif
