/* The L7 connection tracker: messages of traced connections (what one system call or one
 * OpenSSL call moved, with the socket's identity) go in; it keeps one parser per connection
 * generation (per peer for unconnected datagram sockets), decides protocol and role, and adds
 * the paired records, bytes and TCP segments to an l7_table. Pure model code: the capture
 * (bpf/l7_probe.c) and tests feed it alike. */
#ifndef GALATOP_MODEL_L7_TRACK_H
#define GALATOP_MODEL_L7_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/l7/proto.h"
#include "model/l7/table.h"

/* L7_MSG_PEER: a Unix-domain connection's peer (peer_pid; data holds cap bytes of the
 * socket's sun_path, abstract names starting with a NUL), before its first data. */
#define L7_UNIX_PATH 108 /* sizeof(sockaddr_un.sun_path): most path bytes of an L7_MSG_PEER */

enum l7_msg_type { L7_MSG_DATA = 0, L7_MSG_CLOSE, L7_MSG_PEER };

/* One message of one connection as the traced process saw it. */
struct l7_msg {
	enum l7_msg_type type;
	uint32_t tgid, tid;
	int32_t fd;
	uint64_t gen;	/* connection generation: (tgid, fd, gen) names one connection */
	uint64_t ts_ns;	   /* time of the call's return */
	uint64_t start_ns; /* time of its entry, 0 if unknown: a client's request starts then */
	uint64_t len;	/* bytes moved; data holds the first cap */
	uint32_t cap;
	uint64_t cgroup_id;
	enum l7_dir dir;
	enum l7_role role;  /* from accept vs connect; L7_ROLE_UNKNOWN for older connections */
	enum l7_proto hint; /* the capture's guess, L7_UNKNOWN if none */
	bool ssl, udp, v6;
	bool uds;	   /* a Unix-domain socket (udp: a datagram one): no addresses or ports */
	uint32_t peer_pid; /* L7_MSG_PEER only */
	bool segs_valid; /* segs_in/segs_out are the TCP socket's counters */
	bool no_data;	 /* bytes counted but not captured (sendfile) */
	uint16_t lport, rport;
	uint8_t laddr[16], raddr[16];
	uint32_t segs_in, segs_out;
	int32_t stack_id; /* the capture's user stack id, < 0 if none */
	char comm[16];
};

/* Called for every paired record with its session (for per-request output). */
typedef void (*l7_trace_fn)(void *ctx, const struct l7_session *s, const struct l7_record *r,
			    uint32_t tid);
/* Writes the user stack stack_id of process tgid as text (one frame per line, innermost
 * first) into buf; returns its length, 0 when unknown. */
typedef size_t (*l7_stack_fn)(void *ctx, uint32_t tgid, int32_t stack_id, char *buf, size_t cap);
/* Fills the container and pod names of process tgid ("" when none). */
typedef void (*l7_ident_fn)(void *ctx, uint32_t tgid, char *container, size_t ccap, char *pod,
			    size_t pcap);

struct l7_track_stats {
	uint64_t msgs, conns, open_conns;
	uint64_t unknown;      /* messages of connections no parser took */
	uint64_t parse_errors; /* chunks parsers rejected */
	uint64_t undecoded;    /* header blocks parsers could not decode (HTTP/2, gRPC) */
	uint64_t records;      /* paired records, those counted elsewhere included */
	uint64_t counted;      /* requests counted elsewhere */
	uint64_t count_conns;  /* connections named for counting */
};

struct l7_track;

/* A tracker adding to t (borrowed); proto_mask: bit 1 << p per enum l7_proto traced, 0 = all.
 * NULL on ENOMEM. */
struct l7_track *l7_track__new(struct l7_table *t, unsigned proto_mask);
void l7_track__set_trace(struct l7_track *tk, l7_trace_fn fn, void *ctx);
void l7_track__set_stacks(struct l7_track *tk, l7_stack_fn fn, void *ctx);
/* Names each new session's container and pod with fn. */
void l7_track__set_ident(struct l7_track *tk, l7_ident_fn fn, void *ctx);
/* Requests counted elsewhere (the kernel, bpf/l7_count.h): the tracker names the connections
 * whose plain exchanges may be counted there (an HTTP/1 or Redis connection over TCP without
 * TLS whose role is known, once it has paired two requests on it) with a number for their session, and the
 * request keys it has seen with a number for their endpoint; the counts come back through
 * l7_track__counted. */
struct l7_count_ops {
	/* The key of request data[0..len) of protocol p (all of it captured): true and *h, or
	 * false when such a request is not counted. */
	bool (*key)(void *ctx, enum l7_proto p, const uint8_t *data, size_t len, uint64_t *h);
	/* Connection (tgid, fd, gen) may be counted, under session number sess. */
	void (*conn)(void *ctx, uint32_t tgid, int32_t fd, uint64_t gen, uint32_t sess);
	/* Requests with key h belong to endpoint number ep. */
	void (*endpoint)(void *ctx, uint64_t h, uint32_t ep);
};
/* Starts naming (ops, borrowed), or stops it (NULL): connections named before stay named. */
void l7_track__set_count(struct l7_track *tk, const struct l7_count_ops *ops, void *ctx);
/* Adds requests counted under session number sess and endpoint number ep (d: their counts,
 * bytes, activity and latencies) to the table. 0, -EINVAL for numbers never given, -ENOMEM. */
int l7_track__counted(struct l7_track *tk, uint32_t sess, uint32_t ep, const struct l7_stats *d);
/* How late an answer to endpoint number ep must be to enter its slowest list (0: any), so
 * that such answers come as records; UINT64_MAX for a number never given. */
uint64_t l7_track__count_slow(const struct l7_track *tk, uint32_t ep);
/* Endpoint numbers given so far (0 .. n - 1). */
uint32_t l7_track__count_endpoints(const struct l7_track *tk);

/* Takes one message; data holds m->cap bytes. */
void l7_track__msg(struct l7_track *tk, const struct l7_msg *m, const uint8_t *data);
/* Ends connections idle since before now_ns - idle_ns (processes that exited without
 * closing); their waiting requests count as unanswered. */
void l7_track__expire(struct l7_track *tk, uint64_t now_ns, uint64_t idle_ns);
/* Ends every connection (end of a recording). */
void l7_track__flush(struct l7_track *tk);
void l7_track__stats(const struct l7_track *tk, struct l7_track_stats *st);
/* Frees the tracker and its parsers; NULL is a no-op. */
void l7_track__free(struct l7_track *tk);

#endif
