/* Unit tests for the parsers of the length-prefixed binary protocols that pair by id (Kafka,
 * MongoDB, RocketMQ: model/l7/kafka.c, mongo.c, rocketmq.c) over exchanges captured from real
 * clients on loopback (tests/model/l7/ *.cap: kcat with librdkafka's mock cluster, pymongo with
 * the server of tests/record/test_l7_binary.sh), and over byte fixtures written from the
 * protocols' schemas for what Debian's clients do not send (Kafka's flexible versions and topic
 * ids, MongoDB OP_MSG exhaust, RocketMQ headers); messages split at every byte, cut short,
 * lost, and met mid-stream. */
#include <bson/bson.h>
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "model/l7/proto.h"
#include "model/l7_cap.h"

static struct recs rs;

/* --- a builder for Kafka messages (big-endian, size-prefixed) --- */

struct msg {
	uint8_t b[1024];
	size_t n;
};

static void put(struct msg *m, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		m->b[m->n++] = (uint8_t)(v >> (8 * i));
}

static void uvarint(struct msg *m, uint64_t v)
{
	while (v >= 0x80) {
		m->b[m->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	m->b[m->n++] = (uint8_t)v;
}

/* A compact (flexible versions) string. */
static void cstr(struct msg *m, const char *s)
{
	uvarint(m, strlen(s) + 1);
	memcpy(m->b + m->n, s, strlen(s));
	m->n += strlen(s);
}

static void bytes(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* Starts a request: size (set by done), header v2 (flexible) or v1. */
static void req_header(struct msg *m, int api, int ver, int corr, bool flex)
{
	m->n = 0;
	put(m, 0, 4);
	put(m, (uint64_t)api, 2);
	put(m, (uint64_t)ver, 2);
	put(m, (uint64_t)corr, 4);
	put(m, 2, 2);
	bytes(m, "fx", 2);
	if (flex)
		uvarint(m, 0); /* no tagged fields */
}

static void resp_header(struct msg *m, int corr, bool flex)
{
	m->n = 0;
	put(m, 0, 4);
	put(m, (uint64_t)corr, 4);
	if (flex)
		uvarint(m, 0);
}

static void done(struct msg *m)
{
	uint32_t size = (uint32_t)m->n - 4;

	m->b[0] = (uint8_t)(size >> 24);
	m->b[1] = (uint8_t)(size >> 16);
	m->b[2] = (uint8_t)(size >> 8);
	m->b[3] = (uint8_t)size;
}

static const uint8_t topic_id[16] = { 0x5f, 0x3c, 0x91, 0x02, 0xaa, 0x47, 0x4e, 0x11,
				      0x9b, 0x07, 0x33, 0xd0, 0x6e, 0x21, 0x88, 0x4c };

/* The topic "payments": its id from v13, else its name. */
static void topic(struct msg *m, int ver)
{
	if (ver >= 13)
		bytes(m, topic_id, 16);
	else
		cstr(m, "payments");
}

/* Produce v9 (flexible) or v13 (topic id) for topic "payments" with acks. */
static void produce(struct msg *m, int ver, int corr, int acks)
{
	req_header(m, 0, ver, corr, true);
	uvarint(m, 0);	      /* transactional_id: null */
	put(m, (uint64_t)acks, 2);
	put(m, 30000, 4);     /* timeout_ms */
	uvarint(m, 2);	      /* one topic */
	topic(m, ver);
	uvarint(m, 2);	      /* one partition */
	put(m, 0, 4);	      /* index */
	uvarint(m, 4);	      /* records: 3 bytes */
	bytes(m, "abc", 3);
	uvarint(m, 0);
	uvarint(m, 0);
	uvarint(m, 0);
	done(m);
}

static void produce_response(struct msg *m, int ver, int corr, int err, const char *text)
{
	resp_header(m, corr, true);
	uvarint(m, 2);
	topic(m, ver);
	uvarint(m, 2);
	put(m, 0, 4);			/* index */
	put(m, (uint64_t)err, 2);	/* error_code */
	put(m, (uint64_t)-1, 8);	/* base_offset */
	put(m, (uint64_t)-1, 8);	/* log_append_time_ms */
	put(m, 0, 8);			/* log_start_offset */
	uvarint(m, 1);			/* record_errors: none */
	if (text)
		cstr(m, text);
	else
		uvarint(m, 0);
	uvarint(m, 0);
	uvarint(m, 0);
	put(m, 0, 4);			/* throttle_time_ms */
	uvarint(m, 0);
	done(m);
}

/* Fetch v12 (flexible, topic name) or v13 (topic id). */
static void fetch(struct msg *m, int ver, int corr)
{
	req_header(m, 1, ver, corr, true);
	put(m, (uint64_t)-1, 4); /* replica_id */
	put(m, 500, 4);		 /* max_wait_ms */
	put(m, 1, 4);		 /* min_bytes */
	put(m, 52428800, 4);	 /* max_bytes */
	put(m, 0, 1);		 /* isolation_level */
	put(m, 0, 4);		 /* session_id */
	put(m, (uint64_t)-1, 4); /* session_epoch */
	uvarint(m, 2);
	topic(m, ver);
	uvarint(m, 2);
	put(m, 0, 4);		 /* partition */
	put(m, (uint64_t)-1, 4); /* current_leader_epoch */
	put(m, 42, 8);		 /* fetch_offset */
	put(m, (uint64_t)-1, 4); /* last_fetched_epoch */
	put(m, (uint64_t)-1, 8); /* log_start_offset */
	put(m, 1048576, 4);	 /* partition_max_bytes */
	uvarint(m, 0);
	uvarint(m, 0);
	uvarint(m, 1); /* forgotten_topics_data: none */
	cstr(m, "");   /* rack_id */
	uvarint(m, 0);
	done(m);
}

static void fetch_response(struct msg *m, int ver, int corr, int err)
{
	resp_header(m, corr, true);
	put(m, 0, 4); /* throttle_time_ms */
	put(m, 0, 2); /* error_code */
	put(m, 0, 4); /* session_id */
	uvarint(m, 2);
	topic(m, ver);
	uvarint(m, 2);
	put(m, 0, 4);		  /* partition_index */
	put(m, (uint64_t)err, 2); /* error_code */
	put(m, 100, 8);		  /* high_watermark */
	put(m, 100, 8);		  /* last_stable_offset */
	put(m, 0, 8);		  /* log_start_offset */
	uvarint(m, 0);		  /* aborted_transactions: null */
	put(m, (uint64_t)-1, 4);  /* preferred_read_replica */
	uvarint(m, 1);		  /* records: empty */
	uvarint(m, 0);
	uvarint(m, 0);
	uvarint(m, 0);
	done(m);
}

/* Metadata v12 request and its response naming "payments" with topic_id. */
static void metadata(struct msg *m, int corr)
{
	req_header(m, 3, 12, corr, true);
	uvarint(m, 1); /* topics: none (all) */
	put(m, 1, 1);  /* allow_auto_topic_creation */
	put(m, 0, 1);  /* include_topic_authorized_operations */
	uvarint(m, 0);
	done(m);
}

static void metadata_response(struct msg *m, int corr)
{
	resp_header(m, corr, true);
	put(m, 0, 4);  /* throttle_time_ms */
	uvarint(m, 2); /* one broker */
	put(m, 1, 4);
	cstr(m, "127.0.0.1");
	put(m, 9092, 4);
	uvarint(m, 0); /* rack: null */
	uvarint(m, 0);
	cstr(m, "cluster-1");
	put(m, 1, 4);  /* controller_id */
	uvarint(m, 2); /* one topic */
	put(m, 0, 2);
	cstr(m, "payments");
	bytes(m, topic_id, 16);
	put(m, 0, 1);  /* is_internal */
	uvarint(m, 2); /* one partition */
	put(m, 0, 2);
	put(m, 0, 4);
	put(m, 1, 4);
	put(m, 0, 4);
	uvarint(m, 2);
	put(m, 1, 4); /* replicas */
	uvarint(m, 2);
	put(m, 1, 4); /* isr */
	uvarint(m, 1); /* offline: none */
	uvarint(m, 0);
	put(m, 0, 4); /* topic_authorized_operations */
	uvarint(m, 0);
	uvarint(m, 0);
	done(m);
}

static void feed(struct l7_parser *p, enum l7_dir dir, const struct msg *m, uint64_t ts,
		 bool bytewise)
{
	if (!bytewise) {
		l7_parser__feed(p, dir, m->b, m->n, m->n, ts, on_record, &rs);
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		l7_parser__feed(p, dir, m->b + i, 1, 1, ts, on_record, &rs);
}

TEST_CASE(kafka_kcat_produce_and_fetch)
{
	struct cap cp;
	const struct l7_record *r;

	cap_load(&cp, "kafka_produce");
	for (int mode = 0; mode < 2; mode++) {
		/* kcat -P -l five lines: ApiVersions v3 (UNSUPPORTED_VERSION from the mock), v0,
		 * Metadata, one Produce v7 with the five messages */
		run(&cp, L7_KAFKA, false, 0, mode == 1, &rs);
		CHECK(rs.n == 4 && answered(&rs) == 4);
		CHECK(count(&rs, "ApiVersions", NULL) == 2 && count(&rs, "Metadata", NULL) == 1);
		r = find(&rs, "Produce orders");
		CHECK(r && !r->error && r->status == 0 && r->req_bytes == 184 && r->resp_bytes == 58);
		CHECK(r && strstr(r->detail, "Produce v7 topic=orders client_id=rdkafka"));
	}
	cap_free(&cp);
	cap_load(&cp, "kafka_fetch");
	for (int mode = 0; mode < 3; mode++) {
		/* kcat -C -o -3 -e: ListOffsets, three Fetch v11 (the last unanswered at exit); with
		 * replies cut to 20 bytes the records are skipped by size */
		run(&cp, L7_KAFKA, false, mode == 2 ? 20 : 0, mode == 1, &rs);
		CHECK(count(&rs, "Fetch orders", NULL) == 2 && count(&rs, "ListOffsets", NULL) == 1);
		CHECK(count(&rs, "Metadata", NULL) == 2 && rs.n == 8 && answered(&rs) == 7);
		r = find(&rs, "Fetch orders");
		CHECK(r && !r->error && r->resp_bytes > 100);
	}
	cap_free(&cp);
}

/* Flexible versions (compact strings, tagged fields): Produce v9 with an error, Fetch v12, and
 * v13's topic ids named from a Metadata v12 response (or shown as Kafka prints them). */
TEST_CASE(kafka_flexible_versions_and_topic_ids)
{
	struct l7_topics *t = l7_topics__new();
	struct msg q, a;

	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct l7_parser *p = l7_parser__new(L7_KAFKA, L7_ROLE_CLIENT, false);

		l7_parser__set_topics(p, t);
		rs.n = 0;
		produce(&q, 9, 7, -1);
		produce_response(&a, 9, 7, 3, NULL);
		feed(p, L7_DIR_SEND, &q, 10, bytewise);
		feed(p, L7_DIR_RECV, &a, 20, bytewise);
		CHECK(rs.n == 1 && !strcmp(rs.r[0].endpoint, "Produce payments"));
		CHECK(rs.r[0].error && rs.r[0].status == 3 &&
		      !strcmp(rs.r[0].errmsg, "UNKNOWN_TOPIC_OR_PARTITION"));
		CHECK(rs.r[0].req_start_ns == 10 && rs.r[0].resp_end_ns == 20);
		CHECK(rs.r[0].req_bytes == q.n && rs.r[0].resp_bytes == a.n);
		produce(&q, 9, 8, -1);
		produce_response(&a, 9, 8, 87, "record 0 has no key");
		feed(p, L7_DIR_SEND, &q, 30, bytewise);
		feed(p, L7_DIR_RECV, &a, 40, bytewise);
		CHECK(rs.n == 2 && rs.r[1].status == 87 &&
		      !strcmp(rs.r[1].errmsg, "record 0 has no key"));
		fetch(&q, 12, 9);
		fetch_response(&a, 12, 9, 0);
		feed(p, L7_DIR_SEND, &q, 50, bytewise);
		feed(p, L7_DIR_RECV, &a, 60, bytewise);
		CHECK(rs.n == 3 && !strcmp(rs.r[2].endpoint, "Fetch payments") && !rs.r[2].error);
		/* A v13 topic id before any Metadata: Kafka's base64 text. */
		fetch(&q, 13, 10);
		fetch_response(&a, 13, 10, 1);
		feed(p, L7_DIR_SEND, &q, 70, bytewise);
		feed(p, L7_DIR_RECV, &a, 80, bytewise);
		CHECK(rs.n == 4 && (bytewise || !strcmp(rs.r[3].endpoint, "Fetch XzyRAqpHThGbBzPQbiGITA")));
		CHECK(rs.r[3].error && rs.r[3].status == 1 &&
		      !strcmp(rs.r[3].errmsg, "OFFSET_OUT_OF_RANGE"));
		/* Metadata names it: later Fetch and Produce v13 show the name. */
		metadata(&q, 11);
		metadata_response(&a, 11);
		feed(p, L7_DIR_SEND, &q, 90, bytewise);
		feed(p, L7_DIR_RECV, &a, 100, bytewise);
		fetch(&q, 13, 12);
		fetch_response(&a, 13, 12, 0);
		feed(p, L7_DIR_SEND, &q, 110, bytewise);
		feed(p, L7_DIR_RECV, &a, 120, bytewise);
		produce(&q, 13, 13, 1);
		produce_response(&a, 13, 13, 0, NULL);
		feed(p, L7_DIR_SEND, &q, 130, bytewise);
		feed(p, L7_DIR_RECV, &a, 140, bytewise);
		CHECK(rs.n == 7 && !strcmp(rs.r[4].endpoint, "Metadata"));
		CHECK(!strcmp(rs.r[5].endpoint, "Fetch payments") && !rs.r[5].error);
		CHECK(!strcmp(rs.r[6].endpoint, "Produce payments") && !rs.r[6].error);
		CHECK(l7_parser__errors(p) == 0 && l7_parser__pending(p) == 0);
		l7_parser__free(p);
	}
	l7_topics__free(t);
}

/* Responses pair by correlation_id in any order; acks=0 is counted without response. */
TEST_CASE(kafka_pairs_by_correlation_id_acks0)
{
	struct l7_parser *p = l7_parser__new(L7_KAFKA, L7_ROLE_CLIENT, false);
	struct msg q1, q2, q3, a1, a2;

	rs.n = 0;
	produce(&q1, 9, 1, -1);
	fetch(&q2, 12, 2);
	produce(&q3, 9, 3, 0);
	produce_response(&a1, 9, 1, 0, NULL);
	fetch_response(&a2, 12, 2, 0);
	feed(p, L7_DIR_SEND, &q1, 1, false);
	feed(p, L7_DIR_SEND, &q2, 2, false);
	feed(p, L7_DIR_SEND, &q3, 3, false);
	CHECK(rs.n == 1 && rs.r[0].no_response && strstr(rs.r[0].detail, "acks=0"));
	CHECK(l7_parser__pending(p) == 2);
	/* Fetch answered first, both in one read. */
	{
		struct msg both = a2;

		bytes(&both, a1.b, a1.n);
		feed(p, L7_DIR_RECV, &both, 5, false);
	}
	CHECK(rs.n == 3 && !strcmp(rs.r[1].endpoint, "Fetch payments") && rs.r[1].req_start_ns == 2);
	CHECK(!strcmp(rs.r[2].endpoint, "Produce payments") && rs.r[2].req_start_ns == 1);
	CHECK(l7_parser__pending(p) == 0);
	l7_parser__free(p);
}

/* A connection met mid-stream: responses to requests sent before the capture are not taken
 * as message boundaries until one pairs; a tail of a message after a loss is rejected and the
 * next whole message resynchronises; a message cut by the capture is skipped by its size. */
TEST_CASE(kafka_resync_after_cut_and_loss)
{
	struct l7_parser *p = l7_parser__new(L7_KAFKA, L7_ROLE_CLIENT, false);
	struct msg q, a, old;

	rs.n = 0;
	fetch_response(&old, 12, 99, 0);
	CHECK(l7_parser__feed(p, L7_DIR_RECV, old.b, old.n, old.n, 1, on_record, &rs) == -EPROTO);
	fetch(&q, 12, 100);
	fetch_response(&a, 12, 100, 0);
	feed(p, L7_DIR_SEND, &q, 2, false);
	/* The tail of a response whose start was lost, then the answer. */
	CHECK(l7_parser__feed(p, L7_DIR_RECV, a.b + 9, a.n - 9, a.n - 9, 3, on_record, &rs) ==
	      -EPROTO);
	CHECK(l7_parser__pending(p) == 1);
	feed(p, L7_DIR_RECV, &a, 4, false);
	CHECK(rs.n == 1 && !rs.r[0].no_response && rs.r[0].resp_end_ns == 4);
	/* Now in sync: a response to a request never seen is passed over by its size. */
	feed(p, L7_DIR_RECV, &old, 5, false);
	CHECK(rs.n == 1 && l7_parser__errors(p) == 2);
	/* A large response whose capture stops after 20 bytes: skipped by size; the response
	 * after it in the same read pairs. */
	{
		static uint8_t big[3000];
		struct msg q2;
		size_t n;

		fetch(&q, 12, 101);
		fetch(&q2, 12, 102);
		feed(p, L7_DIR_SEND, &q, 6, false);
		feed(p, L7_DIR_SEND, &q2, 6, false);
		fetch_response(&a, 12, 101, 0);
		memcpy(big, a.b, a.n);
		/* grow the first response to 2000 bytes of records */
		n = 2000;
		big[0] = 0, big[1] = 0, big[2] = (uint8_t)((n - 4) >> 8), big[3] = (uint8_t)(n - 4);
		fetch_response(&a, 12, 102, 6);
		memcpy(big + n, a.b, a.n);
		l7_parser__feed(p, L7_DIR_RECV, big, 20, n, 7, on_record, &rs);
		l7_parser__feed(p, L7_DIR_RECV, big + n, a.n, a.n, 8, on_record, &rs);
		CHECK(rs.n == 3 && rs.r[1].resp_bytes == n && !rs.r[1].error);
		CHECK(rs.r[2].status == 6 && !strcmp(rs.r[2].errmsg, "NOT_LEADER_OR_FOLLOWER"));
	}
	l7_parser__close(p, on_record, &rs);
	l7_parser__free(p);
}

TEST_CASE(kafka_inference)
{
	struct msg q, a;

	produce(&q, 9, 1, -1);
	produce_response(&a, 9, 1, 0, NULL);
	CHECK(l7_infer(q.b, q.n, L7_DIR_SEND, L7_ROLE_CLIENT, 9092) == L7_KAFKA);
	/* a broker reads the first 12 bytes alone */
	CHECK(l7_infer(q.b, 12, L7_DIR_RECV, L7_ROLE_SERVER, 9092) == L7_KAFKA);
	CHECK(l7_proto_is_request(L7_KAFKA, q.b, q.n) == 1);
	CHECK(l7_infer(a.b, a.n, L7_DIR_RECV, L7_ROLE_CLIENT, 9092) != L7_KAFKA);
	CHECK(l7_proto_is_request(L7_KAFKA, a.b, a.n) == -1);
	q.b[14] = 1; /* a client_id that is not text */
	CHECK(l7_infer(q.b, q.n, L7_DIR_SEND, L7_ROLE_CLIENT, 9092) != L7_KAFKA);
}

TEST_CASE(mongo_pymongo_commands_exhaust_and_errors)
{
	struct cap cp;
	const struct l7_record *r;
	bool err;

	cap_load(&cp, "mongo_pymongo");
	for (int mode = 0; mode < 3; mode++) {
		/* pymongo 3.11: isMaster handshakes (OP_QUERY) on the monitor and the pool
		 * connection, 6 inserts (the last a duplicate _id), find_one, an exhaust find (a
		 * legacy OP_QUERY answered by 3 OP_REPLYs), an update with w: 5, an unknown
		 * command, a w: 0 insert (moreToCome), ping, endSessions. Replies arrive as a
		 * 16-byte header read and a body read; with replies cut to 40 bytes the errors
		 * past them are not seen. */
		run(&cp, L7_MONGO, false, mode == 2 ? 40 : 0, mode == 1, &rs);
		CHECK(rs.n == 15 && answered(&rs) == 14);
		CHECK(count(&rs, "ismaster admin", NULL) == 2 && count(&rs, "insert shop.orders", NULL) == 6);
		CHECK(count(&rs, "find shop.orders", NULL) == 1 && count(&rs, "ping admin", NULL) == 1);
		CHECK(count(&rs, "nosuchcmd shop", &err) == 1 && err);
		r = find(&rs, "query shop.orders");
		CHECK(r && !r->no_response && r->resp_bytes == 223);
		if (mode == 2)
			continue;
		CHECK(count(&rs, "update shop.orders", &err) == 1 && err);
		r = find(&rs, "update shop.orders");
		CHECK(r && r->status == 100 && !strcmp(r->errmsg, "Not enough data-bearing nodes"));
		r = find(&rs, "nosuchcmd shop");
		CHECK(r && r->status == 59 && !strcmp(r->errmsg, "no such command: 'nosuchcmd'"));
		CHECK(rs.r[7].error && rs.r[7].status == 11000 && strstr(rs.r[7].errmsg, "E11000"));
		CHECK(rs.r[12].no_response && !strcmp(rs.r[12].endpoint, "insert shop.orders"));
		CHECK(!strncmp(rs.r[8].detail, "{ \"find\" : \"orders\", \"filter\" : { \"_id\" : 3 }", 40));
	}
	cap_free(&cp);
}

/* An OP_MSG built from its parts: flags, a kind 0 body, kind 1 sections, a checksum. */
static void op_msg(struct msg *m, uint32_t id, uint32_t to, uint32_t flags, const bson_t *body,
		   const char *seq, const bson_t *doc)
{
	uint32_t le[4];
	size_t start;

	m->n = 16;
	memcpy(m->b + m->n, &flags, 4);
	m->n += 4;
	if (seq) {
		uint32_t size = (uint32_t)(4 + strlen(seq) + 1 + doc->len);

		m->b[m->n++] = 1;
		memcpy(m->b + m->n, &size, 4);
		m->n += 4;
		start = m->n;
		bytes(m, seq, strlen(seq) + 1);
		bytes(m, bson_get_data(doc), doc->len);
		(void)start;
	}
	m->b[m->n++] = 0;
	bytes(m, bson_get_data(body), body->len);
	if (flags & 1)
		bytes(m, "\x01\x02\x03\x04", 4); /* CRC-32C: not checked */
	le[0] = (uint32_t)m->n, le[1] = id, le[2] = to, le[3] = 2013;
	memcpy(m->b, le, 16);
}

/* OP_MSG exhaust: a getMore with exhaustAllowed answered by replies flagged moreToCome, each
 * answering the one before, ending the request together; a kind 1 section before the body;
 * checksums; a reply with ok: 0; a moreToCome request. */
TEST_CASE(mongo_op_msg_exhaust_sections_checksum)
{
	bson_t *get = BCON_NEW("getMore", BCON_INT64(77), "collection", BCON_UTF8("orders"),
			       "$db", BCON_UTF8("shop"));
	bson_t *ins = BCON_NEW("insert", BCON_UTF8("orders"), "$db", BCON_UTF8("shop"));
	bson_t *doc = BCON_NEW("_id", BCON_INT32(1));
	bson_t *batch = BCON_NEW("cursor", "{", "id", BCON_INT64(77), "}", "ok", BCON_DOUBLE(1));
	bson_t *last = BCON_NEW("cursor", "{", "id", BCON_INT64(0), "}", "ok", BCON_DOUBLE(1));
	bson_t *fail = BCON_NEW("ok", BCON_DOUBLE(0), "errmsg", BCON_UTF8("not primary"), "code",
				BCON_INT32(10107));
	struct msg q, a;

	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct l7_parser *p = l7_parser__new(L7_MONGO, L7_ROLE_CLIENT, false);

		rs.n = 0;
		op_msg(&q, 10, 0, 1u << 16 | 1, get, NULL, NULL);
		feed(p, L7_DIR_SEND, &q, 1, bytewise);
		op_msg(&a, 500, 10, 2 | 1, batch, NULL, NULL);
		feed(p, L7_DIR_RECV, &a, 2, bytewise);
		op_msg(&a, 501, 500, 2, batch, NULL, NULL);
		feed(p, L7_DIR_RECV, &a, 3, bytewise);
		CHECK(rs.n == 0 && l7_parser__pending(p) == 1);
		op_msg(&a, 502, 501, 0, last, NULL, NULL);
		feed(p, L7_DIR_RECV, &a, 4, bytewise);
		CHECK(rs.n == 1 && !strcmp(rs.r[0].endpoint, "getMore shop.orders"));
		CHECK(rs.r[0].resp_start_ns == 2 && rs.r[0].resp_end_ns == 4 && !rs.r[0].error);
		/* documents in a kind 1 section, then the body; an error reply */
		op_msg(&q, 11, 0, 0, ins, "documents", doc);
		feed(p, L7_DIR_SEND, &q, 5, bytewise);
		op_msg(&a, 503, 11, 0, fail, NULL, NULL);
		feed(p, L7_DIR_RECV, &a, 6, bytewise);
		CHECK(rs.n == 2 && !strcmp(rs.r[1].endpoint, "insert shop.orders"));
		CHECK(rs.r[1].error && rs.r[1].status == 10107 && !strcmp(rs.r[1].errmsg, "not primary"));
		/* moreToCome on a request: no reply comes */
		op_msg(&q, 12, 0, 2, ins, "documents", doc);
		feed(p, L7_DIR_SEND, &q, 7, bytewise);
		CHECK(rs.n == 3 && rs.r[2].no_response && l7_parser__pending(p) == 0);
		CHECK(l7_parser__errors(p) == 0);
		l7_parser__free(p);
	}
	/* Met mid-stream: a reply to a request never seen is no boundary until one pairs. */
	{
		struct l7_parser *p = l7_parser__new(L7_MONGO, L7_ROLE_CLIENT, false);

		rs.n = 0;
		op_msg(&a, 600, 9, 0, last, NULL, NULL);
		CHECK(l7_parser__feed(p, L7_DIR_RECV, a.b, a.n, a.n, 1, on_record, &rs) == -EPROTO);
		op_msg(&q, 13, 0, 0, ins, NULL, NULL);
		feed(p, L7_DIR_SEND, &q, 2, false);
		op_msg(&a, 601, 13, 0, last, NULL, NULL);
		feed(p, L7_DIR_RECV, &a, 3, false);
		CHECK(rs.n == 1 && !rs.r[0].no_response);
		CHECK(l7_infer(q.b, q.n, L7_DIR_SEND, L7_ROLE_CLIENT, 27017) == L7_MONGO);
		CHECK(l7_infer(q.b, 16, L7_DIR_RECV, L7_ROLE_SERVER, 27017) == L7_MONGO);
		CHECK(l7_proto_is_request(L7_MONGO, a.b, a.n) == 0);
		l7_parser__free(p);
	}
	bson_destroy(get);
	bson_destroy(ins);
	bson_destroy(doc);
	bson_destroy(batch);
	bson_destroy(last);
	bson_destroy(fail);
}

/* A RocketMQ remoting frame: length, serialize type and header length, header, body. */
static void rmq_frame(struct msg *m, int type, const void *hdr, size_t hl, size_t body)
{
	m->n = 0;
	put(m, 4 + hl + body, 4);
	put(m, (uint64_t)type << 24 | hl, 4);
	bytes(m, hdr, hl);
	memset(m->b + m->n, 'x', body);
	m->n += body;
}

/* A ROCKETMQ (binary) header: code, language, version, opaque, flag, remark, extFields. */
static size_t rmq_binary(uint8_t *h, int code, uint32_t opaque, uint32_t flag, const char *remark,
			 const char *k, const char *v)
{
	struct msg m = { .n = 0 };
	size_t ext = k ? 2 + strlen(k) + 4 + strlen(v) : 0;

	put(&m, (uint64_t)code, 2);
	put(&m, 0, 1);	 /* JAVA */
	put(&m, 453, 2); /* version */
	put(&m, opaque, 4);
	put(&m, flag, 4);
	put(&m, strlen(remark), 4);
	bytes(&m, remark, strlen(remark));
	put(&m, ext, 4);
	if (k) {
		put(&m, strlen(k), 2);
		bytes(&m, k, strlen(k));
		put(&m, strlen(v), 4);
		bytes(&m, v, strlen(v));
	}
	memcpy(h, m.b, m.n);
	return m.n;
}

/* JSON and binary headers, pairing by opaque in any order, oneway, the response flag, errors
 * and the pull flow's codes that are not. */
TEST_CASE(rocketmq_json_binary_opaque_oneway)
{
	static const char send[] = "{\"code\":310,\"extFields\":{\"a\":\"pg\",\"b\":\"orders\"},"
				   "\"flag\":0,\"language\":\"JAVA\",\"opaque\":7,"
				   "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":401}";
	static const char route[] = "{\"code\":105,\"extFields\":{\"topic\":\"nosuch\"},\"flag\":0,"
				    "\"language\":\"NODE\",\"opaque\":8,\"version\":401}";
	static const char ok[] = "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":7,"
				 "\"version\":401}";
	static const char nosuch[] = "{\"code\":17,\"flag\":1,\"opaque\":8,\"remark\":\"No topic "
				     "route info in name server for the topic: nosuch\",\"version\":401}";
	static const char hb[] = "{\"code\":34,\"flag\":2,\"opaque\":9,\"version\":401}";
	uint8_t h[256];
	struct msg q, a;
	size_t hl;

	for (int bytewise = 0; bytewise < 2; bytewise++) {
		struct l7_parser *p = l7_parser__new(L7_ROCKETMQ, L7_ROLE_CLIENT, false);

		rs.n = 0;
		rmq_frame(&q, 0, send, strlen(send), 100);
		feed(p, L7_DIR_SEND, &q, 1, bytewise);
		CHECK(l7_infer(q.b, q.n, L7_DIR_SEND, L7_ROLE_CLIENT, 10911) == L7_ROCKETMQ);
		rmq_frame(&q, 0, route, strlen(route), 0);
		feed(p, L7_DIR_SEND, &q, 2, bytewise);
		/* answered in the other order */
		rmq_frame(&a, 0, nosuch, strlen(nosuch), 0);
		feed(p, L7_DIR_RECV, &a, 3, bytewise);
		rmq_frame(&a, 0, ok, strlen(ok), 20);
		feed(p, L7_DIR_RECV, &a, 4, bytewise);
		CHECK(rs.n == 2 && !strcmp(rs.r[0].endpoint, "GET_ROUTEINFO_BY_TOPIC nosuch"));
		CHECK(rs.r[0].error && rs.r[0].status == 17 &&
		      !strcmp(rs.r[0].errmsg, "17: No topic route info in name server for the topic: nosuch"));
		CHECK(!strcmp(rs.r[1].endpoint, "SEND_MESSAGE_V2 orders") && !rs.r[1].error);
		CHECK(rs.r[1].req_start_ns == 1 && rs.r[1].resp_end_ns == 4 && rs.r[1].resp_bytes == a.n);
		CHECK(strstr(rs.r[1].detail, "group=pg"));
		/* oneway: counted, never answered */
		rmq_frame(&q, 0, hb, strlen(hb), 0);
		feed(p, L7_DIR_SEND, &q, 5, bytewise);
		CHECK(rs.n == 3 && rs.r[2].no_response && !strcmp(rs.r[2].endpoint, "HEART_BEAT"));
		/* binary headers: a pull answered PULL_NOT_FOUND (19) is no error; SYSTEM_ERROR is */
		hl = rmq_binary(h, 11, 20, 0, "", "topic", "orders");
		rmq_frame(&q, 1, h, hl, 0);
		feed(p, L7_DIR_SEND, &q, 6, bytewise);
		hl = rmq_binary(h, 19, 20, 1, "no new message", NULL, NULL);
		rmq_frame(&a, 1, h, hl, 0);
		feed(p, L7_DIR_RECV, &a, 7, bytewise);
		hl = rmq_binary(h, 11, 21, 0, "", "topic", "orders");
		rmq_frame(&q, 1, h, hl, 0);
		feed(p, L7_DIR_SEND, &q, 8, bytewise);
		hl = rmq_binary(h, 1, 21, 1, "store error", NULL, NULL);
		rmq_frame(&a, 1, h, hl, 0);
		feed(p, L7_DIR_RECV, &a, 9, bytewise);
		CHECK(rs.n == 5 && !strcmp(rs.r[3].endpoint, "PULL_MESSAGE orders"));
		CHECK(!rs.r[3].error && rs.r[3].status == 19);
		CHECK(rs.r[4].error && !strcmp(rs.r[4].errmsg, "1: store error"));
		/* a request the broker sends the client (CHECK_TRANSACTION_STATE) is not ours */
		hl = rmq_binary(h, 39, 30, 0, "", NULL, NULL);
		rmq_frame(&a, 1, h, hl, 0);
		feed(p, L7_DIR_RECV, &a, 10, bytewise);
		CHECK(rs.n == 5 && l7_parser__pending(p) == 0 && l7_parser__errors(p) == 0);
		l7_parser__free(p);
	}
}

int main(void)
{
	RUN(kafka_kcat_produce_and_fetch);
	RUN(kafka_flexible_versions_and_topic_ids);
	RUN(kafka_pairs_by_correlation_id_acks0);
	RUN(kafka_resync_after_cut_and_loss);
	RUN(kafka_inference);
	RUN(mongo_pymongo_commands_exhaust_and_errors);
	RUN(mongo_op_msg_exhaust_sections_checksum);
	RUN(rocketmq_json_binary_opaque_oneway);
	HARNESS_EXIT();
}
