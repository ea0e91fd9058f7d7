/* Kafka's wire protocol: size-prefixed requests with a header v0-v2 (api_key, api_version,
 * correlation_id, client_id; flexible versions add tagged fields) and responses that carry only
 * the correlation_id, so responses pair with their request by that id and are read with the
 * request's api_key and version. Produce and Fetch name their first topic (or topic id from v13,
 * named through the Metadata responses seen) and their responses' error_code is the error;
 * other APIs are named. Produce with acks=0 gets no response. */
#include "parser.h"
#include "kafka_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KAFKA_MAX_SIZE (1u << 30) /* larger sizes are not Kafka (brokers refuse > 100 MiB) */
#define KAFKA_MAX_VERSION 20
#define KAFKA_TOPIC_MAX 96 /* topic names kept (Kafka allows 249 bytes) */

enum { API_PRODUCE = 0, API_FETCH = 1, API_METADATA = 3, API_CONTROLLED_SHUTDOWN = 7,
       API_VERSIONS = 18 };

/* --- topic ids --- */

#define TOPICS_MAX 1024

struct l7_topics {
	struct {
		uint8_t id[16];
		char name[KAFKA_TOPIC_MAX];
	} v[TOPICS_MAX];
	size_t n, next; /* entries used; the one replaced next when full */
};

struct l7_topics *l7_topics__new(void)
{
	return calloc(1, sizeof(struct l7_topics));
}

void l7_topics__free(struct l7_topics *t)
{
	free(t);
}

static const char *topics_get(const struct l7_topics *t, const uint8_t id[16])
{
	for (size_t i = 0; t && i < t->n; i++)
		if (!memcmp(t->v[i].id, id, 16))
			return t->v[i].name;
	return NULL;
}

static void topics_put(struct l7_topics *t, const uint8_t id[16], const char *name)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n && memcmp(t->v[i].id, id, 16); i++)
		;
	if (i == t->n) {
		if (t->n < TOPICS_MAX) {
			t->n++;
		} else {
			i = t->next;
			t->next = (t->next + 1) % TOPICS_MAX;
		}
	}
	memcpy(t->v[i].id, id, 16);
	snprintf(t->v[i].name, sizeof(t->v[i].name), "%s", name);
}

/* --- a reader over the captured part of a message --- */

/* Reads past the captured bytes (or past a sane length) set end: what follows is unknown. */
struct rd {
	const uint8_t *b;
	size_t n, off;
	bool end;
};

static bool rd_need(struct rd *r, uint64_t k)
{
	if (r->end || r->n - r->off < k)
		r->end = true;
	return !r->end;
}

static int64_t rd_int(struct rd *r, int k)
{
	uint64_t v = 0;

	if (!rd_need(r, (uint64_t)k))
		return 0;
	for (int i = 0; i < k; i++)
		v = v << 8 | r->b[r->off + i];
	r->off += (size_t)k;
	/* Sign-extend. */
	if (k < 8 && v >> (8 * k - 1))
		v |= ~0ull << (8 * k);
	return (int64_t)v;
}

static uint64_t rd_uvarint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (!rd_need(r, 1))
			return 0;
		c = r->b[r->off++];
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->end = true;
	return 0;
}

static void rd_skip(struct rd *r, int64_t k)
{
	if (k > 0 && rd_need(r, (uint64_t)k))
		r->off += (size_t)k;
}

/* Skips count elements of size bytes (a count past what is left ends the read). */
static void rd_skip_each(struct rd *r, int64_t count, int64_t size)
{
	if (count > 0)
		rd_skip(r, count > INT64_MAX / size ? INT64_MAX : count * size);
}

/* A string's (or bytes') length: compact (unsigned varint, length + 1) in flexible versions,
 * int16 (int32 for bytes) otherwise; -1 for null. */
static int64_t rd_len(struct rd *r, bool flex, int k)
{
	return flex ? (int64_t)rd_uvarint(r) - 1 : rd_int(r, k);
}

/* An array's element count, -1 for null. */
static int64_t rd_count(struct rd *r, bool flex)
{
	return rd_len(r, flex, 4);
}

/* A string into out (sanitized); false when it is not whole in the capture. */
static bool rd_str(struct rd *r, bool flex, char *out, size_t cap)
{
	int64_t l = rd_len(r, flex, 2);

	out[0] = 0;
	if (l < 0 || !rd_need(r, (uint64_t)l))
		return false;
	l7_text(out, cap, r->b + r->off, (size_t)l);
	r->off += (size_t)l;
	return true;
}

static void rd_tags(struct rd *r)
{
	uint64_t n = rd_uvarint(r);

	for (uint64_t i = 0; i < n && !r->end; i++) {
		rd_uvarint(r);
		rd_skip(r, (int64_t)rd_uvarint(r));
	}
}

/* Kafka's text form of a topic id: URL-safe base64 without padding. */
static void uuid_text(const uint8_t id[16], char out[23])
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t k = 0;

	for (int i = 0; i < 16; i += 3) {
		uint32_t v = (uint32_t)id[i] << 16 | (i + 1 < 16 ? (uint32_t)id[i + 1] << 8 : 0) |
			     (i + 2 < 16 ? id[i + 2] : 0);

		out[k++] = b64[v >> 18 & 63];
		out[k++] = b64[v >> 12 & 63];
		if (i + 1 < 16)
			out[k++] = b64[v >> 6 & 63];
		if (i + 2 < 16)
			out[k++] = b64[v & 63];
	}
	out[k] = 0;
}

/* --- messages --- */

struct kafka_msg {
	bool ok;      /* a message header was parsed */
	bool matched; /* a response whose request waits */
	int16_t api, ver;
	int32_t corr;
	int16_t acks; /* Produce */
	int16_t err;  /* the response's first error_code != 0 */
	char client[64];
	char topic[KAFKA_TOPIC_MAX];
	char errmsg[L7_ERRMSG_MAX];
};

struct kafka_state {
	struct kafka_msg m[2]; /* [0] responses, [1] requests */
	struct l7_topics *topics; /* borrowed, may be NULL */
};

void l7_parser__set_topics(struct l7_parser *p, struct l7_topics *t)
{
	if (p && p->proto == L7_KAFKA)
		((struct kafka_state *)p->state)->topics = t;
}

static bool flexible(int api, int ver)
{
	int flex = kafka_api_flexible(api);

	return flex >= 0 && ver >= flex;
}

/* The first topic of a Produce or Fetch request (name, or id from v13). */
static void read_topic(struct rd *r, const struct kafka_state *st, struct kafka_msg *m, bool flex)
{
	int64_t n = rd_count(r, flex);

	if (n < 1)
		return;
	if (m->ver >= 13) {
		const char *name;

		if (!rd_need(r, 16))
			return;
		name = topics_get(st->topics, r->b + r->off);
		if (name) {
			snprintf(m->topic, sizeof(m->topic), "%s", name);
		} else {
			char id[23];

			uuid_text(r->b + r->off, id);
			snprintf(m->topic, sizeof(m->topic), "%s", id);
		}
		r->off += 16;
	} else {
		rd_str(r, flex, m->topic, sizeof(m->topic));
	}
}

static bool printable(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f)
			return false;
	return true;
}

/* The fixed part of a request header (after the size): api_key, api_version,
 * correlation_id, within the ranges Kafka uses. */
static bool header_fixed(struct rd *r, struct kafka_msg *m)
{
	m->api = (int16_t)rd_int(r, 2);
	m->ver = (int16_t)rd_int(r, 2);
	m->corr = (int32_t)rd_int(r, 4);
	return !r->end && m->api >= 0 && m->api < 100 && m->ver >= 0 &&
	       m->ver <= KAFKA_MAX_VERSION && m->corr >= 0;
}

/* The request header at b (after the size): the fixed part and, from header v1, a client_id
 * that is null or printable. False when it is not one. */
static bool request_header(struct rd *r, struct kafka_msg *m)
{
	int64_t l;

	if (!header_fixed(r, m))
		return false;
	if (m->api == API_CONTROLLED_SHUTDOWN && m->ver == 0)
		return true; /* header v0 */
	l = rd_int(r, 2); /* client_id: a plain nullable string even in flexible versions */
	if (r->end || l < -1)
		return false;
	if (l > 0) {
		size_t have = r->n - r->off < (size_t)l ? r->n - r->off : (size_t)l;

		if (!printable(r->b + r->off, have))
			return false;
		l7_text(m->client, sizeof(m->client), r->b + r->off, have);
		rd_skip(r, l);
	}
	if (flexible(m->api, m->ver))
		rd_tags(r);
	return true;
}

static bool parse_request(struct kafka_state *st, struct kafka_msg *m, const uint8_t *b, size_t n)
{
	struct rd r = { b, n, 0, false };
	bool flex;

	if (!request_header(&r, m))
		return false;
	flex = flexible(m->api, m->ver);
	m->acks = -1;
	if (m->api == API_PRODUCE) {
		if (m->ver >= 3)
			rd_skip(&r, rd_len(&r, flex, 2)); /* transactional_id */
		m->acks = (int16_t)rd_int(&r, 2);
		if (r.end)
			m->acks = -1;
		rd_skip(&r, 4); /* timeout_ms */
		read_topic(&r, st, m, flex);
	} else if (m->api == API_FETCH) {
		if (m->ver <= 14)
			rd_skip(&r, 4); /* replica_id */
		rd_skip(&r, 8);		/* max_wait_ms, min_bytes */
		if (m->ver >= 3)
			rd_skip(&r, 4); /* max_bytes */
		if (m->ver >= 4)
			rd_skip(&r, 1); /* isolation_level */
		if (m->ver >= 7)
			rd_skip(&r, 8); /* session_id, session_epoch */
		read_topic(&r, st, m, flex);
	}
	return true;
}

static void set_error(struct kafka_msg *m, int16_t err, const char *msg)
{
	if (m->err || !err)
		return;
	m->err = err;
	if (msg && msg[0])
		snprintf(m->errmsg, sizeof(m->errmsg), "%s", msg);
	else
		snprintf(m->errmsg, sizeof(m->errmsg), "%s", kafka_error_name(err));
}

/* Skips a response's topic: its id from v13, else its name. */
static void skip_topic(struct rd *r, int ver, bool flex)
{
	rd_skip(r, ver >= 13 ? 16 : rd_len(r, flex, 2));
}

/* Walks the topics of a Produce or Fetch response and their partitions; fn reads one
 * partition. */
static void each_partition(struct rd *r, struct kafka_msg *m, bool flex,
			   void (*fn)(struct rd *r, struct kafka_msg *m, bool flex))
{
	int64_t nt = rd_count(r, flex);

	for (int64_t t = 0; t < nt && !r->end; t++) {
		int64_t np;

		skip_topic(r, m->ver, flex);
		np = rd_count(r, flex);
		for (int64_t i = 0; i < np && !r->end; i++) {
			fn(r, m, flex);
			if (flex)
				rd_tags(r);
		}
		if (flex)
			rd_tags(r);
	}
}

/* A Produce response's partition: its error_code (and error_message from v8). */
static void produce_partition(struct rd *r, struct kafka_msg *m, bool flex)
{
	char text[L7_ERRMSG_MAX] = "";
	int16_t err;

	rd_skip(r, 4); /* index */
	err = (int16_t)rd_int(r, 2);
	rd_skip(r, 8); /* base_offset */
	if (m->ver >= 2)
		rd_skip(r, 8); /* log_append_time_ms */
	if (m->ver >= 5)
		rd_skip(r, 8); /* log_start_offset */
	if (m->ver >= 8) {
		int64_t ne = rd_count(r, flex); /* record_errors */

		for (int64_t e = 0; e < ne && !r->end; e++) {
			rd_skip(r, 4);
			rd_skip(r, rd_len(r, flex, 2));
			if (flex)
				rd_tags(r);
		}
		if (!rd_str(r, flex, text, sizeof(text)))
			text[0] = 0;
	}
	if (!r->end)
		set_error(m, err, text);
}

/* A Fetch response's partition: its error_code, then the rest up to the next partition
 * (records follow each partition's header, so a long response's later ones are not seen). */
static void fetch_partition(struct rd *r, struct kafka_msg *m, bool flex)
{
	int16_t err;

	rd_skip(r, 4); /* partition_index */
	err = (int16_t)rd_int(r, 2);
	if (!r->end)
		set_error(m, err, NULL);
	rd_skip(r, 8); /* high_watermark */
	if (m->ver >= 4) {
		int64_t na;

		rd_skip(r, 8); /* last_stable_offset */
		if (m->ver >= 5)
			rd_skip(r, 8); /* log_start_offset */
		na = rd_count(r, flex); /* aborted_transactions */
		for (int64_t a = 0; a < na && !r->end; a++) {
			rd_skip(r, 16);
			if (flex)
				rd_tags(r);
		}
	}
	if (m->ver >= 11)
		rd_skip(r, 4); /* preferred_read_replica */
	rd_skip(r, rd_len(r, flex, 4)); /* records */
}

/* A Fetch response: the top-level error_code (v7+), then each partition's. */
static void fetch_response(struct rd *r, struct kafka_msg *m, bool flex)
{
	if (m->ver >= 1)
		rd_skip(r, 4); /* throttle_time_ms */
	if (m->ver >= 7) {
		int16_t err = (int16_t)rd_int(r, 2);

		if (!r->end)
			set_error(m, err, NULL);
		rd_skip(r, 4); /* session_id */
	}
	each_partition(r, m, flex, fetch_partition);
}

/* Metadata response from v10: learns each topic's id and name. */
static void metadata_response(struct rd *r, struct kafka_state *st, int ver, bool flex)
{
	int64_t n;
	char name[KAFKA_TOPIC_MAX];

	if (ver < 10)
		return;
	rd_skip(r, 4); /* throttle_time_ms */
	n = rd_count(r, flex);
	for (int64_t i = 0; i < n && !r->end; i++) {
		rd_skip(r, 4);			/* node_id */
		rd_skip(r, rd_len(r, flex, 2)); /* host */
		rd_skip(r, 4);			/* port */
		rd_skip(r, rd_len(r, flex, 2)); /* rack */
		if (flex)
			rd_tags(r);
	}
	rd_skip(r, rd_len(r, flex, 2)); /* cluster_id */
	rd_skip(r, 4);			/* controller_id */
	n = rd_count(r, flex);
	for (int64_t i = 0; i < n && !r->end; i++) {
		const uint8_t *id;
		bool named;
		int64_t np;

		rd_skip(r, 2); /* error_code */
		named = rd_str(r, flex, name, sizeof(name));
		if (!rd_need(r, 16))
			return;
		id = r->b + r->off;
		r->off += 16;
		if (named && name[0])
			topics_put(st->topics, id, name);
		rd_skip(r, 1); /* is_internal */
		np = rd_count(r, flex);
		for (int64_t k = 0; k < np && !r->end; k++) {
			rd_skip(r, 2 + 4 + 4 + 4); /* error_code, index, leader_id, leader_epoch */
			for (int a = 0; a < 3; a++)  /* replica, isr, offline replica node ids */
				rd_skip_each(r, rd_count(r, flex), 4);
			if (flex)
				rd_tags(r);
		}
		rd_skip(r, 4); /* topic_authorized_operations */
		if (flex)
			rd_tags(r);
	}
}

static bool parse_response(struct l7_parser *p, struct kafka_state *st, struct kafka_msg *m,
			   const uint8_t *b, size_t n)
{
	struct rd r = { b, n, 0, false };
	const struct l7_req *rq;
	bool flex;

	m->corr = (int32_t)rd_int(&r, 4);
	if (r.end || !l7_resp_boundary(p, (uint32_t)m->corr, &m->matched))
		return false;
	if (!m->matched)
		return true; /* its request came before the capture, or was lost */
	rq = l7_fifo_find(p, (uint32_t)m->corr);
	m->api = (int16_t)(rq->tag >> 16);
	m->ver = (int16_t)(rq->tag & 0xffff);
	/* ApiVersions responses keep header v0 so that any client can read them. */
	flex = flexible(m->api, m->ver);
	if (flex && m->api != API_VERSIONS)
		rd_tags(&r);
	if (m->api == API_PRODUCE)
		each_partition(&r, m, flex, produce_partition);
	else if (m->api == API_FETCH)
		fetch_response(&r, m, flex);
	else if (m->api == API_METADATA)
		metadata_response(&r, st, m->ver, flex);
	return true;
}

/* Whether buf starts a request: its size, a known api_key, a version and correlation_id that
 * fit, then (when the bytes go that far: brokers read the first 12 bytes alone) a client_id
 * that is null or text (clients name themselves: an empty one is legal but rare, and other
 * protocols' zeros look like it) and, for Produce, acks -1, 0 or 1. */
static bool kafka_is_request_msg(const uint8_t *buf, size_t cap)
{
	struct kafka_msg m;
	struct rd r = { buf + 4, cap - 4, 0, false };
	uint32_t size;

	if (cap < 12)
		return false;
	size = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	if (size < 10 || size > KAFKA_MAX_SIZE)
		return false;
	memset(&m, 0, sizeof(m));
	if (cap < 14)
		return header_fixed(&r, &m) && kafka_api_name(m.api);
	if (!request_header(&r, &m) || !kafka_api_name(m.api) || (buf[12] == 0 && buf[13] == 0))
		return false;
	if (m.api == API_PRODUCE && cap >= r.off + 4 + 8) {
		struct kafka_state st = { 0 };

		r.off = 0;
		r.end = false;
		memset(&m, 0, sizeof(m));
		return parse_request(&st, &m, buf + 4, cap - 4) && m.acks >= -1 && m.acks <= 1;
	}
	return true;
}

static bool kafka_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	return kafka_is_request_msg(buf, cap);
}

static int kafka_is_request(const uint8_t *buf, size_t n, bool udp)
{
	/* A response (size, correlation_id, body) cannot be told from a request for sure. */
	return kafka_is_request_msg(buf, n) ? 1 : -1;
}

static enum l7_step_rc kafka_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				  struct l7_step *out)
{
	struct kafka_state *st = p->state;
	struct kafka_msg *m = &st->m[req];
	uint64_t total;
	size_t have;
	uint32_t size;

	if (n < 4)
		return STEP_MORE;
	size = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	if (size < (req ? 8u : 4u) || size > KAFKA_MAX_SIZE)
		return STEP_BAD;
	total = 4 + (uint64_t)size;
	if (l7_wait_head(p, n, total))
		return STEP_MORE;
	have = n < total ? n : (size_t)total;
	memset(m, 0, sizeof(*m));
	if (!(req ? parse_request(st, m, buf + 4, have - 4)
		  : parse_response(p, st, m, buf + 4, have - 4)))
		return STEP_BAD;
	m->ok = true;
	return l7_step_whole(n, total, out);
}

static void kafka_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct kafka_state *st = p->state;
	struct kafka_msg *m = &st->m[req];
	const char *api;
	char num[16];

	if (!m->ok)
		return;
	m->ok = false;
	if (!req) {
		struct l7_resp r;

		l7_resp_init(&r, true, start, bytes);
		if (!m->matched)
			return;
		r.error = m->err != 0;
		r.status = m->err;
		memcpy(r.errmsg, m->errmsg, sizeof(r.errmsg));
		l7_resp_finish_id(p, &r, end, (uint32_t)m->corr);
		return;
	}
	api = kafka_api_name(m->api);
	if (!api) {
		snprintf(num, sizeof(num), "Api%d", m->api);
		api = num;
	}
	{
		struct l7_req one = { .start_ns = start, .end_ns = end, .bytes = bytes };
		/* acks=0: the broker answers nothing; the request is counted without response. */
		bool unanswered = m->api == API_PRODUCE && m->acks == 0;
		struct l7_req *rq = unanswered ? &one : l7_request(p, start, end, bytes);

		if (!rq)
			return;
		rq->id = (uint32_t)m->corr;
		rq->tag = (uint32_t)(uint16_t)m->api << 16 | (uint16_t)m->ver;
		l7_textf(rq->endpoint, sizeof(rq->endpoint), "%s%s%s", api, m->topic[0] ? " " : "",
			 m->topic);
		l7_textf(rq->detail, sizeof(rq->detail), "%s v%d%s%s client_id=%s correlation_id=%d%s",
			 api, m->ver, m->topic[0] ? " topic=" : "", m->topic, m->client, m->corr,
			 unanswered ? " acks=0" : "");
		if (unanswered)
			l7_give_up(p, rq);
	}
}

static void kafka_lost(struct l7_parser *p, bool req)
{
	struct kafka_state *st = p->state;

	st->m[req].ok = false;
}

const struct l7_ops l7_kafka_ops = {
	.infer = kafka_infer,
	.state_size = sizeof(struct kafka_state),
	.is_request = kafka_is_request,
	.step = kafka_step,
	.end = kafka_end,
	.lost = kafka_lost,
	.pairs_by_id = true,
};
