/* Unit tests for the HTTP/2 and gRPC parser (model/l7/http2.c) over exchanges captured on
 * loopback (tests/model/l7/h2_*.cap: nghttp against nghttpd, multiplexed with PRIORITY
 * frames; curl --http2-prior-knowledge; python3-grpcio's client against its server with
 * generic handlers), seen from either side, cut short, byte by byte and from the middle; and
 * over frames built here with libnghttp2's own HPACK encoder for what those clients do not
 * send (padding, CONTINUATION, a larger header table, broken blocks, RST_STREAM). */
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdint.h>

#include "harness.h"
#include "l7_cap.h"
#include "model/sanitize.h"

static struct recs rs;

TEST_CASE(nghttp_multiplexed_with_priorities)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "h2_nghttp");
	for (int mode = 0; mode < 4; mode++) {
		/* whole chunks (client, then server side); byte by byte; responses cut to 300 */
		run_as(&cp, L7_HTTP2, mode == 1 ? L7_ROLE_SERVER : L7_ROLE_CLIENT, 0, false,
		       mode == 3 ? 300 : 0, mode == 2, &rs);
		CHECK(rs.n == 4 && answered(&rs) == (mode == 3 ? 3 : 4));
		/* Cut to 300 bytes, the first read's frame headers past them are lost: the stream
		 * whose END_STREAM came later is given up; the other three are answered. */
		if (mode == 3) {
			CHECK(count(&rs, "GET /missing", &err) == 1 && err);
			continue;
		}
		CHECK(count(&rs, "GET /index.html", NULL) == 1);
		CHECK(count(&rs, "GET /users/{id}", NULL) == 1);
		CHECK(count(&rs, "GET /missing", &err) == 1 && err);
		r = find(&rs, "GET /missing");
		CHECK(r && r->status == 404 && r->resp_end_ns >= r->req_start_ns);
		r = find(&rs, "GET /big.txt");
		CHECK(r && r->status == 200 && !r->error && r->resp_bytes > 26000);
		CHECK(r && !strcmp(r->detail, "GET /big.txt") && r->proto == L7_HTTP2);
	}
	cap_free(&cp);
	cap_load(&cp, "h2_curl");
	run(&cp, L7_HTTP2, false, 0, false, &rs);
	CHECK(rs.n == 1 && rs.r[0].status == 200 && !strcmp(rs.r[0].endpoint, "GET /index.html"));
	cap_free(&cp);
}

TEST_CASE(grpc_statuses_trailers_only_and_reset)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "h2_grpc");
	for (int mode = 0; mode < 3; mode++) {
		run_as(&cp, L7_HTTP2, mode == 1 ? L7_ROLE_SERVER : L7_ROLE_CLIENT, 0, false, 0,
		       mode == 2, &rs);
		CHECK(rs.n == 6 && answered(&rs) == 6);
		CHECK(count(&rs, "/galatop.Test/Echo", &err) == 3 && !err);
		/* Trailers-Only: grpc-status 3 with its message */
		CHECK(count(&rs, "/galatop.Test/Fail", &err) == 2 && err);
		r = find(&rs, "/galatop.Test/Fail");
		CHECK(r && r->status == 3 && !strcmp(r->errmsg, "INVALID_ARGUMENT: bad request"));
		CHECK(r && r->proto == L7_GRPC);
		/* past its deadline: the server's DEADLINE_EXCEEDED, then the client's reset */
		r = find(&rs, "/galatop.Test/Slow");
		CHECK(r && r->error && r->status == 4);
		r = find(&rs, "/galatop.Test/Echo");
		CHECK(r && r->status == 0 && !r->error && r->req_bytes > 0 && r->resp_bytes > 0);
	}
	cap_free(&cp);
}

static bool clean_or_undecoded(const struct recs *x)
{
	for (size_t i = 0; i < x->n; i++) {
		const char *e = x->r[i].endpoint;

		if (strcmp(e, "[undecoded]") && strncmp(e, "/galatop.Test/", 14) &&
		    strncmp(e, "GET /", 5))
			return false;
	}
	return true;
}

TEST_CASE(mid_stream_counts_streams_and_validates)
{
	struct cap cp;
	struct l7_parser *p;
	bool settled;

	/* The capture begins after the first call: later blocks refer to HPACK entries it
	 * never saw. Every stream is still a request, with a name that is true or
	 * "[undecoded]". */
	cap_load(&cp, "h2_grpc");
	run_as(&cp, L7_HTTP2, L7_ROLE_CLIENT, 11, false, 0, false, &rs);
	CHECK(rs.n == 5 && answered(&rs) == 5 && clean_or_undecoded(&rs));
	CHECK(count(&rs, "[undecoded]", NULL) >= 1);
	/* the same, counting blocks */
	p = l7_parser__new(L7_HTTP2, L7_ROLE_CLIENT, false);
	rs.n = 0;
	for (size_t i = 11; i < cp.n; i++)
		if (!cp.c[i].close)
			l7_parser__feed(p, cp.c[i].dir, cp.c[i].data, cp.c[i].len, cp.c[i].len,
					i * 1000, on_record, &rs);
	CHECK(l7_parser__undecoded(p) >= 5);
	/* the last response's Trailers-Only is literal: its content-type names gRPC */
	CHECK(l7_parser__proto(p, &settled) == L7_GRPC && settled);
	l7_parser__close(p, on_record, &rs);
	l7_parser__free(p);
	cap_free(&cp);
	cap_load(&cp, "h2_nghttp");
	for (size_t first = 1; first < cp.n; first++) {
		run_as(&cp, L7_HTTP2, L7_ROLE_CLIENT, first, false, 0, false, &rs);
		CHECK(clean_or_undecoded(&rs));
	}
	cap_free(&cp);
}

/* --- frames built with libnghttp2's encoder --- */

struct wire {
	uint8_t b[8192];
	size_t n;
};

static void frame(struct wire *w, uint8_t type, uint8_t flags, uint32_t sid, const void *pl,
		  size_t len)
{
	uint8_t *h = w->b + w->n;

	h[0] = (uint8_t)(len >> 16);
	h[1] = (uint8_t)(len >> 8);
	h[2] = (uint8_t)len;
	h[3] = type;
	h[4] = flags;
	h[5] = (uint8_t)(sid >> 24);
	h[6] = (uint8_t)(sid >> 16);
	h[7] = (uint8_t)(sid >> 8);
	h[8] = (uint8_t)sid;
	if (len)
		memcpy(h + 9, pl, len);
	w->n += 9 + len;
}

/* HPACK block of the n name/value pairs nv (NULL-terminated pairs). */
static size_t block(nghttp2_hd_deflater *def, const char *const *kv, uint8_t *out, size_t cap)
{
	nghttp2_nv nv[16];
	size_t n = 0;

	for (; kv[2 * n]; n++) {
		nv[n].name = (uint8_t *)kv[2 * n];
		nv[n].namelen = strlen(kv[2 * n]);
		nv[n].value = (uint8_t *)kv[2 * n + 1];
		nv[n].valuelen = strlen(kv[2 * n + 1]);
		nv[n].flags = NGHTTP2_NV_FLAG_NONE;
	}
	return (size_t)nghttp2_hd_deflate_hd(def, out, cap, nv, n);
}

static void feed(struct l7_parser *p, enum l7_dir dir, struct wire *w, uint64_t ts)
{
	l7_parser__feed(p, dir, w->b, w->n, w->n, ts, on_record, &rs);
	w->n = 0;
}

TEST_CASE(padding_priority_continuation_table_size_reset)
{
	static const char *const req[] = { ":method", "POST", ":path", "/orders/123?x=1",
					   ":scheme", "http", ":authority", "shop",
					   "x-long", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL };
	static const char *const ok[] = { ":status", "201", "x-id", "bbbbbbbbbbbbbbbb", NULL };
	static const char *const bad[] = { ":status", "2x0", NULL };
	nghttp2_hd_deflater *cdef, *sdef;
	struct l7_parser *p = l7_parser__new(L7_HTTP2, L7_ROLE_CLIENT, false);
	struct wire w = { .n = 0 };
	uint8_t blk[1024], pl[1100];
	uint8_t settings[6] = { 0, 1, 0, 0, 0x80, 0 }; /* HEADER_TABLE_SIZE 32768 */
	uint8_t rst[4] = { 0, 0, 0, 2 };		/* INTERNAL_ERROR */
	size_t n;

	rs.n = 0;
	/* The server allows a 32 KiB table; the client, once it acknowledged, uses it. */
	frame(&w, 4, 0, 0, settings, 6);
	feed(p, L7_DIR_RECV, &w, 1);
	memcpy(w.b, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	w.n = 24;
	frame(&w, 4, 1, 0, NULL, 0);
	CHECK(!nghttp2_hd_deflate_new(&cdef, 32768) && !nghttp2_hd_deflate_new(&sdef, 4096));
	nghttp2_hd_deflate_change_table_size(cdef, 32768);
	/* stream 1: HEADERS padded (3) with priority, the rest of the block in a CONTINUATION */
	n = block(cdef, req, blk, sizeof(blk));
	pl[0] = 3;
	memset(pl + 1, 0, 5);
	memcpy(pl + 6, blk, 10);
	memset(pl + 16, 0, 3);
	frame(&w, 1, 0x8 | 0x20, 1, pl, 19);
	frame(&w, 9, 0x4, 1, blk + 10, n - 10);
	frame(&w, 0, 0x1, 1, "body", 4);
	feed(p, L7_DIR_SEND, &w, 10);
	n = block(sdef, ok, blk, sizeof(blk));
	frame(&w, 1, 0x4 | 0x1, 1, blk, n);
	feed(p, L7_DIR_RECV, &w, 30);
	CHECK(rs.n == 1 && !strcmp(rs.r[0].endpoint, "POST /orders/{id}") &&
	      rs.r[0].status == 201 && !rs.r[0].error);
	CHECK(rs.n == 1 && rs.r[0].req_start_ns == 10 && rs.r[0].resp_end_ns == 30);
	CHECK(l7_parser__undecoded(p) == 0);
	/* stream 3: the same request (now from the table); its response's :status is no status:
	 * the block is undecoded, the stream still answered. */
	n = block(cdef, req, blk, sizeof(blk));
	frame(&w, 1, 0x5, 3, blk, n);
	feed(p, L7_DIR_SEND, &w, 40);
	n = block(sdef, bad, blk, sizeof(blk));
	frame(&w, 1, 0x5, 3, blk, n);
	feed(p, L7_DIR_RECV, &w, 50);
	CHECK(rs.n == 2 && !strcmp(rs.r[1].endpoint, "POST /orders/{id}") && rs.r[1].status == 0);
	CHECK(l7_parser__undecoded(p) == 1);
	/* stream 5: reset by the server */
	n = block(cdef, req, blk, sizeof(blk));
	frame(&w, 1, 0x5, 5, blk, n);
	feed(p, L7_DIR_SEND, &w, 60);
	frame(&w, 3, 0, 5, rst, 4);
	feed(p, L7_DIR_RECV, &w, 70);
	CHECK(rs.n == 3 && rs.r[2].error && !strcmp(rs.r[2].errmsg, "RST_STREAM INTERNAL_ERROR"));
	/* stream 7: garbage where a block should be breaks the client's decoder: undecoded,
	 * then a block of literals decodes again with the decoder made anew. */
	frame(&w, 1, 0x5, 7, "\xff\xff\xff\xff", 4);
	feed(p, L7_DIR_SEND, &w, 80);
	CHECK(l7_parser__pending(p) == 1 && l7_parser__undecoded(p) == 2);
	frame(&w, 1, 0x5, 9, "\x00\x07:method\x03GET\x00\x05:path\x02/z", 23);
	feed(p, L7_DIR_SEND, &w, 90);
	n = block(sdef, ok, blk, sizeof(blk));
	frame(&w, 1, 0x5, 9, blk, n);
	feed(p, L7_DIR_RECV, &w, 100);
	CHECK(rs.n == 4 && !strcmp(rs.r[3].endpoint, "GET /z") && l7_parser__pending(p) == 1);
	l7_parser__close(p, on_record, &rs);
	CHECK(rs.n == 5 && rs.r[4].no_response && !strcmp(rs.r[4].endpoint, "[undecoded]"));
	nghttp2_hd_deflate_del(cdef);
	nghttp2_hd_deflate_del(sdef);
	l7_parser__free(p);
}

TEST_CASE(inference_and_protocol_names)
{
	struct cap cp;
	char err[256];
	unsigned mask;

	cap_load(&cp, "h2_curl");
	CHECK(l7_infer(cp.c[0].data, cp.c[0].len, L7_DIR_SEND, L7_ROLE_CLIENT, 80) == L7_HTTP2);
	CHECK(l7_infer(cp.c[2].data, cp.c[2].len, L7_DIR_RECV, L7_ROLE_CLIENT, 80) == L7_HTTP2);
	cap_free(&cp);
	cap_load(&cp, "h2_grpc");
	/* mid-connection: frames that follow each other */
	CHECK(l7_infer(cp.c[11].data, cp.c[11].len, L7_DIR_SEND, L7_ROLE_CLIENT, 80) == L7_HTTP2);
	CHECK(l7_infer(cp.c[2].data, cp.c[2].len, L7_DIR_RECV, L7_ROLE_CLIENT, 80) == L7_HTTP2);
	cap_free(&cp);
	/* one DATA frame is too little to tell */
	CHECK(l7_infer((const uint8_t *)"\x00\x00\x02\x00\x00\x00\x00\x00\x01zz", 11, L7_DIR_SEND,
		       L7_ROLE_CLIENT, 80) == L7_UNKNOWN);
	CHECK(l7_proto_parse("http2") == L7_HTTP2 && l7_proto_parse("grpc") == L7_GRPC);
	CHECK(!l7_proto_parse_list("grpc,http2", &mask, err, sizeof(err)) &&
	      mask == (1u << L7_GRPC | 1u << L7_HTTP2));
	CHECK(l7_proto_family(L7_HTTP2) == (1u << L7_HTTP2 | 1u << L7_GRPC));
	CHECK(l7_proto_kernel_mask(1u << L7_GRPC) == 1u << L7_HTTP2);
}

int main(void)
{
	RUN(nghttp_multiplexed_with_priorities);
	RUN(grpc_statuses_trailers_only_and_reset);
	RUN(mid_stream_counts_streams_and_validates);
	RUN(padding_priority_continuation_table_size_reset);
	RUN(inference_and_protocol_names);
	HARNESS_EXIT();
}
