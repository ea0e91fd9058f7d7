/* Unit tests for requests counted in the kernel: the request shape both sides agree on
 * (bpf/l7_count.h, here compiled for the host: what the kernel counts and the key it files it
 * under), and the tracker's side (model/l7/track): which connections and request keys it names,
 * and counts added under those numbers landing in the right rows, also after the table was
 * emptied. Real HTTP/1.1 and RESP bytes. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "bpf/l7_count.h"
#include "model/l7/track.h"

static int key_of(const char *s, __u8 proto, __u64 *h)
{
	return l7c_request_copy(s, strlen(s), proto, h);
}

TEST_CASE(http_requests_counted_and_their_keys)
{
	__u64 a = 0, b = 0, c = 0, d = 0;
	char big[401];

	CHECK(key_of("GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", L7_KPROTO_HTTP, &a));
	/* the query and the fragment are not part of the key; the headers neither */
	CHECK(key_of("GET /users/42?x=1 HTTP/1.1\r\nHost: y\r\nAccept: */*\r\n\r\n", L7_KPROTO_HTTP,
		     &b));
	CHECK(a == b);
	CHECK(key_of("GET /users/42#top HTTP/1.1\r\nHost: x\r\n\r\n", L7_KPROTO_HTTP, &c) &&
	      c == a);
	CHECK(key_of("GET /users/43 HTTP/1.1\r\nHost: x\r\n\r\n", L7_KPROTO_HTTP, &c) && c != a);
	CHECK(key_of("HEAD /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", L7_KPROTO_HTTP, &d) && d != a);
	/* the same bytes as RESP: another protocol, another key (or none) */
	CHECK(!key_of("GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", L7_KPROTO_REDIS, &d));
	/* not counted: a body, two requests in one read, a head cut short, a long one */
	CHECK(!key_of("POST /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n", L7_KPROTO_HTTP, &d));
	CHECK(!key_of("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
		      L7_KPROTO_HTTP, &d));
	CHECK(!key_of("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n\r\n", L7_KPROTO_HTTP,
		      &d));
	CHECK(!key_of("GET /a HTTP/1.1\r\nHost: x\r\n", L7_KPROTO_HTTP, &d));
	CHECK(!key_of("GET /a HTTP/1.1\r\nHost: x\r\n\r\nxyz", L7_KPROTO_HTTP, &d));
	memset(big, 'a', 400);
	big[400] = 0;
	memcpy(big, "GET /", 5);
	memcpy(big + 400 - 22, " HTTP/1.1\r\nHost: x\r\n\r\n", 22);
	CHECK(!key_of(big, L7_KPROTO_HTTP, &d)); /* 400 bytes: longer than held */
	/* a target longer than the key's 128 bytes, in a head that fits */
	memset(big, 'a', 200);
	memcpy(big, "GET /", 5);
	memcpy(big + 200, " HTTP/1.1\r\n\r\n", 14);
	CHECK(!key_of(big, L7_KPROTO_HTTP, &d));
	/* "\n\r" can only end a head: at every position of the words the scan reads */
	for (int pos = 20; pos < 60; pos++) {
		char s[128];
		int n = snprintf(s, sizeof(s), "GET /a HTTP/1.1\r\nX: %.*s\r\n\r\n", pos - 20,
				 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");

		CHECK(key_of(s, L7_KPROTO_HTTP, &d));
		CHECK(n < 100);
		memcpy(s + n, "GET /a HTTP/1.1\r\n\r\n", 20);
		CHECK(!key_of(s, L7_KPROTO_HTTP, &d));
	}
}

TEST_CASE(resp_commands_counted_and_their_keys)
{
	__u64 a = 0, b = 0, c = 0;

	CHECK(key_of("*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n", L7_KPROTO_REDIS, &a));
	CHECK(key_of("*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n", L7_KPROTO_REDIS, &b));
	CHECK(a == b); /* the command's name is the key */
	CHECK(key_of("*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$3\r\nbar\r\n", L7_KPROTO_REDIS, &c) &&
	      c != a);
	CHECK(key_of("*1\r\n$4\r\nPING\r\n", L7_KPROTO_REDIS, &c));
	CHECK(key_of("*3\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n0\r\n", L7_KPROTO_REDIS, &c));
	/* not counted: two commands, an inline one, a cut one, bad lengths, too many arguments */
	CHECK(!key_of("*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("PING\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*2\r\n$3\r\nGET\r\n$3\r\nfo", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*2\r\n$3\r\nGET\r\n$4\r\nfoo\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*2\r\n$3\r\nGET\r\n$2\r\nfoo\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*2\r\n$x\r\nGET\r\n$3\r\nfoo\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*0\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*17\r\n$1\r\na\r\n", L7_KPROTO_REDIS, &c));
	CHECK(!key_of("*2\r\n$3\r\nGET\r\n$-1\r\n", L7_KPROTO_REDIS, &c));
}

struct named {
	int conns, eps;
	uint32_t sess, ep;
	uint64_t gen, h;
};

static bool t_key(void *ctx, enum l7_proto p, const uint8_t *data, size_t len, uint64_t *h)
{
	(void)ctx;
	return l7c_request_copy(data, len, (__u8)p, (__u64 *)h);
}

static void t_conn(void *ctx, uint32_t tgid, int32_t fd, uint64_t gen, uint32_t sess)
{
	struct named *n = ctx;

	(void)tgid, (void)fd;
	n->conns++;
	n->gen = gen;
	n->sess = sess;
}

static void t_ep(void *ctx, uint64_t h, uint32_t ep)
{
	struct named *n = ctx;

	n->eps++;
	n->h = h;
	n->ep = ep;
}

static const struct l7_count_ops ops = {t_key, t_conn, t_ep};

static struct l7_msg msg(int fd, enum l7_dir dir, uint64_t ts, size_t len)
{
	struct l7_msg m;

	memset(&m, 0, sizeof(m));
	m.type = L7_MSG_DATA;
	m.tgid = m.tid = 10;
	m.fd = fd;
	m.gen = 7;
	m.dir = dir;
	m.ts_ns = ts;
	m.len = m.cap = (uint32_t)len;
	m.role = L7_ROLE_SERVER;
	m.hint = L7_HTTP;
	m.lport = 8080;
	m.rport = 40000;
	m.stack_id = -1;
	snprintf(m.comm, sizeof(m.comm), "nginx");
	return m;
}

static void exchange(struct l7_track *tk, int fd, uint64_t ts, const char *req, const char *resp)
{
	struct l7_msg m = msg(fd, L7_DIR_RECV, ts, strlen(req));

	l7_track__msg(tk, &m, (const uint8_t *)req);
	m = msg(fd, L7_DIR_SEND, ts + 1000, strlen(resp));
	l7_track__msg(tk, &m, (const uint8_t *)resp);
}

static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

TEST_CASE(track_names_connections_and_keys_then_takes_counts)
{
	struct l7_table *t = l7_table__new();
	struct l7_track *tk = l7_track__new(t, 0);
	struct named n = {0};
	struct l7_stats d = {0};
	struct l7_track_stats ts;
	__u64 h = 0;
	const struct l7_endpoint *e = NULL;

	l7_track__set_count(tk, &ops, &n);
	exchange(tk, 5, 1000000, "GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", ok);
	CHECK(n.eps == 1 && n.conns == 0); /* the key first; the connection after two */
	CHECK(key_of("GET /users/42 HTTP/1.1\r\n\r\n", L7_KPROTO_HTTP, &h) && n.h == h);
	exchange(tk, 5, 2000000, "GET /users/7?q=1 HTTP/1.1\r\nHost: x\r\n\r\n", ok);
	CHECK(n.eps == 2 && n.conns == 1 && n.gen == 7);
	/* "/users/{id}" both: one endpoint number for the two keys */
	CHECK(n.ep == 0 && l7_track__count_endpoints(tk) == 1);
	exchange(tk, 5, 3000000, "GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", ok);
	CHECK(n.eps == 2 && n.conns == 1); /* known key, named connection */
	/* not named: an error's key, a body's */
	exchange(tk, 5, 4000000, "GET /gone HTTP/1.1\r\n\r\n",
		 "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
	exchange(tk, 5, 5000000, "POST /users/1 HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", ok);
	CHECK(n.eps == 2);

	/* 1000 counted requests of 2 us each come back under those numbers */
	d.req_count = d.resp_count = 1000;
	d.bytes_recv = 38000;
	d.bytes_sent = 41000;
	d.first_ns = 6000000;
	d.last_ns = 9000000;
	CHECK(hist_add_bucket(&d.lat, hist_index(2000), 1000, 2000000) == 0);
	CHECK(l7_track__counted(tk, n.sess, n.ep, &d) == 0);
	CHECK(l7_track__counted(tk, n.sess + 1, n.ep, &d) == -EINVAL);
	CHECK(l7_track__counted(tk, n.sess, n.ep + 5, &d) == -EINVAL);
	for (size_t i = 0; i < l7_table__nendpoints(t); i++)
		if (!strcmp(l7_table__get_endpoint(t, i)->name, "GET /users/{id}"))
			e = l7_table__get_endpoint(t, i);
	CHECK(e && e->st.req_count == 1003 && e->st.bytes_recv >= 38000);
	CHECK(e && hist_quantile(&e->st.lat, 0.5) >= 1900 &&
	      hist_quantile(&e->st.lat, 0.5) <= 2100);
	CHECK(l7_table__nsessions(t) == 1 && l7_table__get_session(t, 0)->st.req_count == 1005);
	CHECK(l7_table__get_session(t, 0)->st.bytes_sent >= 41000);
	l7_track__stats(tk, &ts);
	CHECK(ts.counted == 1000 && ts.records == 1005 && ts.count_conns == 1);
	/* the slowest list has room (3 of 8): any answer may enter it */
	CHECK(l7_track__count_slow(tk, n.ep) == 0);
	CHECK(l7_track__count_slow(tk, 99) == UINT64_MAX);
	for (int i = 0; i < 10; i++)
		exchange(tk, 5, 10000000 + (uint64_t)i * 1000000,
			 "GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", ok);
	CHECK(l7_track__count_slow(tk, n.ep) == 1000); /* now full: its eighth's latency */

	/* another connection of the same session: the same session number */
	{
		uint32_t sess = n.sess;

		exchange(tk, 8, 9000000, "GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", ok);
		exchange(tk, 8, 9100000, "GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", ok);
		CHECK(n.conns == 2 && n.sess == sess);
	}

	/* after the table was emptied (periodic output), the numbers still name the rows */
	l7_table__clear(t);
	CHECK(l7_track__counted(tk, n.sess, n.ep, &d) == 0);
	CHECK(l7_table__nsessions(t) == 1 && l7_table__get_session(t, 0)->st.req_count == 1000);
	CHECK(l7_table__get_session(t, 0)->key.server_port == 8080);
	CHECK(l7_table__nendpoints(t) == 1 &&
	      !strcmp(l7_table__get_endpoint(t, 0)->name, "GET /users/{id}"));
	l7_stats_reset(&d);

	/* named no more: a new connection is not */
	l7_track__set_count(tk, NULL, NULL);
	exchange(tk, 6, 20000000, "GET /users/42 HTTP/1.1\r\n\r\n", ok);
	exchange(tk, 6, 21000000, "GET /users/42 HTTP/1.1\r\n\r\n", ok);
	CHECK(n.conns == 2);
	l7_track__free(tk);
	l7_table__free(t);
}

int main(void)
{
	RUN(http_requests_counted_and_their_keys);
	RUN(resp_commands_counted_and_their_keys);
	RUN(track_names_connections_and_keys_then_takes_counts);
	HARNESS_EXIT();
}
