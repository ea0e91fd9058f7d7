/* Unit tests for model/l7/table: sessions keyed as gala-gopher's L7Probe, endpoint and pair rows,
 * HTTP errors counted apart, percentiles within the histogram's error, the bounded list of the
 * slowest requests, merging. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "model/l7/table.h"

static struct l7_session_key key(uint32_t tgid, uint16_t port, enum l7_proto p)
{
	struct l7_session_key k;

	memset(&k, 0, sizeof(k));
	k.tgid = tgid;
	k.client_ip[0] = 127, k.client_ip[3] = 1;
	k.server_ip[0] = 127, k.server_ip[3] = 1;
	k.server_port = port;
	k.l7_role = L7_ROLE_SERVER;
	k.proto = (uint8_t)p;
	return k;
}

static struct l7_record rec(const char *ep, uint64_t start, uint64_t lat, int status)
{
	struct l7_record r;

	memset(&r, 0, sizeof(r));
	r.proto = L7_HTTP;
	r.req_start_ns = r.req_end_ns = start;
	r.resp_start_ns = r.resp_end_ns = start + lat;
	r.req_bytes = 100;
	r.resp_bytes = 1000;
	r.status = status;
	r.error = status >= 400;
	snprintf(r.endpoint, sizeof(r.endpoint), "%s", ep);
	snprintf(r.detail, sizeof(r.detail), "%s HTTP/1.1", ep);
	return r;
}

TEST_CASE(sessions_are_keyed_like_the_seed)
{
	struct l7_table *t = l7_table__new();
	struct l7_session_key a = key(10, 80, L7_HTTP), b = a;
	uint32_t ia, ib, ic;

	CHECK(l7_table__session(t, &a, "nginx\x1b[31m", 0, &ia) == 0);
	CHECK(l7_table__session(t, &b, "nginx", 0, &ib) == 0 && ia == ib);
	b.ssl = 1;
	CHECK(l7_table__session(t, &b, "nginx", 0, &ic) == 0 && ic != ia);
	CHECK(l7_table__nsessions(t) == 2);
	/* The comm is sanitized once, when it enters. */
	CHECK(strchr(l7_table__get_session(t, ia)->comm, 0x1b) == NULL);
	l7_table__free(t);
}

TEST_CASE(counts_errors_and_percentiles)
{
	struct l7_table *t = l7_table__new();
	struct l7_session_key k = key(10, 80, L7_HTTP);
	const struct l7_endpoint *e;
	const struct l7_session *s;
	uint32_t si;
	uint64_t ts = 1000000000;

	CHECK(l7_table__session(t, &k, "nginx", 0, &si) == 0);
	/* 1000 requests of 1..1000 us, every 10th a 404, every 100th a 500. */
	for (int i = 1; i <= 1000; i++) {
		struct l7_record r = rec("GET /users/{id}", ts, (uint64_t)i * 1000,
					 i % 100 == 0 ? 500 : i % 10 == 0 ? 404 : 200);

		CHECK(l7_table__record(t, si, &r, 42, NULL) == 0);
		ts += 2000000;
	}
	s = l7_table__get_session(t, si);
	CHECK(s->st.req_count == 1000 && s->st.resp_count == 1000);
	CHECK(s->st.err_count == 100 && s->st.err_4xx == 90 && s->st.err_5xx == 10);
	CHECK(l7_table__nendpoints(t) == 1 && l7_table__npairs(t) == 1);
	e = l7_table__get_endpoint(t, 0);
	CHECK_STR(e->name, "GET /users/{id}");
	CHECK(e->st.req_count == 1000);
	/* Server side: requests received, responses sent. */
	CHECK(e->st.bytes_recv == 100000 && e->st.bytes_sent == 1000000);
	/* p50 500 us, p99 990 us within 2%. */
	CHECK(fabs((double)hist_quantile(&e->st.lat, 0.5) - 500000) <= 500000 * 0.02);
	CHECK(fabs((double)hist_quantile(&e->st.lat, 0.99) - 990000) <= 990000 * 0.02);
	CHECK(e->st.lat.max == 1000000);
	CHECK_NUM(l7_stats_err_ratio(&e->st), 0.1);
	/* The slowest list keeps the slowest, slowest first. */
	CHECK(e->nslow == L7_SLOW_PER_ENDPOINT);
	CHECK(e->slow[0].rec.resp_end_ns - e->slow[0].rec.req_start_ns == 1000000);
	CHECK(e->slow[7].rec.resp_end_ns - e->slow[7].rec.req_start_ns == 993000);
	CHECK(e->slow[0].tid == 42);
	l7_table__free(t);
}

TEST_CASE(unanswered_requests_count_without_latency)
{
	struct l7_table *t = l7_table__new();
	struct l7_session_key k = key(10, 6379, L7_REDIS);
	struct l7_record r = rec("GET", 100, 50, 0);
	uint32_t si;

	l7_table__session(t, &k, "redis", 0, &si);
	r.no_response = true;
	CHECK(l7_table__record(t, si, &r, 1, NULL) == 0);
	CHECK(l7_table__get_session(t, si)->st.req_count == 1);
	CHECK(l7_table__get_session(t, si)->st.resp_count == 0);
	CHECK(l7_table__get_session(t, si)->st.lat.count == 0);
	CHECK(l7_table__get_endpoint(t, 0)->nslow == 0);
	l7_table__free(t);
}

TEST_CASE(slow_entries_carry_sanitized_stacks)
{
	struct l7_table *t = l7_table__new();
	struct l7_session_key k = key(10, 80, L7_HTTP);
	struct l7_record r = rec("GET /", 100, 5000, 200);
	struct l7_slow *slow;
	uint32_t si;

	l7_table__session(t, &k, "nginx", 0, &si);
	CHECK(l7_table__record(t, si, &r, 7, &slow) == 0 && slow);
	CHECK(l7_slow__set_stack(slow, "ngx_http_handler\nmain\x07x\n__libc_start_main") == 0);
	CHECK(strstr(slow->stack, "ngx_http_handler\nmain") == slow->stack);
	CHECK(strchr(slow->stack, '\x07') == NULL);
	l7_table__free(t);
}

TEST_CASE(merge_adds_rows)
{
	struct l7_table *a = l7_table__new(), *b = l7_table__new();
	struct l7_session_key k1 = key(10, 80, L7_HTTP), k2 = key(11, 80, L7_HTTP);
	uint32_t s1, s2;

	l7_table__session(a, &k1, "a", 0, &s1);
	l7_table__session(b, &k2, "b", 0, &s2);
	for (int i = 0; i < 10; i++) {
		struct l7_record r = rec(i % 2 ? "GET /x" : "GET /y", 100, 1000, 200);

		l7_table__record(a, s1, &r, 1, NULL);
		l7_table__record(b, s2, &r, 1, NULL);
	}
	CHECK(l7_table__merge(a, b) == 0);
	CHECK(l7_table__nsessions(a) == 2 && l7_table__nendpoints(a) == 2);
	CHECK(l7_table__get_endpoint(a, 0)->st.req_count == 10);
	CHECK(l7_table__npairs(a) == 4);
	l7_table__clear(a);
	CHECK(l7_table__nsessions(a) == 0 && l7_table__nendpoints(a) == 0);
	l7_table__free(a);
	l7_table__free(b);
	l7_table__free(NULL);
}

int main(void)
{
	RUN(sessions_are_keyed_like_the_seed);
	RUN(counts_errors_and_percentiles);
	RUN(unanswered_requests_count_without_latency);
	RUN(slow_entries_carry_sanitized_stacks);
	RUN(merge_adds_rows);
	HARNESS_EXIT();
}
