/* Unit tests for the L7 protocol registry (model/l7/proto.c) and the prepared-statement cache
 * the SQL parsers share (model/l7/stmts.c). */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "model/l7/parser.h"

TEST_CASE(every_protocol_has_one_line)
{
	char names[256];

	for (int p = 1; p < L7_PROTO_MAX; p++) {
		const struct l7_proto_info *pi = l7_proto_info((enum l7_proto)p);

		CHECK(pi && pi->id == (enum l7_proto)p && pi->ops && pi->ops->infer &&
		      pi->ops->step && pi->ops->end && pi->ops->lost && pi->label[0]);
		if (!pi)
			continue;
		CHECK(l7_proto_parse(pi->name) == p && !strcmp(l7_proto_str(pi->id), pi->name));
		CHECK(!l7_proto_planned(pi->name));
		CHECK(pi->kernel_guess > L7_UNKNOWN && pi->kernel_guess < L7_PROTO_MAX);
	}
	CHECK(!l7_proto_info(L7_UNKNOWN) && !l7_proto_info(L7_PROTO_MAX));
	CHECK(!strcmp(l7_proto_str(L7_UNKNOWN), "unknown") && l7_proto_parse("unknown") == -1);
	CHECK(l7_proto_info(L7_HTTP)->http_status && !l7_proto_info(L7_PGSQL)->http_status);
	CHECK_STR(l7_proto_names(names, sizeof(names)), "http, pgsql, mysql, redis, dns, http2, grpc");
	/* Cut short, still terminated. */
	CHECK_STR(l7_proto_names(names, 9), "http, pg");
}

TEST_CASE(protocol_lists_and_their_errors)
{
	char err[256];
	unsigned mask = 7;

	CHECK(l7_proto_parse_list("http,dns", &mask, err, sizeof(err)) == 0);
	CHECK(mask == (1u << L7_HTTP | 1u << L7_DNS));
	CHECK(l7_proto_parse_list("redis", &mask, err, sizeof(err)) == 0 && mask == 1u << L7_REDIS);
	CHECK(l7_proto_parse_list("http,smtp", &mask, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "unknown protocol 'smtp' (galatop parses http, pgsql, mysql, redis, dns, "
		       "http2, grpc)");
	CHECK(l7_proto_parse_list("kafka", &mask, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "not yet parsed protocol 'kafka' (galatop parses http, pgsql, mysql, redis, "
		       "dns, http2, grpc)");
	CHECK(l7_proto_parse_list("", &mask, err, sizeof(err)) == -EINVAL);
	CHECK(l7_proto_parse_list("http,", &mask, err, sizeof(err)) == -EINVAL);
	CHECK(l7_proto_parse_list("unknown", &mask, err, sizeof(err)) == -EINVAL);
	CHECK(l7_proto_planned("MongoDB") && !l7_proto_planned("smtp"));
}

TEST_CASE(kernel_mask_follows_the_registry)
{
	unsigned all = 0;

	for (int p = 1; p < L7_PROTO_MAX; p++)
		all |= 1u << l7_proto_info((enum l7_proto)p)->kernel_guess;
	CHECK(l7_proto_kernel_mask(0) == all);
	CHECK(l7_proto_kernel_mask(1u << L7_PGSQL) ==
	      1u << l7_proto_info(L7_PGSQL)->kernel_guess);
	CHECK(l7_proto_kernel_mask(1u << L7_HTTP | 1u << L7_DNS) ==
	      (1u << l7_proto_info(L7_HTTP)->kernel_guess |
	       1u << l7_proto_info(L7_DNS)->kernel_guess));
}

TEST_CASE(statement_cache_keeps_the_newest)
{
	struct l7_stmts c = { 0 };
	char key[16], sql[32];

	CHECK(!l7_stmts_get(&c, "s1"));
	l7_stmts_put(&c, "s1", "SELECT 1");
	l7_stmts_put(&c, "s2", "SELECT 2");
	l7_stmts_put(&c, "s1", "SELECT 11"); /* redefined in place */
	CHECK_STR(l7_stmts_get(&c, "s1"), "SELECT 11");
	CHECK_STR(l7_stmts_get(&c, "s2"), "SELECT 2");
	CHECK(c.n == 2);
	l7_stmts_drop(&c, "s1");
	l7_stmts_drop(&c, "nope");
	CHECK(!l7_stmts_get(&c, "s1") && l7_stmts_get(&c, "s2") && c.n == 1);
	/* Full: the oldest makes room, the newest L7_STMT_MAX stay. */
	for (int i = 0; i < L7_STMT_MAX + 10; i++) {
		snprintf(key, sizeof(key), "%d", i);
		snprintf(sql, sizeof(sql), "SELECT %d", i);
		l7_stmts_put(&c, key, sql);
	}
	CHECK(c.n == L7_STMT_MAX && !l7_stmts_get(&c, "s2") && !l7_stmts_get(&c, "9"));
	CHECK_STR(l7_stmts_get(&c, "10"), "SELECT 10");
	snprintf(key, sizeof(key), "%d", L7_STMT_MAX + 9);
	snprintf(sql, sizeof(sql), "SELECT %d", L7_STMT_MAX + 9);
	CHECK_STR(l7_stmts_get(&c, key), sql);
	l7_stmts_free(&c);
	CHECK(c.n == 0 && !c.v && !l7_stmts_get(&c, "11"));
}

int main(void)
{
	RUN(every_protocol_has_one_line);
	RUN(protocol_lists_and_their_errors);
	RUN(kernel_mask_follows_the_registry);
	RUN(statement_cache_keeps_the_newest);
	HARNESS_EXIT();
}
