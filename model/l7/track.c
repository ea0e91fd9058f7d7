#include "track.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hash.h"
#include "model/sanitize.h"
#include "util/grow.h"

#define STACK_RING 16 /* request starts remembered per connection, for their stacks */
#define HELD_IO 8     /* messages counted before the session is known (HTTP/2 or gRPC) */

struct conn {
	struct conn *next;
	uint32_t tgid;
	int32_t fd;
	uint64_t gen;
	uint8_t peer[16]; /* datagram sockets: one parser per peer */
	uint16_t peer_port;
	bool udp, ignored, segs_known;
	uint32_t peer_pid;	 /* Unix-domain: the peer's pid, 0 if unknown */
	char path[L7_PATH_MAX]; /* Unix-domain: the socket path, sanitized; "" if unknown */
	enum l7_proto proto;
	enum l7_role role;
	struct l7_parser *parser;
	uint32_t session;
	/* A parser that names its protocol later (HTTP/2 carrying gRPC): the session waits for
	 * it, its key and the I/O of the first messages held here. */
	bool has_session;
	struct l7_session_key key;
	char comm[16];
	uint64_t cgroup_id;
	struct {
		uint8_t dir;
		uint64_t bytes, segs_in, segs_out, ts;
	} held[HELD_IO];
	unsigned nheld;
	uint32_t segs_in, segs_out;
	uint64_t last_ns;
	struct {
		uint64_t ts;
		uint32_t tid;
		int32_t stack_id;
	} starts[STACK_RING];
	unsigned nstart;
	int32_t last_stack; /* latest stack id seen on a request, -1 if none */
	uint64_t undecoded; /* the parser's count, as added to the table */
	/* Counting elsewhere: the key of the request at hand (when one alone was waiting), the
	 * records paired, whether the connection was named. */
	uint64_t req_key, req_key_ts;
	bool req_key_ok, count_named;
	unsigned nrec;
};

/* Sessions and endpoints named for counting elsewhere: numbers that stay valid when the
 * table is emptied. */
struct count_sess {
	struct l7_session_key key;
	char comm[16];
	uint64_t cgroup_id;
};

struct count_ep {
	uint8_t proto, role;
	char name[L7_ENDPOINT_MAX];
};

struct l7_track {
	struct l7_table *t;
	struct l7_topics *topics; /* Kafka topic ids, shared by every connection */
	unsigned mask;
	struct conn **buckets;
	size_t nbuckets, nconns;
	l7_trace_fn trace;
	void *trace_ctx;
	l7_stack_fn stack;
	void *stack_ctx;
	l7_ident_fn ident;
	void *ident_ctx;
	const struct l7_count_ops *count;
	void *count_ctx;
	struct count_sess *csess;
	size_t ncsess, csess_cap;
	uint32_t *row_sess; /* by table session row: its session number + 1 when last seen */
	size_t row_sess_cap;
	struct count_ep *ceps;
	size_t nceps, ceps_cap;
	uint64_t *ckeys; /* request keys named: open addressing, 0 = free (key 0 is never named) */
	size_t nckeys, ckeys_cap;
	struct l7_track_stats st;
};

struct l7_track *l7_track__new(struct l7_table *t, unsigned proto_mask)
{
	struct l7_track *tk = calloc(1, sizeof(*tk));

	if (!tk)
		return NULL;
	tk->t = t;
	tk->mask = proto_mask ? proto_mask : ~0u;
	tk->nbuckets = 4096;
	tk->buckets = calloc(tk->nbuckets, sizeof(*tk->buckets));
	tk->topics = l7_topics__new();
	if (!tk->buckets || !tk->topics) {
		free(tk->buckets);
		l7_topics__free(tk->topics);
		free(tk);
		return NULL;
	}
	return tk;
}

void l7_track__set_trace(struct l7_track *tk, l7_trace_fn fn, void *ctx)
{
	tk->trace = fn;
	tk->trace_ctx = ctx;
}

void l7_track__set_ident(struct l7_track *tk, l7_ident_fn fn, void *ctx)
{
	tk->ident = fn;
	tk->ident_ctx = ctx;
}

void l7_track__set_stacks(struct l7_track *tk, l7_stack_fn fn, void *ctx)
{
	tk->stack = fn;
	tk->stack_ctx = ctx;
}

static size_t bucket_of(const struct l7_track *tk, uint32_t tgid, int32_t fd, uint64_t gen)
{
	return (hash_pair(tgid, (uint32_t)fd) ^ hash_mix(gen)) & (tk->nbuckets - 1);
}

struct rec_ctx {
	struct l7_track *tk;
	struct conn *c;
	uint32_t tid;
};

static int session_open(struct l7_track *tk, struct conn *c);
static void count_name(struct l7_track *tk, struct conn *c, const struct l7_record *r);
static bool count_eligible(const struct conn *c);

static void on_record(void *vctx, const struct l7_record *r)
{
	struct rec_ctx *x = vctx;
	struct l7_track *tk = x->tk;
	struct conn *c = x->c;
	struct l7_slow *slow = NULL;
	uint32_t tid = x->tid;
	int32_t stack_id = -1;

	if (c->ignored || (!c->has_session && (session_open(tk, c) || c->ignored)))
		return;

	for (unsigned i = 0; i < STACK_RING && i < c->nstart; i++) {
		unsigned k = (c->nstart - 1 - i) % STACK_RING;

		if (c->starts[k].ts == r->req_start_ns) {
			tid = c->starts[k].tid;
			stack_id = c->starts[k].stack_id;
			break;
		}
	}
	if (l7_table__record(tk->t, c->session, r, tid, &slow))
		return;
	tk->st.records++;
	if (tk->count)
		count_name(tk, c, r);
	if (slow && tk->stack && stack_id >= 0) {
		char buf[4096];

		if (tk->stack(tk->stack_ctx, c->tgid, stack_id, buf, sizeof(buf)))
			l7_slow__set_stack(slow, buf);
	}
	if (tk->trace)
		tk->trace(tk->trace_ctx, l7_table__get_session(tk->t, c->session), r, tid);
}

static bool ephemeral(uint16_t port)
{
	return port >= 32768;
}

/* The traced process's role when the capture did not see accept or connect: the side with
 * the ephemeral port is the client; when both or neither are ephemeral (a server listening on
 * a port the kernel picked), or on a Unix-domain datagram socket that is not connected to a
 * bound one, the first message's kind decides where protocol p can tell a request, else the
 * higher port is the client's (a Unix-domain socket is a client). */
static enum l7_role guess_role(const struct l7_msg *m, enum l7_proto p, const uint8_t *data)
{
	int req;

	if (m->role != L7_ROLE_UNKNOWN)
		return m->role;
	if (m->uds && !m->udp)
		return L7_ROLE_CLIENT; /* the capture tells which side accepted; else a guess */
	if (!m->uds && ephemeral(m->rport) != ephemeral(m->lport))
		return ephemeral(m->rport) ? L7_ROLE_SERVER : L7_ROLE_CLIENT;
	req = m->no_data ? -1 : l7_proto_is_request(p, data, m->cap);
	if (req >= 0)
		return (req == 1) == (m->dir == L7_DIR_SEND) ? L7_ROLE_CLIENT : L7_ROLE_SERVER;
	return m->uds || m->lport > m->rport ? L7_ROLE_CLIENT : L7_ROLE_SERVER;
}

static void conn_end(struct l7_track *tk, struct conn *c)
{
	if (c->parser && !c->has_session && !c->ignored && c->nheld)
		session_open(tk, c); /* the bytes of a connection that never said more */
	if (c->parser) {
		struct rec_ctx x = {tk, c, 0};

		l7_parser__close(c->parser, on_record, &x);
		tk->st.parse_errors += l7_parser__errors(c->parser);
		l7_parser__free(c->parser);
	}
	free(c);
	tk->nconns--;
}

/* Counts a message of bytes in direction dir at ts, with the TCP segments each way since the
 * connection's previous message. */
static void io(struct l7_track *tk, const struct conn *c, uint8_t dir, uint64_t bytes,
	       uint64_t segs_in, uint64_t segs_out, uint64_t ts)
{
	l7_table__io(tk->t, c->session, (enum l7_dir)dir, bytes,
		     dir == L7_DIR_SEND ? segs_out : segs_in, ts);
	/* The other way's segments since (an ACK, a segment sent after its call returned, the
	 * calls counted in the kernel): counted with no bytes. */
	if (dir == L7_DIR_SEND ? segs_in : segs_out)
		l7_table__io(tk->t, c->session, dir == L7_DIR_SEND ? L7_DIR_RECV : L7_DIR_SEND, 0,
			     dir == L7_DIR_SEND ? segs_in : segs_out, ts);
}

/* Names the container and pod of table session idx (process tgid) once. */
static void session_ident(struct l7_track *tk, uint32_t idx, uint32_t tgid)
{
	if (tk->ident && !l7_table__get_session(tk->t, idx)->ident_done) {
		char con[128] = "", pod[128] = "";

		tk->ident(tk->ident_ctx, tgid, con, sizeof(con), pod, sizeof(pod));
		l7_table__set_ident(tk->t, idx, con, pod);
	}
}

/* Opens the session of c, now that its parser names the protocol (or must: a record, the
 * end, enough messages), and counts the I/O held until then. A protocol not traced ends the
 * connection's parsing. 0 or -ENOMEM. */
static int session_open(struct l7_track *tk, struct conn *c)
{
	enum l7_proto p = l7_parser__proto(c->parser, NULL);

	c->proto = p;
	c->key.proto = (uint8_t)p;
	if (!(tk->mask & (1u << p))) {
		c->ignored = true; /* its parser is freed after the feed at hand */
		return 0;
	}
	if (l7_table__session(tk->t, &c->key, c->comm, c->cgroup_id, &c->session))
		return -ENOMEM;
	c->has_session = true;
	session_ident(tk, c->session, c->key.tgid);
	for (unsigned i = 0; i < c->nheld; i++)
		io(tk, c, c->held[i].dir, c->held[i].bytes, c->held[i].segs_in, c->held[i].segs_out,
		   c->held[i].ts);
	c->nheld = 0;
	return 0;
}

/* Makes the new connection of m ready: protocol, role, parser, and the session unless the
 * parser names the protocol later. */
static int conn_setup(struct l7_track *tk, struct conn *c, const struct l7_msg *m,
		      const uint8_t *data)
{
	struct l7_session_key *k = &c->key;
	enum l7_proto p;
	uint16_t server_port;
	bool settled;

	c->role = guess_role(m, m->hint, data);
	server_port = m->uds ? 0 : c->role == L7_ROLE_SERVER ? m->lport : m->rport;
	p = l7_infer(data, m->cap, m->dir, c->role, server_port);
	if (p == L7_UNKNOWN)
		p = m->hint;
	if (p != m->hint) {
		c->role = guess_role(m, p, data);
		server_port = m->uds ? 0 : c->role == L7_ROLE_SERVER ? m->lport : m->rport;
	}
	if (p <= L7_UNKNOWN || p >= L7_PROTO_MAX || !(tk->mask & l7_proto_family(p))) {
		c->ignored = true;
		return 0;
	}
	c->proto = p;
	memset(k, 0, sizeof(*k));
	k->tgid = m->tgid;
	k->v6 = m->v6;
	k->l4_role = m->uds ? (m->udp ? L7_L4_UNIX_DGRAM : L7_L4_UNIX)
			    : (m->udp ? L7_L4_UDP : L7_L4_TCP);
	k->l7_role = (uint8_t)c->role;
	k->proto = (uint8_t)p;
	k->ssl = m->ssl;
	k->server_port = server_port;
	memcpy(k->client_ip, c->role == L7_ROLE_SERVER ? m->raddr : m->laddr, 16);
	memcpy(k->server_ip, c->role == L7_ROLE_SERVER ? m->laddr : m->raddr, 16);
	if (m->uds) {
		k->peer_pid = c->peer_pid;
		memcpy(k->path, c->path, sizeof(k->path));
	}
	memcpy(c->comm, m->comm, sizeof(c->comm));
	c->cgroup_id = m->cgroup_id;
	c->parser = l7_parser__new(p, c->role, m->udp);
	if (!c->parser)
		return -ENOMEM;
	l7_parser__set_topics(c->parser, tk->topics);
	l7_parser__proto(c->parser, &settled);
	return settled ? session_open(tk, c) : 0;
}

static struct conn *conn_find(struct l7_track *tk, const struct l7_msg *m, bool make)
{
	size_t b = bucket_of(tk, m->tgid, m->fd, m->gen);
	struct conn *c;

	for (c = tk->buckets[b]; c; c = c->next)
		if (c->tgid == m->tgid && c->fd == m->fd && c->gen == m->gen &&
		    (!c->udp || (c->peer_port == m->rport && !memcmp(c->peer, m->raddr, 16))))
			return c;
	if (!make)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->tgid = m->tgid;
	c->fd = m->fd;
	c->gen = m->gen;
	c->udp = m->udp;
	c->last_stack = -1;
	if (c->udp) {
		memcpy(c->peer, m->raddr, 16);
		c->peer_port = m->rport;
	}
	c->next = tk->buckets[b];
	tk->buckets[b] = c;
	tk->nconns++;
	tk->st.conns++;
	return c;
}

/* Keeps the peer of a Unix-domain connection for its session: the path as text (an abstract
 * name as "@name", a pathname up to its NUL), sanitized and cut to fit. */
static void set_peer(struct conn *c, const struct l7_msg *m, const uint8_t *data)
{
	char tmp[SANITIZE_MAX(L7_UNIX_PATH) + 2];
	size_t n = m->cap < L7_UNIX_PATH ? m->cap : L7_UNIX_PATH, used = 0, cut;

	c->peer_pid = m->peer_pid;
	if (n && !data[0]) {
		tmp[used++] = '@';
		data++, n--; /* abstract: every byte is the name, NULs too */
	} else {
		n = strnlen((const char *)data, n);
	}
	used += sanitize_text((const char *)data, n, tmp + used);
	/* Cut on a character boundary: continuation bytes are 10xxxxxx. */
	for (cut = used < sizeof(c->path) ? used : sizeof(c->path) - 1;
	     cut < used && ((unsigned char)tmp[cut] & 0xc0) == 0x80; cut--)
		;
	memcpy(c->path, tmp, cut);
	c->path[cut] = 0;
}

/* Unlinks and ends connection c. */
static void conn_remove(struct l7_track *tk, struct conn *c)
{
	struct conn **pp = &tk->buckets[bucket_of(tk, c->tgid, c->fd, c->gen)];

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	conn_end(tk, c);
}

/* Unlinks and ends every connection of (tgid, fd, gen): one, or one per datagram peer. */
static void close_conn(struct l7_track *tk, const struct l7_msg *m)
{
	size_t b = bucket_of(tk, m->tgid, m->fd, m->gen);
	struct conn **pp = &tk->buckets[b];

	while (*pp) {
		struct conn *c = *pp;

		if (c->tgid == m->tgid && c->fd == m->fd && c->gen == m->gen) {
			*pp = c->next;
			conn_end(tk, c);
		} else {
			pp = &c->next;
		}
	}
}

void l7_track__msg(struct l7_track *tk, const struct l7_msg *m, const uint8_t *data)
{
	struct conn *c;
	uint64_t segs_in = 0, segs_out = 0, ts;
	bool request;

	tk->st.msgs++;
	if (m->type == L7_MSG_CLOSE) {
		close_conn(tk, m);
		return;
	}
	if (m->type == L7_MSG_PEER) {
		c = conn_find(tk, m, true);
		if (c)
			set_peer(c, m, data);
		return;
	}
	c = conn_find(tk, m, true);
	if (!c)
		return;
	c->last_ns = m->ts_ns;
	if (!c->parser && !c->ignored) {
		if (m->no_data)
			return; /* decide on bytes, not on a sendfile */
		if (conn_setup(tk, c, m, data))
			return;
	}
	if (c->ignored) {
		tk->st.unknown++;
		return;
	}
	if (m->segs_valid) {
		if (c->segs_known) {
			/* The counts only grow; a record behind the one before it (two threads'
			 * calls on one socket, read in one order and sent in the other) adds
			 * nothing and leaves the base where it was. */
			int32_t din = (int32_t)(m->segs_in - c->segs_in);
			int32_t dout = (int32_t)(m->segs_out - c->segs_out);

			segs_in = din > 0 ? (uint64_t)din : 0;
			segs_out = dout > 0 ? (uint64_t)dout : 0;
			if (din > 0)
				c->segs_in = m->segs_in;
			if (dout > 0)
				c->segs_out = m->segs_out;
		} else {
			/* a connection seen from its start counts from zero */
			if (m->role != L7_ROLE_UNKNOWN) {
				segs_in = m->segs_in;
				segs_out = m->segs_out;
			}
			c->segs_in = m->segs_in;
			c->segs_out = m->segs_out;
			c->segs_known = true;
		}
	}
	if (c->has_session) {
		io(tk, c, (uint8_t)m->dir, m->len, segs_in, segs_out, m->ts_ns);
	} else {
		c->held[c->nheld].dir = (uint8_t)m->dir;
		c->held[c->nheld].bytes = m->len;
		c->held[c->nheld].segs_in = segs_in;
		c->held[c->nheld].segs_out = segs_out;
		c->held[c->nheld++].ts = m->ts_ns;
	}
	request = (m->dir == L7_DIR_SEND) == (c->role == L7_ROLE_CLIENT);
	/* A chunk's time is when its bytes were there: at the return of a receive, and of a
	 * server's send (a response's last byte); a client's request starts when its send
	 * begins (on loopback the send itself runs the receiver's TCP path). */
	ts = c->role == L7_ROLE_CLIENT && m->dir == L7_DIR_SEND && m->start_ns ? m->start_ns
									      : m->ts_ns;
	if (request) {
		unsigned k = c->nstart++ % STACK_RING;

		/* The capture walks the stack of some requests only: the others get the
		 * connection's latest. */
		if (m->stack_id >= 0)
			c->last_stack = m->stack_id;
		c->starts[k].ts = ts;
		c->starts[k].tid = m->tid;
		c->starts[k].stack_id = c->last_stack;
	}
	if (tk->count && request && count_eligible(c)) {
		c->req_key_ok = !m->no_data && m->cap == m->len && !l7_parser__pending(c->parser) &&
				tk->count->key(tk->count_ctx, c->proto, data, m->len, &c->req_key);
		c->req_key_ts = ts;
	}
	{
		struct rec_ctx x = {tk, c, m->tid};

		bool settled;
		uint64_t u;

		l7_parser__feed(c->parser, m->dir, data, m->no_data ? 0 : m->cap, m->len, ts,
				on_record, &x);
		u = l7_parser__undecoded(c->parser);
		if (u != c->undecoded && !c->ignored) {
			l7_table__add_undecoded(tk->t, u - c->undecoded);
			tk->st.undecoded += u - c->undecoded;
			c->undecoded = u;
		}
		if (c->ignored) {
			tk->st.parse_errors += l7_parser__errors(c->parser);
			l7_parser__free(c->parser);
			c->parser = NULL;
			return;
		}
		l7_parser__proto(c->parser, &settled);
		if (!c->has_session && (settled || c->nheld == HELD_IO))
			session_open(tk, c);
	}
	/* A datagram peer with nothing pending is done: a DNS server sees a new source port per
	 * query, and keeping each one until the socket closes would grow without bound. A
	 * Unix-domain datagram socket keeps one parser, and with it its peer, until it closes. */
	if (c->udp && !m->uds && !l7_parser__pending(c->parser))
		conn_remove(tk, c);
}

/* Whether c's plain exchanges may be counted elsewhere. */
static bool count_eligible(const struct conn *c)
{
	return c->has_session && c->role != L7_ROLE_UNKNOWN && !c->udp &&
	       c->key.l4_role == L7_L4_TCP && !c->key.ssl &&
	       (c->proto == L7_HTTP || c->proto == L7_REDIS);
}

/* The slot of key h in the named keys (its own, or the free one it would take). */
static size_t ckey_slot(const struct l7_track *tk, uint64_t h)
{
	size_t mask = tk->ckeys_cap - 1, i = hash_mix(h) & mask;

	while (tk->ckeys[i] && tk->ckeys[i] != h)
		i = (i + 1) & mask;
	return i;
}

/* Adds key h to the named ones; 1 when new, 0 when known, -ENOMEM. */
static int ckey_add(struct l7_track *tk, uint64_t h)
{
	size_t i;

	if (!h)
		return 0;
	if ((tk->nckeys + 1) * 2 > tk->ckeys_cap) {
		size_t ncap = tk->ckeys_cap ? tk->ckeys_cap * 2 : 256, ocap = tk->ckeys_cap;
		uint64_t *old = tk->ckeys;

		tk->ckeys = calloc(ncap, sizeof(*tk->ckeys));
		if (!tk->ckeys) {
			tk->ckeys = old;
			return -ENOMEM;
		}
		tk->ckeys_cap = ncap;
		for (size_t j = 0; j < ocap; j++)
			if (old[j])
				tk->ckeys[ckey_slot(tk, old[j])] = old[j];
		free(old);
	}
	i = ckey_slot(tk, h);
	if (tk->ckeys[i])
		return 0;
	tk->ckeys[i] = h;
	tk->nckeys++;
	return 1;
}

/* The number of endpoint (proto, role, name), given on first use; -1 on ENOMEM. */
static long count_ep_of(struct l7_track *tk, uint8_t proto, uint8_t role, const char *name)
{
	struct count_ep *e;

	for (size_t i = tk->nceps; i-- > 0;)
		if (tk->ceps[i].proto == proto && tk->ceps[i].role == role &&
		    !strcmp(tk->ceps[i].name, name))
			return (long)i;
	if (ARRAY_GROW(tk->ceps, tk->ceps_cap, tk->nceps + 1))
		return -1;
	e = &tk->ceps[tk->nceps];
	e->proto = proto;
	e->role = role;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return (long)tk->nceps++;
}

static bool count_sess_is(const struct count_sess *s, const struct conn *c)
{
	return !memcmp(&s->key, &c->key, sizeof(c->key)) && s->cgroup_id == c->cgroup_id &&
	       !strcmp(s->comm, c->comm);
}

/* The number of c's session, given on first use; -1 on ENOMEM. Most connections share their
 * table row's number: looked up through the row first (rows are renumbered when the table is
 * emptied, hence the check), else among all. */
static long count_sess_of(struct l7_track *tk, const struct conn *c)
{
	uint32_t hint = c->session < tk->row_sess_cap ? tk->row_sess[c->session] : 0;
	struct count_sess *s;
	size_t i;

	if (hint && hint <= tk->ncsess && count_sess_is(&tk->csess[hint - 1], c))
		return (long)hint - 1;
	for (i = 0; i < tk->ncsess && !count_sess_is(&tk->csess[i], c); i++)
		;
	if (i == tk->ncsess) {
		if (ARRAY_GROW(tk->csess, tk->csess_cap, tk->ncsess + 1))
			return -1;
		s = &tk->csess[tk->ncsess++];
		s->key = c->key;
		memcpy(s->comm, c->comm, sizeof(s->comm));
		s->cgroup_id = c->cgroup_id;
	}
	if (!ARRAY_GROW_ZERO(tk->row_sess, tk->row_sess_cap, (size_t)c->session + 1))
		tk->row_sess[c->session] = (uint32_t)i + 1;
	return (long)i;
}

/* Redis commands after which the server sends on its own (subscriptions, replication): their
 * answers are not one reply, so they are never counted elsewhere. */
static bool redis_pushes(const char *cmd)
{
	static const char *const push[] = {"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR",
					   "SYNC",	"PSYNC"};

	for (size_t i = 0; i < sizeof(push) / sizeof(push[0]); i++)
		if (!strcmp(cmd, push[i]))
			return true;
	return false;
}

/* After record r of connection c: names the key of its request when it is new, and the
 * connection once it has paired two requests. */
static void count_name(struct l7_track *tk, struct conn *c, const struct l7_record *r)
{
	long n;

	if (!count_eligible(c))
		return;
	if (c->req_key_ok && r->req_start_ns == c->req_key_ts && !r->no_response && !r->error &&
	    r->endpoint[0] && !(c->proto == L7_REDIS && redis_pushes(r->endpoint))) {
		n = count_ep_of(tk, (uint8_t)c->proto, (uint8_t)c->role, r->endpoint);
		if (n >= 0 && ckey_add(tk, c->req_key) == 1)
			tk->count->endpoint(tk->count_ctx, c->req_key, (uint32_t)n);
	}
	c->req_key_ok = false;
	if (c->count_named || ++c->nrec < 2)
		return;
	n = count_sess_of(tk, c);
	if (n < 0)
		return;
	c->count_named = true;
	tk->st.count_conns++;
	tk->count->conn(tk->count_ctx, c->tgid, c->fd, c->gen, (uint32_t)n);
}

void l7_track__set_count(struct l7_track *tk, const struct l7_count_ops *ops, void *ctx)
{
	tk->count = ops;
	tk->count_ctx = ctx;
}

int l7_track__counted(struct l7_track *tk, uint32_t sess, uint32_t ep, const struct l7_stats *d)
{
	const struct count_sess *cs;
	uint32_t idx;
	int err;

	if (sess >= tk->ncsess || ep >= tk->nceps)
		return -EINVAL;
	cs = &tk->csess[sess];
	err = l7_table__session(tk->t, &cs->key, cs->comm, cs->cgroup_id, &idx);
	if (err)
		return err;
	session_ident(tk, idx, cs->key.tgid);
	err = l7_table__counted(tk->t, idx, tk->ceps[ep].name, d);
	if (!err) {
		tk->st.records += d->req_count;
		tk->st.counted += d->req_count;
	}
	return err;
}

uint64_t l7_track__count_slow(const struct l7_track *tk, uint32_t ep)
{
	const struct count_ep *e;

	if (ep >= tk->nceps)
		return UINT64_MAX;
	e = &tk->ceps[ep];
	return l7_table__slow_floor(tk->t, e->proto, e->role, e->name);
}

uint32_t l7_track__count_endpoints(const struct l7_track *tk)
{
	return (uint32_t)tk->nceps;
}

void l7_track__expire(struct l7_track *tk, uint64_t now_ns, uint64_t idle_ns)
{
	for (size_t b = 0; b < tk->nbuckets; b++) {
		struct conn **pp = &tk->buckets[b];

		while (*pp) {
			struct conn *c = *pp;

			if (c->last_ns + idle_ns < now_ns) {
				*pp = c->next;
				conn_end(tk, c);
			} else {
				pp = &c->next;
			}
		}
	}
}

void l7_track__flush(struct l7_track *tk)
{
	l7_track__expire(tk, UINT64_MAX, 0);
}

void l7_track__stats(const struct l7_track *tk, struct l7_track_stats *st)
{
	*st = tk->st;
	st->open_conns = tk->nconns;
	for (size_t b = 0; b < tk->nbuckets; b++)
		for (struct conn *c = tk->buckets[b]; c; c = c->next)
			if (c->parser)
				st->parse_errors += l7_parser__errors(c->parser);
}

void l7_track__free(struct l7_track *tk)
{
	if (!tk)
		return;
	for (size_t b = 0; b < tk->nbuckets; b++) {
		struct conn *c = tk->buckets[b];

		while (c) {
			struct conn *next = c->next;

			l7_parser__free(c->parser);
			free(c);
			c = next;
		}
	}
	free(tk->buckets);
	l7_topics__free(tk->topics);
	free(tk->csess);
	free(tk->row_sess);
	free(tk->ceps);
	free(tk->ckeys);
	free(tk);
}
