/* Unit tests for model/l7/track: messages of connections in, session rows out. Connection
 * generations keep a reused fd apart, roles come from accept/connect or the ports, bytes and
 * TCP segments are counted from the socket's counters (both ways at every message), datagram peers get their own parsers,
 * TLS plaintext makes its own session, closes answer nothing, an HTTP/2 connection becomes a
 * gRPC session once its first request says so. Real HTTP/1.1 and HTTP/2 bytes. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "l7_cap.h"
#include "model/l7/track.h"

static const char req[] = "GET /users/42 HTTP/1.1\r\nHost: l7\r\n\r\n";
static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
static const char resp404[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

static struct l7_msg msg(uint32_t tgid, int fd, uint64_t gen, enum l7_dir dir, uint64_t ts,
			 size_t len)
{
	struct l7_msg m;

	memset(&m, 0, sizeof(m));
	m.type = L7_MSG_DATA;
	m.tgid = m.tid = tgid;
	m.fd = fd;
	m.gen = gen;
	m.dir = dir;
	m.ts_ns = ts;
	m.len = m.cap = (uint32_t)len;
	m.role = L7_ROLE_SERVER;
	m.hint = L7_HTTP;
	m.lport = 8080;
	m.rport = 40000;
	m.laddr[0] = 127, m.laddr[3] = 1;
	m.raddr[0] = 127, m.raddr[3] = 2;
	m.stack_id = -1;
	snprintf(m.comm, sizeof(m.comm), "nginx");
	return m;
}

/* One request and its response on (tgid, fd, gen); latency 1 ms. */
static void exchange(struct l7_track *tk, uint32_t tgid, int fd, uint64_t gen, uint64_t ts,
		     const char *answer)
{
	struct l7_msg m = msg(tgid, fd, gen, L7_DIR_RECV, ts, strlen(req));

	l7_track__msg(tk, &m, (const uint8_t *)req);
	m = msg(tgid, fd, gen, L7_DIR_SEND, ts + 1000000, strlen(answer));
	l7_track__msg(tk, &m, (const uint8_t *)answer);
}

static const struct l7_endpoint *endpoint(const struct l7_table *t, const char *prefix)
{
	for (size_t i = 0; i < l7_table__nendpoints(t); i++)
		if (!strncmp(l7_table__get_endpoint(t, i)->name, prefix, strlen(prefix)))
			return l7_table__get_endpoint(t, i);
	return NULL;
}

TEST_CASE(requests_pair_into_sessions_and_endpoints)
{
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);
	const struct l7_session *s;
	const struct l7_endpoint *e;

	for (int i = 0; i < 100; i++)
		exchange(tk, 10, 5, 1, 1000000000ull + (uint64_t)i * 5000000, i % 10 ? resp : resp404);
	CHECK(l7_table__nsessions(t) == 1);
	s = l7_table__get_session(t, 0);
	CHECK(s->key.proto == L7_HTTP && s->key.l7_role == L7_ROLE_SERVER);
	CHECK(s->key.server_port == 8080 && s->key.server_ip[3] == 1 && s->key.client_ip[3] == 2);
	CHECK(s->st.req_count == 100 && s->st.resp_count == 100);
	CHECK(s->st.err_count == 10);
	CHECK(s->st.bytes_recv == 100 * strlen(req));
	e = endpoint(t, "GET");
	CHECK(e != NULL);
	if (e) {
		CHECK(e->st.req_count == 100);
		CHECK(hist_quantile(&e->st.lat, 0.5) >= 980000 && hist_quantile(&e->st.lat, 0.5) <= 1020000);
	}
	l7_track__free(tk);
	l7_table__free(t);
}

TEST_CASE(generations_keep_a_reused_fd_apart)
{
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);
	struct l7_msg m = msg(10, 5, 1, L7_DIR_RECV, 1000, strlen(req)), close;
	struct l7_track_stats st;

	/* Generation 1 gets a request and closes unanswered; generation 2 (same fd, another
	 * peer) answers its own. The close of 1 must not take 2's request. */
	l7_track__msg(tk, &m, (const uint8_t *)req);
	m = msg(10, 5, 2, L7_DIR_RECV, 2000, strlen(req));
	m.raddr[3] = 3;
	l7_track__msg(tk, &m, (const uint8_t *)req);
	memset(&close, 0, sizeof(close));
	close.type = L7_MSG_CLOSE;
	close.tgid = 10;
	close.fd = 5;
	close.gen = 1;
	l7_track__msg(tk, &close, NULL);
	m = msg(10, 5, 2, L7_DIR_SEND, 3000, strlen(resp));
	m.raddr[3] = 3;
	l7_track__msg(tk, &m, (const uint8_t *)resp);
	CHECK(l7_table__nsessions(t) == 2);
	CHECK(l7_table__get_session(t, 0)->st.req_count == 1);
	CHECK(l7_table__get_session(t, 0)->st.resp_count == 0);
	CHECK(l7_table__get_session(t, 1)->st.resp_count == 1);
	l7_track__stats(tk, &st);
	CHECK(st.conns == 2 && st.open_conns == 1 && st.records == 2);
	l7_track__flush(tk);
	l7_track__stats(tk, &st);
	CHECK(st.open_conns == 0);
	l7_track__free(tk);
	l7_table__free(t);
}

/* A message of a connection older than the capture (no role known: from port 45000 to port 80)
 * with the socket's segment counts. */
static struct l7_msg old_msg(enum l7_dir dir, uint64_t ts, size_t len, uint32_t segs_out,
			     uint32_t segs_in)
{
	struct l7_msg m = msg(20, 7, 1, dir, ts, len);

	m.role = L7_ROLE_UNKNOWN;
	m.lport = 45000;
	m.rport = 80;
	m.segs_valid = true;
	m.segs_out = segs_out, m.segs_in = segs_in;
	return m;
}

TEST_CASE(role_from_ports_and_segments_from_counters)
{
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);
	/* A connection older than the capture: the traced process sends to port 80 from an
	 * ephemeral port, so it is the client; segments count from its first message. */
	struct l7_msg m = old_msg(L7_DIR_SEND, 1000, strlen(req), 100, 90);
	const struct l7_session *s;

	l7_track__msg(tk, &m, (const uint8_t *)req);
	m = old_msg(L7_DIR_RECV, 2000, strlen(resp), 101, 93);
	l7_track__msg(tk, &m, (const uint8_t *)resp);
	s = l7_table__get_session(t, 0);
	CHECK(s->key.l7_role == L7_ROLE_CLIENT && s->key.server_port == 80);
	CHECK(s->key.server_ip[3] == 2 && s->key.client_ip[3] == 1);
	/* each message counts both ways' segments since the one before: the segment sent after
	 * the request's call returned shows with the response */
	CHECK(s->st.segs_sent == 1 && s->st.segs_recv == 3);
	CHECK(s->st.req_count == 1 && s->st.resp_count == 1);
	CHECK(s->st.bytes_sent == strlen(req) && s->st.bytes_recv == strlen(resp));
	/* A record whose counts are behind the one before it (two threads' calls on one socket,
	 * read in one order and sent in the other) adds nothing, and the next counts from the
	 * larger base: no wrap to 2^32. */
	m = old_msg(L7_DIR_SEND, 3000, strlen(req), 100, 92);
	l7_track__msg(tk, &m, (const uint8_t *)req);
	CHECK(s->st.segs_sent == 1 && s->st.segs_recv == 3);
	m = old_msg(L7_DIR_RECV, 4000, strlen(resp), 102, 95);
	l7_track__msg(tk, &m, (const uint8_t *)resp);
	CHECK(s->st.segs_sent == 2 && s->st.segs_recv == 5);
	l7_track__free(tk);
	l7_table__free(t);
}

TEST_CASE(tls_plaintext_is_its_own_session)
{
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);
	struct l7_msg m = msg(30, 9, 1, L7_DIR_RECV, 1000, strlen(req));

	exchange(tk, 30, 8, 1, 500, resp);
	m.ssl = true;
	l7_track__msg(tk, &m, (const uint8_t *)req);
	m = msg(30, 9, 1, L7_DIR_SEND, 2000, strlen(resp));
	m.ssl = true;
	l7_track__msg(tk, &m, (const uint8_t *)resp);
	CHECK(l7_table__nsessions(t) == 2);
	CHECK(l7_table__get_session(t, 1)->key.ssl == 1);
	CHECK(l7_table__get_session(t, 1)->st.req_count == 1);
	l7_track__free(tk);
	l7_table__free(t);
}

TEST_CASE(protocol_mask_and_unknown_bytes)
{
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 1u << L7_REDIS);
	struct l7_track_stats st;

	exchange(tk, 40, 3, 1, 1000, resp);
	CHECK(l7_table__nsessions(t) == 0);
	l7_track__stats(tk, &st);
	CHECK(st.unknown == 2 && st.records == 0);
	l7_track__free(tk);
	l7_table__free(t);
	l7_track__free(NULL);
}

/* A Unix-domain connection: its peer record names the session's path (an abstract name as
 * "@name", control bytes sanitized) and peer pid; a datagram one keeps its parser between
 * exchanges. */
TEST_CASE(unix_sockets_carry_path_and_peer_pid)
{
	static const uint8_t path[] = "/run/app.sock\0garbage";
	static const uint8_t abstract[] = "\0app\x01x";
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);
	struct l7_msg m = msg(50, 4, 1, L7_DIR_RECV, 1000, sizeof(path));
	const struct l7_session *s;

	m.type = L7_MSG_PEER;
	m.uds = true;
	m.peer_pid = 999;
	l7_track__msg(tk, &m, path);
	for (int i = 0; i < 2; i++) {
		m = msg(50, 4, 1, L7_DIR_RECV, 2000 + i * 10000, strlen(req));
		m.uds = true;
		l7_track__msg(tk, &m, (const uint8_t *)req);
		m = msg(50, 4, 1, L7_DIR_SEND, 3000 + i * 10000, strlen(resp));
		m.uds = true;
		l7_track__msg(tk, &m, (const uint8_t *)resp);
	}
	m = msg(50, 5, 1, L7_DIR_RECV, 1000, sizeof(abstract) - 1);
	m.type = L7_MSG_PEER;
	m.uds = m.udp = true;
	l7_track__msg(tk, &m, abstract);
	for (int i = 0; i < 2; i++) {
		m = msg(50, 5, 1, L7_DIR_RECV, 2000 + i * 10000, strlen(req));
		m.uds = m.udp = true;
		l7_track__msg(tk, &m, (const uint8_t *)req);
		m = msg(50, 5, 1, L7_DIR_SEND, 3000 + i * 10000, strlen(resp));
		m.uds = m.udp = true;
		l7_track__msg(tk, &m, (const uint8_t *)resp);
	}
	CHECK(l7_table__nsessions(t) == 2);
	s = l7_table__get_session(t, 0);
	CHECK(s->key.l4_role == L7_L4_UNIX && s->key.peer_pid == 999 && s->key.server_port == 0);
	CHECK_STR(s->key.path, "/run/app.sock");
	CHECK(s->st.req_count == 2 && s->st.resp_count == 2);
	s = l7_table__get_session(t, 1);
	CHECK(s->key.l4_role == L7_L4_UNIX_DGRAM && s->key.peer_pid == 0);
	CHECK_STR(s->key.path, "@app\xef\xbf\xbdx");
	CHECK(s->st.req_count == 2 && s->st.resp_count == 2);
	l7_track__free(tk);
	l7_table__free(t);
}

/* A Unix-domain datagram socket that is not connected to a bound one has no role from the
 * kernel: the first message decides. The one that sends a request first is the client, the
 * one that receives it the server; both count the exchanges. */
TEST_CASE(unix_datagram_role_from_the_first_message)
{
	static const uint8_t path[] = "/run/dgram.sock";
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);

	for (int fd = 6; fd <= 7; fd++) {
		/* fd 6 sends requests (a client), fd 7 receives them (a server) */
		enum l7_dir rq = fd == 6 ? L7_DIR_SEND : L7_DIR_RECV;
		struct l7_msg m = msg(60, fd, 1, rq, 1000, sizeof(path));

		m.type = L7_MSG_PEER;
		m.uds = m.udp = true;
		m.role = L7_ROLE_UNKNOWN;
		l7_track__msg(tk, &m, path);
		for (int i = 0; i < 3; i++) {
			m = msg(60, fd, 1, rq, 2000 + i * 10000, strlen(req));
			m.uds = m.udp = true;
			m.role = L7_ROLE_UNKNOWN;
			l7_track__msg(tk, &m, (const uint8_t *)req);
			m = msg(60, fd, 1, !rq, 3000 + i * 10000, strlen(resp));
			m.uds = m.udp = true;
			m.role = L7_ROLE_UNKNOWN;
			l7_track__msg(tk, &m, (const uint8_t *)resp);
		}
	}
	CHECK(l7_table__nsessions(t) == 2);
	for (size_t i = 0; i < 2; i++) {
		const struct l7_session *s = l7_table__get_session(t, i);

		CHECK(s->key.l4_role == L7_L4_UNIX_DGRAM);
		CHECK(s->key.l7_role == (i == 0 ? L7_ROLE_CLIENT : L7_ROLE_SERVER));
		CHECK_STR(s->key.path, "/run/dgram.sock");
		CHECK(s->st.req_count == 3 && s->st.resp_count == 3);
	}
	l7_track__free(tk);
	l7_table__free(t);
}

TEST_CASE(grpc_names_its_session_after_the_first_messages)
{
	const unsigned masks[] = { 0, 1u << L7_GRPC, 1u << L7_HTTP2 };
	struct cap cp;

	cap_load(&cp, "h2_grpc");
	for (size_t k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		struct l7_table *t = l7_table__new();
		struct l7_track *tk = l7_track__new(t, masks[k]);
		const struct l7_session *s;
		const struct l7_endpoint *e;
		uint64_t sent = 0;

		for (size_t i = 0; i < cp.n; i++) {
			struct l7_msg m;

			if (cp.c[i].close)
				continue;
			m = msg(10, 5, 1, cp.c[i].dir, 1000000000ull + i * 1000000, cp.c[i].len);
			m.role = L7_ROLE_CLIENT;
			m.hint = L7_HTTP2;
			m.lport = 40000;
			m.rport = 18202;
			l7_track__msg(tk, &m, cp.c[i].data);
			sent += cp.c[i].dir == L7_DIR_SEND ? cp.c[i].len : 0;
		}
		l7_track__flush(tk);
		if (masks[k] == 1u << L7_HTTP2) {
			/* gRPC is not traced: the connection is dropped once it says it is gRPC */
			CHECK(l7_table__nsessions(t) == 0 && l7_table__records(t) == 0);
		} else {
			CHECK(l7_table__nsessions(t) == 1);
			s = l7_table__get_session(t, 0);
			/* the preface and SETTINGS came before the session was known: counted */
			CHECK(s && s->key.proto == L7_GRPC && s->st.bytes_sent == sent);
			CHECK(s && s->st.req_count == 6 && s->st.err_count == 3);
			e = endpoint(t, "/galatop.Test/Echo");
			CHECK(e && e->proto == L7_GRPC && e->st.req_count == 3);
		}
		l7_track__free(tk);
		l7_table__free(t);
	}
	cap_free(&cp);
}

int main(void)
{
	RUN(requests_pair_into_sessions_and_endpoints);
	RUN(generations_keep_a_reused_fd_apart);
	RUN(role_from_ports_and_segments_from_counters);
	RUN(tls_plaintext_is_its_own_session);
	RUN(protocol_mask_and_unknown_bytes);
	RUN(unix_sockets_carry_path_and_peer_pid);
	RUN(unix_datagram_role_from_the_first_message);
	RUN(grpc_names_its_session_after_the_first_messages);
	HARNESS_EXIT();
}
