/* Unit tests for the parsers of the length-prefixed binary protocols that pair by id (Kafka,
 * MongoDB, RocketMQ: model/l7/kafka.c, mongo.c, rocketmq.c) over exchanges captured from real
 * clients on loopback (tests/model/l7/ *.cap: kcat with librdkafka's mock cluster, pymongo and
 * ali-ons with the test servers of tests/record/test_l7_binary.sh), and over byte fixtures
 * written from Kafka's message schemas for what Debian's clients do not send (flexible versions,
 * topic ids); messages split at every byte, cut short, lost, and met mid-stream. */
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

/* Produce v9 (flexible) or v13 (topic id) for topic "payments" with acks. */
static void produce(struct msg *m, int ver, int corr, int acks)
{
	req_header(m, 0, ver, corr, true);
	uvarint(m, 0);	      /* transactional_id: null */
	put(m, (uint64_t)acks, 2);
	put(m, 30000, 4);     /* timeout_ms */
	uvarint(m, 2);	      /* one topic */
	if (ver >= 13)
		bytes(m, topic_id, 16);
	else
		cstr(m, "payments");
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
	if (ver >= 13)
		bytes(m, topic_id, 16);
	else
		cstr(m, "payments");
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
	if (ver >= 13)
		bytes(m, topic_id, 16);
	else
		cstr(m, "payments");
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
	if (ver >= 13)
		bytes(m, topic_id, 16);
	else
		cstr(m, "payments");
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

int main(void)
{
	RUN(kafka_kcat_produce_and_fetch);
	RUN(kafka_flexible_versions_and_topic_ids);
	RUN(kafka_pairs_by_correlation_id_acks0);
	RUN(kafka_resync_after_cut_and_loss);
	RUN(kafka_inference);
	HARNESS_EXIT();
}
