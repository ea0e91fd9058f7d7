/* RocketMQ remoting: each frame is a big-endian length, then the serialize type (high byte: 0
 * JSON, 1 ROCKETMQ binary) with the header's length, the header and the body. The header's
 * flag says response (bit 0) and oneway (bit 1); responses pair with requests by `opaque`. The
 * key is the request code's name and the topic (`SEND_MESSAGE_V2 orders`); an error is a
 * response code != 0 except the pull flow's PULL_NOT_FOUND (19), PULL_RETRY_IMMEDIATELY (20) and
 * PULL_OFFSET_MOVED (21). JSON headers are read with jansson. Requests the server sends to the
 * client on the same connection (CHECK_TRANSACTION_STATE, ...) are not counted. */
#include "parser.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define RMQ_MAX_SIZE (64u << 20)
#define FLAG_RESPONSE 1u
#define FLAG_ONEWAY 2u
#define TYPE_JSON 0
#define TYPE_ROCKETMQ 1

static const struct {
	int code;
	const char *name;
} codes[] = {
	{ 10, "SEND_MESSAGE" },
	{ 11, "PULL_MESSAGE" },
	{ 12, "QUERY_MESSAGE" },
	{ 13, "QUERY_BROKER_OFFSET" },
	{ 14, "QUERY_CONSUMER_OFFSET" },
	{ 15, "UPDATE_CONSUMER_OFFSET" },
	{ 17, "UPDATE_AND_CREATE_TOPIC" },
	{ 21, "GET_ALL_TOPIC_CONFIG" },
	{ 22, "GET_TOPIC_CONFIG_LIST" },
	{ 23, "GET_TOPIC_NAME_LIST" },
	{ 25, "UPDATE_BROKER_CONFIG" },
	{ 26, "GET_BROKER_CONFIG" },
	{ 28, "GET_BROKER_RUNTIME_INFO" },
	{ 29, "SEARCH_OFFSET_BY_TIMESTAMP" },
	{ 30, "GET_MAX_OFFSET" },
	{ 31, "GET_MIN_OFFSET" },
	{ 32, "GET_EARLIEST_MSG_STORETIME" },
	{ 33, "VIEW_MESSAGE_BY_ID" },
	{ 34, "HEART_BEAT" },
	{ 35, "UNREGISTER_CLIENT" },
	{ 36, "CONSUMER_SEND_MSG_BACK" },
	{ 37, "END_TRANSACTION" },
	{ 38, "GET_CONSUMER_LIST_BY_GROUP" },
	{ 39, "CHECK_TRANSACTION_STATE" },
	{ 40, "NOTIFY_CONSUMER_IDS_CHANGED" },
	{ 41, "LOCK_BATCH_MQ" },
	{ 42, "UNLOCK_BATCH_MQ" },
	{ 43, "GET_ALL_CONSUMER_OFFSET" },
	{ 45, "GET_ALL_DELAY_OFFSET" },
	{ 46, "CHECK_CLIENT_CONFIG" },
	{ 100, "PUT_KV_CONFIG" },
	{ 101, "GET_KV_CONFIG" },
	{ 102, "DELETE_KV_CONFIG" },
	{ 103, "REGISTER_BROKER" },
	{ 104, "UNREGISTER_BROKER" },
	{ 105, "GET_ROUTEINFO_BY_TOPIC" },
	{ 106, "GET_BROKER_CLUSTER_INFO" },
	{ 200, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP" },
	{ 201, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG" },
	{ 202, "GET_TOPIC_STATS_INFO" },
	{ 203, "GET_CONSUMER_CONNECTION_LIST" },
	{ 204, "GET_PRODUCER_CONNECTION_LIST" },
	{ 205, "WIPE_WRITE_PERM_OF_BROKER" },
	{ 206, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER" },
	{ 207, "DELETE_SUBSCRIPTIONGROUP" },
	{ 208, "GET_CONSUME_STATS" },
	{ 215, "DELETE_TOPIC_IN_BROKER" },
	{ 216, "DELETE_TOPIC_IN_NAMESRV" },
	{ 307, "GET_CONSUMER_RUNNING_INFO" },
	{ 310, "SEND_MESSAGE_V2" },
	{ 320, "SEND_BATCH_MESSAGE" },
	{ 321, "QUERY_CONSUME_QUEUE" },
	{ 323, "SEND_REPLY_MESSAGE_V2" },
	{ 324, "PUSH_REPLY_MESSAGE_TO_CLIENT" },
};

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint16_t be16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

struct rmq_hdr {
	int code;
	uint32_t opaque, flag;
	char topic[L7_ENDPOINT_MAX - 48];
	char group[64];
	char remark[L7_ERRMSG_MAX];
};

/* Keeps extFields' topic ("topic"; "b" in SEND_MESSAGE_V2's short names) and group. */
static void ext_field(struct rmq_hdr *h, const char *k, size_t kl, const char *v, size_t vl)
{
	if ((kl == 5 && !memcmp(k, "topic", 5)) || (kl == 1 && k[0] == 'b'))
		l7_text(h->topic, sizeof(h->topic), v, vl);
	else if ((kl == 13 && !memcmp(k, "producerGroup", 13)) ||
		 (kl == 13 && !memcmp(k, "consumerGroup", 13)) || (kl == 1 && k[0] == 'a'))
		l7_text(h->group, sizeof(h->group), v, vl);
}

static bool json_header(struct rmq_hdr *h, const uint8_t *b, size_t n)
{
	json_t *j = json_loadb((const char *)b, n, JSON_DISABLE_EOF_CHECK, NULL), *v, *ext;
	const char *k;
	bool ok;

	if (!j)
		return false;
	v = json_object_get(j, "code");
	ok = json_is_integer(v) && json_is_integer(json_object_get(j, "opaque"));
	if (ok) {
		h->code = (int)json_integer_value(v);
		h->opaque = (uint32_t)json_integer_value(json_object_get(j, "opaque"));
		h->flag = (uint32_t)json_integer_value(json_object_get(j, "flag"));
		v = json_object_get(j, "remark");
		if (json_is_string(v))
			l7_text(h->remark, sizeof(h->remark), json_string_value(v),
				json_string_length(v));
		ext = json_object_get(j, "extFields");
		json_object_foreach(ext, k, v)
			if (json_is_string(v))
				ext_field(h, k, strlen(k), json_string_value(v),
					  json_string_length(v));
	}
	json_decref(j);
	return ok;
}

/* The ROCKETMQ binary header: code int16, language int8, version int16, opaque int32, flag
 * int32, remark (int32 length, bytes), extFields (int32 length, then int16 key length, key,
 * int32 value length, value). */
static bool binary_header(struct rmq_hdr *h, const uint8_t *b, size_t n)
{
	size_t off = 13, end;
	uint32_t l;

	if (n < 17 || b[2] > 32)
		return false;
	h->code = (int16_t)be16(b);
	h->opaque = be32(b + 5);
	h->flag = be32(b + 9);
	l = be32(b + 13);
	off = 17;
	if (l > n - off)
		return l < RMQ_MAX_SIZE; /* cut: what came is enough to pair */
	l7_text(h->remark, sizeof(h->remark), b + off, l);
	off += l;
	if (off + 4 > n)
		return true;
	l = be32(b + off);
	off += 4;
	end = l < n - off ? off + l : n;
	while (off + 2 <= end) {
		size_t kl = be16(b + off), vl;

		if (off + 2 + kl + 4 > end)
			break;
		vl = be32(b + off + 2 + kl);
		if (off + 6 + kl + vl > end)
			break;
		ext_field(h, (const char *)b + off + 2, kl, (const char *)b + off + 6 + kl, vl);
		off += 6 + kl + vl;
	}
	return true;
}

/* The frame at b (n bytes at hand): its total size and header. */
static bool frame(const uint8_t *b, size_t n, uint64_t *total, struct rmq_hdr *h, bool *whole)
{
	uint32_t len, hl;
	uint8_t type;

	*whole = false;
	if (n < 8)
		return false;
	len = be32(b);
	type = b[4];
	hl = be32(b + 4) & 0xffffff;
	if (len < 4 + hl || len > RMQ_MAX_SIZE || !hl || (type != TYPE_JSON && type != TYPE_ROCKETMQ))
		return false;
	*total = 4 + (uint64_t)len;
	if (n < 8 + (size_t)hl)
		return true; /* header not all here */
	*whole = true;
	memset(h, 0, sizeof(*h));
	if (type == TYPE_JSON)
		return b[8] == '{' && json_header(h, b + 8, hl);
	return binary_header(h, b + 8, hl);
}

static int rmq_is_request(const uint8_t *buf, size_t n, bool udp)
{
	struct rmq_hdr h;
	uint64_t total;
	bool whole;

	if (!frame(buf, n, &total, &h, &whole) || !whole)
		return -1;
	return !(h.flag & FLAG_RESPONSE);
}

static bool rmq_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, uint16_t server_port)
{
	return rmq_is_request(buf, cap, false) == 1;
}

struct rmq_state {
	struct rmq_hdr h[2]; /* [0] responses, [1] requests */
	bool ok[2];	     /* a message of ours was parsed */
};

static const char *code_name(int code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return codes[i].name;
	return NULL;
}

static enum l7_step_rc rmq_step(struct l7_parser *p, bool req, const uint8_t *buf, size_t n,
				struct l7_step *out)
{
	struct rmq_state *st = p->state;
	struct rmq_hdr *h = &st->h[req];
	uint64_t total;
	bool whole, waiting;

	if (n < 8)
		return l7_wait_head(p, n, 8) ? STEP_MORE : STEP_BAD;
	if (!frame(buf, n, &total, h, &whole))
		return STEP_BAD;
	if (l7_wait_head(p, n, total))
		return STEP_MORE;
	if (!whole)
		return STEP_BAD; /* the header was not captured */
	/* Requests travel both ways: only those of the direction that carries ours count. */
	st->ok[req] = !(h->flag & FLAG_RESPONSE) == req;
	if (!req && st->ok[req] && !l7_resp_boundary(p, h->opaque, &waiting))
		return STEP_BAD;
	return l7_step_whole(n, total, out);
}

static void rmq_end(struct l7_parser *p, bool req, uint64_t start, uint64_t end, uint64_t bytes)
{
	struct rmq_state *st = p->state;
	struct rmq_hdr *h = &st->h[req];
	const char *name;
	char num[16];

	if (!st->ok[req])
		return;
	st->ok[req] = false;
	if (!req) {
		struct l7_resp r;

		l7_resp_init(&r, true, start, bytes);
		r.status = h->code;
		r.error = h->code != 0 && (h->code < 19 || h->code > 21);
		if (r.error)
			l7_textf(r.errmsg, sizeof(r.errmsg), "%d%s%s", h->code,
				 h->remark[0] ? ": " : "", h->remark);
		l7_resp_finish_id(p, &r, end, h->opaque);
		return;
	}
	name = code_name(h->code);
	if (!name) {
		snprintf(num, sizeof(num), "CODE_%d", h->code);
		name = num;
	}
	{
		struct l7_req one = { .start_ns = start, .end_ns = end, .bytes = bytes };
		bool oneway = h->flag & FLAG_ONEWAY;
		struct l7_req *rq = oneway ? &one : l7_request(p, start, end, bytes);

		if (!rq)
			return;
		rq->id = h->opaque;
		l7_textf(rq->endpoint, sizeof(rq->endpoint), "%s%s%s", name, h->topic[0] ? " " : "",
			 h->topic);
		l7_textf(rq->detail, sizeof(rq->detail), "%s code=%d opaque=%u%s%s%s%s%s", name,
			 h->code, h->opaque, h->topic[0] ? " topic=" : "", h->topic,
			 h->group[0] ? " group=" : "", h->group, oneway ? " oneway" : "");
		if (oneway)
			l7_give_up(p, rq); /* no response comes */
	}
}

static void rmq_lost(struct l7_parser *p, bool req)
{
	struct rmq_state *st = p->state;

	st->ok[req] = false;
}

const struct l7_ops l7_rocketmq_ops = {
	.infer = rmq_infer,
	.state_size = sizeof(struct rmq_state),
	.is_request = rmq_is_request,
	.step = rmq_step,
	.end = rmq_end,
	.lost = rmq_lost,
	.pairs_by_id = true,
};
