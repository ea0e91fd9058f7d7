/* Unit tests for the L7 parsers (model/l7) over exchanges captured from real clients and
 * servers on loopback (tests/model/l7/ *.cap, made with tests/model/l7/capture.py): counts,
 * endpoints, errors and statuses as the client saw them; the same with captures cut short;
 * chunks split at every byte; garbage and hostile input. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "l7_cap.h"
#include "model/l7/parser.h"

static struct recs rs;

TEST_CASE(http_keepalive_statuses_chunked_and_ids)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "http_curl");
	for (int mode = 0; mode < 3; mode++) {
		/* whole chunks; bodies cut to 300 bytes (headers still whole); byte by byte */
		run(&cp, L7_HTTP, false, mode == 1 ? 300 : 0, mode == 2, &rs);
		CHECK(rs.n == 5 && answered(&rs) == 5);
		CHECK(count(&rs, "GET /index.html", NULL) == 1);
		CHECK(count(&rs, "GET /users/{id}", NULL) == 1);
		CHECK(count(&rs, "GET /missing", &err) == 1 && err);
		CHECK(count(&rs, "GET /err", &err) == 1 && err);
		r = find(&rs, "GET /big.txt");
		CHECK(r && r->status == 200 && !r->error && r->resp_bytes > 1000);
		r = find(&rs, "GET /missing");
		CHECK(r && r->status == 404 && !strcmp(r->errmsg, "Not Found"));
		CHECK(r && r->resp_end_ns >= r->req_start_ns);
		r = find(&rs, "GET /users/{id}");
		CHECK(r && !strncmp(r->detail, "GET /users/42 HTTP/1.1", 22));
	}
	cap_free(&cp);
}

TEST_CASE(http_head_has_no_body)
{
	struct cap cp;
	const struct l7_record *r;

	cap_load(&cp, "http_head");
	run(&cp, L7_HTTP, false, 0, false, &rs);
	r = find(&rs, "HEAD /index.html");
	CHECK(rs.n == 1 && r && r->status == 200 && !r->no_response);
	cap_free(&cp);
}

/* A server's parser fed the requests (received) and then the responses (sent, resp_len bytes
 * of which resps is the captured start); rs holds what it emitted. */
static struct l7_parser *http_server_fed(const char *reqs, const char *resps, size_t resp_len,
					 size_t want_pending)
{
	struct l7_parser *p = l7_parser__new(L7_HTTP, L7_ROLE_SERVER, false);

	rs.n = 0;
	CHECK(l7_parser__feed(p, L7_DIR_RECV, (const uint8_t *)reqs, strlen(reqs), strlen(reqs),
			      10, on_record, &rs) == 0);
	CHECK(l7_parser__pending(p) == want_pending);
	CHECK(l7_parser__feed(p, L7_DIR_SEND, (const uint8_t *)resps, strlen(resps), resp_len, 20,
			      on_record, &rs) == 0);
	return p;
}

TEST_CASE(http_pipelining_and_close_delimited)
{
	const char *reqs = "GET /a/1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /b?q=1 HTTP/1.1\r\n"
			   "Content-Length: 5\r\n\r\nhelloGET /c HTTP/1.1\r\n\r\n";
	const char *resps = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3"
			    "\r\n\r\nabcHTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n"
			    "4\r\nwxyz\r\n0\r\n\r\nHTTP/1.0 200 OK\r\n\r\nrest of the body";
	struct l7_parser *p = http_server_fed(reqs, resps, strlen(resps) + 1000, 3);

	CHECK(rs.n == 2 && l7_parser__pending(p) == 1);
	l7_parser__close(p, on_record, &rs);
	CHECK(rs.n == 3 && !rs.r[2].no_response && rs.r[2].resp_bytes == strlen(resps) + 1000 -
		  (size_t)(strstr(resps, "HTTP/1.0") - resps));
	CHECK(!strcmp(rs.r[0].endpoint, "GET /a/{id}") && rs.r[0].status == 200);
	CHECK(!strcmp(rs.r[1].endpoint, "POST /b") && rs.r[1].status == 503 && rs.r[1].error);
	CHECK(!strcmp(rs.r[2].endpoint, "GET /c"));
	l7_parser__free(p);
}

/* Framing header names in any case; a name that only looks like one (another separator, a
 * control byte) is not one; a Content-Length past 64 bits runs to the close. */
/* The first CRLF of a buffer, within its n bytes: a lone CR, a CR at the end, CRs before it. */
TEST_CASE(find_crlf)
{
	static const struct {
		const char *s;
		size_t n;
		long want;
	} cases[] = {
	    {"", 0, -1},
	    {"\r", 1, -1},
	    {"\n", 1, -1},
	    {"\r\n", 2, 0},
	    {"a\r\n", 3, 1},
	    {"a\r\n", 2, -1},
	    {"\r\r\n", 3, 1},
	    {"ab\rc\r\n", 6, 4},
	    {"\n\r\r\rx\r", 6, -1},
	    {"0123456789abcdefghij\r\r\n", 23, 21},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long got = l7_find_crlf((const uint8_t *)cases[i].s, cases[i].n);

		if (got != cases[i].want)
			printf("  case %zu: %ld, want %ld\n", i, got, cases[i].want);
		CHECK(got == cases[i].want);
	}
}

TEST_CASE(http_framing_header_names)
{
	const char *reqs = "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\nGET /3 HTTP/1.1\r\n\r\n"
			   "GET /4 HTTP/1.1\r\n\r\n";
	const char *resps = "HTTP/1.1 200 OK\r\ncontent-LENGTH: 3\r\n\r\nabc"
			    "HTTP/1.1 201 OK\r\nTRANSFER-encoding: Chunked\r\n\r\n"
			    "2\r\nxy\r\n0\r\n\r\n"
			    "HTTP/1.1 202 OK\r\nContent_Length: 9\r\nContent\rLength: 9\r\n"
			    "Content-Length: 000000000000000000002\r\n\r\nzz"
			    "HTTP/1.1 203 OK\r\n"
			    "Content-Length: 99999999999999999999999\r\n\r\nbody";
	struct l7_parser *p = http_server_fed(reqs, resps, strlen(resps), 4);

	/* The fourth response's body runs on: it ends at the close. */
	CHECK(rs.n == 3 && l7_parser__pending(p) == 1);
	CHECK(rs.n == 3 && rs.r[0].status == 200 && rs.r[1].status == 201 && rs.r[2].status == 202);
	CHECK(rs.n == 3 && rs.r[2].resp_bytes == (size_t)(strstr(resps, "HTTP/1.1 203") -
							   strstr(resps, "HTTP/1.1 202")));
	l7_parser__close(p, on_record, &rs);
	CHECK(rs.n == 4 && rs.r[3].status == 203);
	l7_parser__free(p);
}

TEST_CASE(redis_resp2_resp3_errors)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "redis_resp2");
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		run(&cp, L7_REDIS, false, 0, bytewise, &rs);
		/* redis-cli asks COMMAND DOCS first */
		CHECK(count(&rs, "SET", NULL) == 1 && count(&rs, "GET", NULL) == 2);
		CHECK(count(&rs, "INCR", &err) == 1 && err);
		CHECK(count(&rs, "LRANGE", NULL) == 1 && count(&rs, "HGETALL", NULL) == 1);
		CHECK(count(&rs, "PING", NULL) == 1);
		r = find(&rs, "INCR");
		CHECK(r && strstr(r->errmsg, "not an integer"));
		r = find(&rs, "SET");
		CHECK(r && !strcmp(r->detail, "SET k1 hello"));
	}
	cap_free(&cp);
	{
		/* A value far larger than the capture: skipped, the next reply still pairs. */
		static char big[20000];
		const char *get = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
		struct l7_parser *p = l7_parser__new(L7_REDIS, L7_ROLE_CLIENT, false);
		int n = snprintf(big, sizeof(big), "$10000\r\n");

		memset(big + n, 'v', 10000);
		memcpy(big + n + 10000, "\r\n:5\r\n", 7);
		rs.n = 0;
		l7_parser__feed(p, L7_DIR_SEND, (const uint8_t *)get, strlen(get), strlen(get), 1,
				on_record, &rs);
		l7_parser__feed(p, L7_DIR_SEND, (const uint8_t *)get, strlen(get), strlen(get), 1,
				on_record, &rs);
		CHECK(l7_parser__feed(p, L7_DIR_RECV, (const uint8_t *)big, 4096,
				      (size_t)n + 10002, 2, on_record, &rs) == 0);
		CHECK(l7_parser__feed(p, L7_DIR_RECV, (const uint8_t *)big + n + 10002, 5, 5, 3,
				      on_record, &rs) == 0);
		CHECK(rs.n == 2 && rs.r[0].resp_bytes == (size_t)n + 10002 && rs.r[1].resp_end_ns == 3);
		l7_parser__free(p);
	}
	cap_load(&cp, "redis_resp3");
	run(&cp, L7_REDIS, false, 0, false, &rs);
	/* redis-cli -3 says HELLO 3 itself, then the script does */
	CHECK(count(&rs, "HELLO", NULL) == 2 && count(&rs, "HGETALL", NULL) == 1);
	CHECK(count(&rs, "SMEMBERS", NULL) == 1 && count(&rs, "INCRBYFLOAT", NULL) == 1);
	CHECK(count(&rs, "INCR", &err) == 1 && err);
	cap_free(&cp);
}

TEST_CASE(redis_pipelined_benchmark_counts)
{
	struct cap cp;

	cap_load(&cp, "redis_pipeline");
	/* redis-benchmark -n 48 -P 16 -t set,get: 16 commands a write, 16 replies a read */
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		run(&cp, L7_REDIS, false, 0, bytewise, &rs);
		CHECK(count(&rs, "SET", NULL) == 48);
		CHECK(count(&rs, "GET", NULL) == 48);
	}
	cap_free(&cp);
}

TEST_CASE(pgsql_simple_extended_prepared)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "pgsql_simple");
	run(&cp, L7_PGSQL, false, 0, false, &rs);
	CHECK(count(&rs, "CREATE users", NULL) == 1 && count(&rs, "INSERT users", NULL) == 1);
	CHECK(count(&rs, "SELECT users", NULL) == 1);
	CHECK(count(&rs, "SELECT nosuch", &err) == 1 && err);
	r = find(&rs, "SELECT nosuch");
	CHECK(r && !strncmp(r->errmsg, "42P01: ", 7));
	cap_free(&cp);
	/* pgbench -t 3: each transaction is BEGIN, 3 UPDATEs, SELECT, INSERT, END */
	for (int m = 0; m < 2; m++) {
		cap_load(&cp, m ? "pgsql_prepared" : "pgsql_extended");
		for (int bytewise = 0; bytewise < 2; bytewise++) {
			run(&cp, L7_PGSQL, false, 0, bytewise, &rs);
			CHECK(count(&rs, "BEGIN", NULL) == 3 && count(&rs, "END", NULL) == 3);
			/* -M prepared parses each statement once, in a batch of its own */
			CHECK(count(&rs, "PREPARE UPDATE pgbench_accounts", NULL) == (size_t)m);
			CHECK(count(&rs, "UPDATE pgbench_accounts", NULL) == 3);
			CHECK(count(&rs, "UPDATE pgbench_tellers", NULL) == 3);
			CHECK(count(&rs, "UPDATE pgbench_branches", NULL) == 3);
			CHECK(count(&rs, "SELECT pgbench_accounts", NULL) == 3);
			CHECK(count(&rs, "INSERT pgbench_history", NULL) == 3);
		}
		cap_free(&cp);
	}
}

TEST_CASE(mysql_queries_and_error)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "mysql_client");
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		run(&cp, L7_MYSQL, false, 0, bytewise, &rs);
		CHECK(count(&rs, "CREATE users", NULL) == 1 && count(&rs, "INSERT users", NULL) == 1);
		CHECK(count(&rs, "SELECT users", NULL) == 1 && count(&rs, "USE", NULL) == 1);
		CHECK(count(&rs, "SELECT nosuch", &err) == 1 && err);
		/* the client asks SELECT DATABASE() after USE; it stops at the error */
		CHECK(count(&rs, "SELECT", NULL) == 1 && rs.n == 7);
		r = find(&rs, "SELECT nosuch");
		CHECK(r && r->status == 1146 && strstr(r->errmsg, "nosuch"));
	}
	cap_free(&cp);
}

/* COM_STMT_PREPARE / EXECUTE in the binary protocol, as a connector sends them. */
TEST_CASE(mysql_prepared_statements)
{
	static const uint8_t prep[] = "\x22\x00\x00\x00\x16SELECT name FROM users WHERE id=?";
	static const uint8_t prep_ok[] = "\x0c\x00\x00\x01\x00\x07\x00\x00\x00\x01\x00\x01\x00\x00"
					 "\x00\x00" /* stmt 7, 1 column, 1 param */
					 "\x05\x00\x00\x02\x03\x64\x65\x66\x00" /* param def */
					 "\x05\x00\x00\x03\xfe\x00\x00\x02\x00" /* EOF */
					 "\x05\x00\x00\x04\x03\x64\x65\x66\x00" /* column def */
					 "\x05\x00\x00\x05\xfe\x00\x00\x02\x00"; /* EOF */
	static const uint8_t exec[] = "\x0a\x00\x00\x00\x17\x07\x00\x00\x00\x00\x01\x00\x00\x00";
	static const uint8_t rows[] = "\x01\x00\x00\x01\x01"		      /* 1 column */
				      "\x05\x00\x00\x02\x03\x64\x65\x66\x00" /* column def */
				      "\x05\x00\x00\x03\xfe\x00\x00\x02\x00" /* EOF */
				      "\x03\x00\x00\x04\x00\x00\x01"	     /* binary row */
				      "\x05\x00\x00\x05\xfe\x00\x00\x02\x00"; /* EOF */
	struct l7_parser *p = l7_parser__new(L7_MYSQL, L7_ROLE_CLIENT, false);

	rs.n = 0;
	l7_parser__feed(p, L7_DIR_SEND, prep, sizeof(prep) - 1, sizeof(prep) - 1, 1, on_record, &rs);
	l7_parser__feed(p, L7_DIR_RECV, prep_ok, sizeof(prep_ok) - 1, sizeof(prep_ok) - 1, 2,
			on_record, &rs);
	l7_parser__feed(p, L7_DIR_SEND, exec, sizeof(exec) - 1, sizeof(exec) - 1, 3, on_record, &rs);
	l7_parser__feed(p, L7_DIR_RECV, rows, sizeof(rows) - 1, sizeof(rows) - 1, 5, on_record, &rs);
	CHECK(rs.n == 2 && l7_parser__pending(p) == 0);
	CHECK(!strcmp(rs.r[0].endpoint, "PREPARE SELECT users"));
	CHECK(!strcmp(rs.r[1].endpoint, "SELECT users") && rs.r[1].resp_end_ns == 5);
	CHECK(!strcmp(rs.r[1].detail, "EXECUTE SELECT name FROM users WHERE id=?"));
	l7_parser__free(p);
}

TEST_CASE(dns_udp_tcp_and_rcodes)
{
	struct cap cp;
	const struct l7_record *r;

	cap_load(&cp, "dns_udp_a");
	run(&cp, L7_DNS, true, 0, false, &rs);
	r = find(&rs, "www.test.local A");
	CHECK(rs.n == 1 && r && !r->error && r->status == 0);
	cap_free(&cp);
	cap_load(&cp, "dns_udp_nx");
	run(&cp, L7_DNS, true, 0, false, &rs);
	r = find(&rs, "nothing.invalid A");
	CHECK(rs.n == 1 && r && r->error && r->status == 3 && !strcmp(r->errmsg, "NXDOMAIN"));
	cap_free(&cp);
	cap_load(&cp, "dns_tcp");
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		run(&cp, L7_DNS, false, 0, bytewise, &rs);
		r = find(&rs, "www.test.local AAAA");
		CHECK(rs.n == 1 && r && r->error && !strcmp(r->errmsg, "REFUSED"));
	}
	cap_free(&cp);
}

/* Pairing by id: two queries dig sent on one socket (ids 0x1bb3 and 0xea70), their answers
 * in the other order, and an answer to a query sent before the capture (no record). */
TEST_CASE(dns_pairs_by_id_in_any_order)
{
	struct cap a, nx;
	struct l7_parser *p = l7_parser__new(L7_DNS, L7_ROLE_CLIENT, true);
	const struct chunk *qa, *ra, *qnx, *rnx;
	const struct l7_record *r;

	cap_load(&a, "dns_udp_a");
	cap_load(&nx, "dns_udp_nx");
	qa = &a.c[a.n - 2], ra = &a.c[a.n - 1];
	qnx = &nx.c[nx.n - 2], rnx = &nx.c[nx.n - 1];
	CHECK(qa->dir == L7_DIR_SEND && ra->dir == L7_DIR_RECV && qnx->dir == L7_DIR_SEND &&
	      rnx->dir == L7_DIR_RECV);
	rs.n = 0;
	CHECK(l7_parser__feed(p, L7_DIR_RECV, rnx->data, rnx->len, rnx->len, 1, on_record, &rs) ==
	      0);
	CHECK(rs.n == 0);
	l7_parser__feed(p, L7_DIR_SEND, qa->data, qa->len, qa->len, 10, on_record, &rs);
	l7_parser__feed(p, L7_DIR_SEND, qnx->data, qnx->len, qnx->len, 20, on_record, &rs);
	CHECK(l7_parser__pending(p) == 2);
	l7_parser__feed(p, L7_DIR_RECV, rnx->data, rnx->len, rnx->len, 30, on_record, &rs);
	CHECK(rs.n == 1 && l7_parser__pending(p) == 1);
	r = find(&rs, "nothing.invalid A");
	CHECK(r && r->error && r->status == 3 && r->req_start_ns == 20 && r->resp_end_ns == 30);
	l7_parser__feed(p, L7_DIR_RECV, ra->data, ra->len, ra->len, 40, on_record, &rs);
	r = find(&rs, "www.test.local A");
	CHECK(rs.n == 2 && r && !r->error && r->req_start_ns == 10 && r->resp_end_ns == 40);
	/* The same query again, never answered: given up at the close. */
	l7_parser__feed(p, L7_DIR_SEND, qa->data, qa->len, qa->len, 50, on_record, &rs);
	l7_parser__close(p, on_record, &rs);
	CHECK(rs.n == 3 && rs.r[2].no_response && !strcmp(rs.r[2].endpoint, "www.test.local A"));
	l7_parser__free(p);
	cap_free(&a);
	cap_free(&nx);
}

TEST_CASE(inference_from_first_bytes)
{
	struct cap cp;
	static const struct {
		const char *cap;
		enum l7_proto p;
		uint16_t port;
	} cases[] = {
		{ "http_curl", L7_HTTP, 19002 },     { "redis_resp2", L7_REDIS, 19001 },
		{ "pgsql_simple", L7_PGSQL, 19003 }, { "mysql_client", L7_MYSQL, 19004 },
		{ "dns_udp_a", L7_DNS, 53 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t k = 0;

		cap_load(&cp, cases[i].cap);
		while (k < cp.n && cp.c[k].close)
			k++;
		CHECK(k < cp.n && l7_infer(cp.c[k].data, cp.c[k].len, cp.c[k].dir, L7_ROLE_CLIENT,
					   cases[i].port) == cases[i].p);
		cap_free(&cp);
	}
	CHECK(l7_infer((const uint8_t *)"hello world\n", 12, L7_DIR_SEND, L7_ROLE_CLIENT, 80) ==
	      L7_UNKNOWN);
	CHECK(l7_infer((const uint8_t *)"\x16\x03\x01\x02\x00\x01", 6, L7_DIR_SEND, L7_ROLE_CLIENT,
		       443) == L7_UNKNOWN); /* TLS ClientHello */
	CHECK(l7_proto_parse("pgsql") == L7_PGSQL && !strcmp(l7_proto_str(L7_MYSQL), "mysql"));
	CHECK(l7_proto_parse("nope") == -1);
}

TEST_CASE(garbage_resyncs_and_is_counted)
{
	static const char junk[] = "\x01\x02garbage that is no protocol at all\r\n\r\n";
	static const char ok[] = "GET /x HTTP/1.1\r\n\r\n";
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	struct l7_parser *p = l7_parser__new(L7_HTTP, L7_ROLE_CLIENT, false);

	rs.n = 0;
	CHECK(l7_parser__feed(p, L7_DIR_SEND, (const uint8_t *)junk, sizeof(junk) - 1,
			      sizeof(junk) - 1, 1, on_record, &rs) == -EPROTO);
	CHECK(l7_parser__errors(p) == 1);
	CHECK(l7_parser__feed(p, L7_DIR_SEND, (const uint8_t *)ok, sizeof(ok) - 1, sizeof(ok) - 1,
			      2, on_record, &rs) == 0);
	CHECK(l7_parser__feed(p, L7_DIR_RECV, (const uint8_t *)resp, sizeof(resp) - 1,
			      sizeof(resp) - 1, 3, on_record, &rs) == 0);
	CHECK(rs.n == 1 && rs.r[0].status == 200);
	/* A request whose header was not captured: out of sync, its pending request given up. */
	CHECK(l7_parser__feed(p, L7_DIR_SEND, (const uint8_t *)ok, 3, 9000, 4, on_record, &rs) ==
	      -EPROTO);
	l7_parser__close(p, on_record, &rs);
	l7_parser__free(p);
	l7_parser__free(NULL);
	CHECK(l7_parser__new(L7_UNKNOWN, L7_ROLE_CLIENT, false) == NULL);
}

int main(void)
{
	RUN(http_keepalive_statuses_chunked_and_ids);
	RUN(http_head_has_no_body);
	RUN(http_pipelining_and_close_delimited);
	RUN(find_crlf);
	RUN(http_framing_header_names);
	RUN(redis_resp2_resp3_errors);
	RUN(redis_pipelined_benchmark_counts);
	RUN(pgsql_simple_extended_prepared);
	RUN(mysql_queries_and_error);
	RUN(mysql_prepared_statements);
	RUN(dns_udp_tcp_and_rcodes);
	RUN(dns_pairs_by_id_in_any_order);
	RUN(inference_from_first_bytes);
	RUN(garbage_resyncs_and_is_counted);
	HARNESS_EXIT();
}
