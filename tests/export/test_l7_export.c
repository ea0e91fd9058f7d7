/* Unit tests for export/l7_tables and the .gtop "l7" section: JSON round trips keep every count,
 * the histogram and the slowest requests; bad files give one-line errors; Prometheus text
 * carries gala-gopher's metric names. */
#include <errno.h>
#include <unistd.h>

#include "harness.h"
#include "export/l7_tables.h"
#include "export/snapshot.h"
#include "model/frames.h"
#include "model/strtab.h"

static struct l7_table *sample(void)
{
	struct l7_table *t = l7_table__new();
	struct l7_session_key k;
	uint32_t si;

	memset(&k, 0, sizeof(k));
	k.tgid = 4242;
	k.client_ip[0] = 10, k.client_ip[3] = 7;
	k.server_ip[0] = 127, k.server_ip[3] = 1;
	k.server_port = 5432;
	k.l7_role = L7_ROLE_CLIENT;
	k.proto = L7_PGSQL;
	l7_table__session(t, &k, "pgbench", 77, &si);
	l7_table__io(t, si, L7_DIR_SEND, 1000, 10, 5);
	for (int i = 0; i < 500; i++) {
		struct l7_record r;
		struct l7_slow *slow;

		memset(&r, 0, sizeof(r));
		r.proto = L7_PGSQL;
		r.req_start_ns = r.req_end_ns = 1000000 + (uint64_t)i * 10000;
		r.resp_start_ns = r.resp_end_ns = r.req_start_ns + 1000 + (uint64_t)i * 37;
		r.req_bytes = 50;
		r.resp_bytes = 70;
		r.error = i % 50 == 0;
		r.status = r.error ? 42 : 0;
		snprintf(r.endpoint, sizeof(r.endpoint), "SELECT pgbench_accounts");
		snprintf(r.detail, sizeof(r.detail), "SELECT abalance FROM pgbench_accounts \"q\"");
		if (r.error)
			snprintf(r.errmsg, sizeof(r.errmsg), "relation \"x\" does not exist");
		l7_table__record(t, si, &r, 4243, &slow);
		if (slow)
			l7_slow__set_stack(slow, "PQexec\nmain");
	}
	return t;
}

static void same_stats(const struct l7_stats *a, const struct l7_stats *b)
{
	CHECK(a->req_count == b->req_count && a->resp_count == b->resp_count);
	CHECK(a->err_count == b->err_count && a->bytes_sent == b->bytes_sent);
	CHECK(a->bytes_recv == b->bytes_recv && a->segs_sent == b->segs_sent);
	CHECK(a->lat.count == b->lat.count && a->lat.sum == b->lat.sum);
	CHECK(a->lat.min == b->lat.min && a->lat.max == b->lat.max);
	CHECK(hist_quantile(&a->lat, 0.5) == hist_quantile(&b->lat, 0.5));
	CHECK(hist_quantile(&a->lat, 0.99) == hist_quantile(&b->lat, 0.99));
}

static void same_table(const struct l7_table *a, const struct l7_table *b)
{
	const struct l7_endpoint *ea, *eb;

	CHECK(l7_table__nsessions(a) == l7_table__nsessions(b));
	CHECK(l7_table__nendpoints(a) == l7_table__nendpoints(b));
	CHECK(l7_table__npairs(a) == l7_table__npairs(b));
	if (!l7_table__nsessions(b) || !l7_table__nendpoints(b))
		return;
	CHECK(!memcmp(&l7_table__get_session(a, 0)->key, &l7_table__get_session(b, 0)->key,
		      sizeof(struct l7_session_key)));
	CHECK_STR(l7_table__get_session(b, 0)->comm, "pgbench");
	CHECK(l7_table__get_session(b, 0)->cgroup_id == 77);
	same_stats(&l7_table__get_session(a, 0)->st, &l7_table__get_session(b, 0)->st);
	ea = l7_table__get_endpoint(a, 0);
	eb = l7_table__get_endpoint(b, 0);
	same_stats(&ea->st, &eb->st);
	CHECK(ea->nslow == eb->nslow);
	CHECK(eb->slow[0].rec.resp_end_ns == ea->slow[0].rec.resp_end_ns);
	CHECK_STR(eb->slow[0].rec.detail, ea->slow[0].rec.detail);
	CHECK_STR(eb->slow[0].stack, "PQexec\nmain");
	CHECK(eb->slow[0].tid == 4243);
}

TEST_CASE(json_round_trip)
{
	struct l7_table *t = sample(), *u = l7_table__new();
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	double secs = 0;

	CHECK(l7_json_write(f, t, 2.5, 1) == 0);
	fclose(f);
	CHECK(strstr(buf, "\"sessions\"") && strstr(buf, "\"endpoints\""));
	CHECK(strstr(buf, "\"latency_p50\"") && strstr(buf, "\"throughput_req\": 200"));
	CHECK(l7_json_load(buf, len, "t.json", u, &secs, err, sizeof(err)) == 0);
	CHECK_NUM(secs, 2.5);
	same_table(t, u);
	free(buf);
	l7_table__free(t);
	l7_table__free(u);
}

/* A Unix-domain session keeps its path and peer pid through JSON and shows them as its peer;
 * Prometheus labels it with them in place of addresses. */
TEST_CASE(unix_session_round_trip)
{
	struct l7_table *t = l7_table__new(), *u = l7_table__new();
	struct l7_session_key k;
	char *buf = NULL, err[256], peer[192];
	size_t len = 0;
	FILE *f;
	double secs = 0;
	uint32_t si;

	memset(&k, 0, sizeof(k));
	k.tgid = 77;
	k.l4_role = L7_L4_UNIX;
	k.l7_role = L7_ROLE_CLIENT;
	k.proto = L7_REDIS;
	k.peer_pid = 1234;
	snprintf(k.path, sizeof(k.path), "/run/redis/redis.sock");
	CHECK(l7_table__session(t, &k, "redis-cli", 0, &si) == 0);
	l7_table__io(t, si, L7_DIR_SEND, 10, 0, 5);
	f = open_memstream(&buf, &len);
	CHECK(l7_json_write(f, t, 1, 0) == 0);
	fclose(f);
	CHECK(strstr(buf, "\"l4_role\":\"unix\"") && !strstr(buf, "client_ip"));
	CHECK(l7_json_load(buf, len, "u.json", u, &secs, err, sizeof(err)) == 0);
	CHECK(l7_table__nsessions(u) == 1);
	if (l7_table__nsessions(u) == 1) {
		CHECK(!memcmp(&l7_table__get_session(u, 0)->key, &k, sizeof(k)));
		l7_session_peer(l7_table__get_session(u, 0), peer, sizeof(peer));
		CHECK_STR(peer, "unix:/run/redis/redis.sock pid 1234");
	}
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK(l7_prom_write(f, t, 1) == 0);
	fclose(f);
	CHECK(strstr(buf, "gala_gopher_l7_bytes_sent{tgid=\"77\",comm=\"redis-cli\","
			  "path=\"/run/redis/redis.sock\",peer_pid=\"1234\",l4_role=\"unix\"") != NULL);
	free(buf);
	l7_table__free(t);
	l7_table__free(u);
}

TEST_CASE(bad_files_give_one_line)
{
	struct l7_table *u = l7_table__new();
	char err[256];
	static const char *const bad[][2] = {
		{ "{", "x.json: not JSON" },
		/* jansson quotes the text near the error: here a bad escape of a newline, of ESC */
		{ "{\"errmsg\": \"relation \\\"x\\\n\"}", "x.json: not JSON" },
		{ "{\"errmsg\": \"relation \\\"x\\\x1b[2J\"}", "x.json: not JSON" },
		{ "[]", "x.json: not galatop L7 tables" },
		{ "{\"sessions\":[{}],\"endpoints\":[]}", "x.json: sessions[0]: \"protocol\" is missing" },
		{ "{\"sessions\":[{\"protocol\":\"http\",\"l7_role\":\"server\",\"l4_role\":\"tcp\","
		  "\"client_ip\":\"1.2.3.4\",\"server_ip\":\"nope\"}],\"endpoints\":[]}",
		  "x.json: sessions[0]: \"server_ip\" is not an IP address" },
		{ "{\"sessions\":[],\"endpoints\":[{\"protocol\":\"dns\",\"l7_role\":\"client\","
		  "\"endpoint\":\"a A\",\"latency_hist\":{\"count\":5,\"buckets\":[[1,1,4]]}}]}",
		  "x.json: endpoints[0]: latency_hist.count 5 is not the sum" },
		{ "{\"sessions\":[],\"endpoints\":[{\"protocol\":\"dns\",\"l7_role\":\"client\","
		  "\"endpoint\":\"a A\",\"slowest\":[{\"session\":3}]}]}",
		  "x.json: endpoints[0].slowest[0]: session, tid, status or times out of range" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = l7_json_load(bad[i][0], strlen(bad[i][0]), "x.json", u, NULL, err,
				     sizeof(err));

		CHECK(r == -EINVAL);
		if (strncmp(err, bad[i][1], strlen(bad[i][1])))
			printf("  case %zu: %s\n", i, err);
		CHECK(!strncmp(err, bad[i][1], strlen(bad[i][1])));
		CHECK(!strchr(err, '\n') && !strchr(err, '\x1b'));
	}
	l7_table__free(u);
}

TEST_CASE(snapshot_section)
{
	struct l7_table *t = sample();
	struct snapshot s = { 0 }, r;
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	char path[] = "/tmp/gt-l7-XXXXXX", err[256];
	int fd = mkstemp(path);

	close(fd);
	s.l7 = t;
	s.l7_secs = 3;
	CHECK(snapshot_write(path, &s, err, sizeof(err)) == 0);
	CHECK(snapshot_read(path, ft, &r, err, sizeof(err)) == 0);
	CHECK(r.l7 != NULL && r.nprofiles == 0);
	if (r.l7)
		same_table(t, r.l7);
	CHECK_NUM(r.l7_secs, 3);
	snapshot_release(&r);
	unlink(path);
	frames__free(ft);
	strtab__free(st);
	l7_table__free(t);
}

TEST_CASE(prometheus_and_text)
{
	struct l7_table *t = sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(l7_prom_write(f, t, 2) == 0);
	fclose(f);
	CHECK(strstr(buf, "gala_gopher_l7_req_count{tgid=\"4242\",comm=\"pgbench\",client_ip=\"10.0.0.7\","
			  "server_ip=\"127.0.0.1\",server_port=\"5432\",l4_role=\"tcp\",l7_role=\"client\","
			  "protocol=\"pgsql\",ssl=\"0\"} 500\n") != NULL);
	CHECK(strstr(buf, "gala_gopher_l7_err_count{") && strstr(buf, "} 10\n"));
	CHECK(strstr(buf, "gala_gopher_l7_latency_count{") != NULL);
	CHECK(strstr(buf, "galatop_l7_endpoint_req_count{protocol=\"pgsql\",l7_role=\"client\","
			  "endpoint=\"SELECT pgbench_accounts\"} 500\n") != NULL);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK(l7_text_write(f, t, 2) == 0);
	fclose(f);
	CHECK(strstr(buf, "SELECT pgbench_accounts") && strstr(buf, "4242/pgbench 127.0.0.1:5432"));
	free(buf);
	l7_table__free(t);
}

TEST_CASE(formatting)
{
	char b[16];

	l7_fmt_ns(812, b, sizeof(b), false);
	CHECK_STR(b, "812ns");
	l7_fmt_ns(35200, b, sizeof(b), false);
	CHECK_STR(b, "35.2us");
	l7_fmt_ns(1500000, b, sizeof(b), false);
	CHECK_STR(b, "1.50ms");
	l7_fmt_ns(2310000000ull, b, sizeof(b), false);
	CHECK_STR(b, "2.31s");
	l7_fmt_ns(0, b, sizeof(b), true);
	CHECK_STR(b, "-");
	l7_fmt_count(45000, b, sizeof(b));
	CHECK_STR(b, "45.0k");
}

int main(void)
{
	RUN(json_round_trip);
	RUN(unix_session_round_trip);
	RUN(bad_files_give_one_line);
	RUN(snapshot_section);
	RUN(prometheus_and_text);
	RUN(formatting);
	HARNESS_EXIT();
}
